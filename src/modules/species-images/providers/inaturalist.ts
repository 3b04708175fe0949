import { allowedLicence, plainCredit } from './licence.ts';
import type { Fetcher } from './fetch.ts';
import type { PhotoCandidate, PhotoProvider } from './types.ts';

interface TaxonPhoto {
  photo?: { id?: number; license_code?: string | null; attribution?: string; large_url?: string; medium_url?: string; url?: string };
}

/**
 * iNaturalist taxon photos (`IMAGES_INATURALIST_URL`, default https://api.inaturalist.org):
 * the taxon found by its scientific name, then its curated taxon photos. Licence codes are
 * version-less ("cc-by-sa"); iNaturalist's licences are the 4.0 ones.
 */
export function inaturalistProvider(baseUrl: string, http: Fetcher, siteUrl = 'https://www.inaturalist.org'): PhotoProvider {
  return {
    name: 'inaturalist',
    async find(scientificName, limit) {
      const q = new URLSearchParams({ q: scientificName, rank: 'species', is_active: 'true', per_page: '5' });
      const found = (await http.json(`${baseUrl}/v1/taxa?${q}`)) as { results?: Array<{ id?: number; name?: string }> };
      const taxon = (found.results ?? []).find((t) => t.name?.toLowerCase() === scientificName.toLowerCase()) ?? found.results?.[0];
      if (!taxon?.id || !Number.isInteger(taxon.id)) return [];
      const full = (await http.json(`${baseUrl}/v1/taxa/${taxon.id}`)) as { results?: Array<{ taxon_photos?: TaxonPhoto[] }> };
      const out: PhotoCandidate[] = [];
      for (const tp of full.results?.[0]?.taxon_photos ?? []) {
        const p = tp.photo;
        const licence = allowedLicence(p?.license_code);
        const author = plainCredit((p?.attribution ?? '').replace(/^\(c\)\s*/i, '').replace(/,\s*(some|no) rights reserved.*$/i, ''));
        const imageUrl = p?.large_url ?? p?.medium_url;
        if (!p?.id || !licence || !author || !imageUrl) continue;
        out.push({
          provider: 'inaturalist',
          sourceId: String(p.id),
          imageUrl,
          author,
          licence: licence.name,
          licenceUrl: licence.url,
          sourceUrl: `${siteUrl}/photos/${p.id}`,
        });
        if (out.length >= limit) break;
      }
      return out;
    },
  };
}
