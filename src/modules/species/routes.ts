/**
 * Species names in the catalog's languages (spec §4 Species: /species/languages and
 * /species/translate). Names belong to no team, so any signed-in caller may translate. Species
 * that only an uploaded model knows (species table, source 'model') have their label's name in
 * every language, as the catalog's untranslated names fall back to English.
 */
import { Type } from 'typebox';
import { access, defineRoute, type RouteDef } from '../../core/permissions.ts';
import { badRequest, notFound, validationFailed } from '../../core/errors.ts';
import type { SpeciesCatalog } from './catalog.ts';
import type { SpeciesService } from './service.ts';
import { Languages, SpeciesNames, SpeciesNamesBatch } from './schemas.ts';

const MAX_LANGUAGES = 10;
const MAX_BULK = 200;

export function speciesRoutes(catalog: () => SpeciesCatalog, table: Pick<SpeciesService, 'find'>): RouteDef[] {
  function languagesOf(list: string): string[] {
    const tags = list
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    if (tags.length === 0 || tags.length > MAX_LANGUAGES) throw validationFailed(`languages takes 1 to ${MAX_LANGUAGES} language tags`);
    return tags.map((tag) => {
      const lang = catalog().resolveLanguage(tag);
      if (!lang) throw badRequest(`No species names in language ${JSON.stringify(tag)}`, 'UNKNOWN_LANGUAGE');
      return lang;
    });
  }

  async function translate(code: string, langs: string[]) {
    const c = catalog();
    const s = c.byCode(code);
    if (s)
      return {
        speciesCode: s.code,
        scientificName: s.scientificName,
        names: Object.fromEntries(langs.map((l) => [l, c.commonName(s, l)!])),
      };
    const own = code.startsWith('x-') ? await table.find(code) : null;
    if (!own) return null;
    return { speciesCode: own.code, scientificName: own.scientificName, names: Object.fromEntries(langs.map((l) => [l, own.commonName])) };
  }

  return [
    defineRoute({
      method: 'GET',
      url: '/species/languages',
      action: 'species.languages',
      access: access.public,
      audit: [],
      summary: 'Languages the species names are available in',
      tags: ['species'],
      schema: { response: { 200: Languages } },
      handler: async () => ({ languages: [...catalog().languages] }),
    }),

    defineRoute({
      method: 'GET',
      url: '/species/translate',
      action: 'species.translate',
      access: access.authenticated,
      audit: [],
      summary: 'One species in the given languages (comma-separated tags; regional tags fall back to the language)',
      tags: ['species'],
      schema: {
        querystring: Type.Object(
          { speciesCode: Type.String({ minLength: 1, maxLength: 64 }), languages: Type.String({ minLength: 1, maxLength: 200 }) },
          { additionalProperties: false },
        ),
        response: { 200: SpeciesNames },
      },
      handler: async ({ query }) => {
        const t = await translate(query.speciesCode, languagesOf(query.languages));
        if (!t) throw notFound('No such species');
        return t;
      },
    }),

    defineRoute({
      method: 'POST',
      url: '/species/translate',
      action: 'species.translate.bulk',
      access: access.authenticated,
      audit: [],
      summary: 'Many species in the given languages; unknown codes are listed apart',
      tags: ['species'],
      schema: {
        body: Type.Object(
          {
            speciesCodes: Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { minItems: 1, maxItems: MAX_BULK }),
            languages: Type.Array(Type.String({ minLength: 1, maxLength: 20 }), { minItems: 1, maxItems: MAX_LANGUAGES }),
          },
          { additionalProperties: false },
        ),
        response: { 200: SpeciesNamesBatch },
      },
      handler: async ({ body }) => {
        const langs = languagesOf(body.languages.join(','));
        const species = [];
        const unknown = [];
        for (const code of new Set(body.speciesCodes)) {
          const t = await translate(code, langs);
          if (t) species.push(t);
          else unknown.push(code);
        }
        return { species, unknown };
      },
    }),
  ];
}
