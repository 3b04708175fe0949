import { Type, type Static } from 'typebox';
import { Nullable } from '../../core/schemas.ts';

export const SlugParams = Type.Object({ slug: Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9_-]+$' }) });
export const LangQuery = Type.Object({
  lang: Type.Optional(Type.String({ minLength: 2, maxLength: 20, pattern: '^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$' })),
});

/** A species photo with its credit, as the species photos module gives it. */
export const SpeciesPhoto = Type.Object({
  /** The hub's public square of the photo (a path on this hub). */
  url: Type.String(),
  /** The author, as the licence asks to credit them. */
  credit: Type.String(),
  licence: Type.String(),
  licenceUrl: Nullable(Type.String()),
  /** Where the photo comes from (the provider's page). */
  sourceUrl: Nullable(Type.String()),
});
export type SpeciesPhoto = Static<typeof SpeciesPhoto>;

const SpeciesName = { code: Type.String(), commonName: Type.String(), scientificName: Type.String() };

/** The response schema also serialises: a field not named here (a position, a satellite) never reaches a visitor. */
export const PublicPage = Type.Object({
  slug: Type.String(),
  name: Type.String(),
  description: Type.String(),
  since: Type.String({ format: 'date-time' }),
  /** The language of the species names (the catalog's, English when it holds none). */
  lang: Type.String(),
  timeZone: Type.String(),
  counts: Type.Object({ species: Type.Integer(), detections: Type.Integer(), devices: Type.Integer() }),
  topSpecies: Type.Array(Type.Object({ ...SpeciesName, detections: Type.Integer(), photo: Nullable(SpeciesPhoto) })),
  /** Species first heard by the team in the last 30 days, by the team's local day, newest first. */
  recentFirsts: Type.Array(Type.Object({ date: Type.String(), species: Type.Array(Type.Object(SpeciesName)) })),
  /** The last 30 local days of the team (time_zone), oldest first, today last. */
  dailyTotals: Type.Array(Type.Object({ date: Type.String(), detections: Type.Integer() })),
  /** Town names of the team's satellites; null unless the team opts in (town_opt_in). */
  towns: Nullable(Type.Array(Type.String())),
  /** How to join, when the team takes newcomers and the hub lists teams. */
  join: Nullable(
    Type.Object({ policy: Type.Union([Type.Literal('listed'), Type.Literal('request'), Type.Literal('open')]), teamId: Type.String() }),
  ),
  generatedAt: Type.String({ format: 'date-time' }),
});
export type PublicPage = Static<typeof PublicPage>;
