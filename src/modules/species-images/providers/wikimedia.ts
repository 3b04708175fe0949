import { allowedLicence, plainCredit } from './licence.ts';
import type { Fetcher } from './fetch.ts';
import type { PhotoCandidate, PhotoProvider } from './types.ts';

interface ImageInfo {
  url?: string;
  thumburl?: string;
  descriptionurl?: string;
  mime?: string;
  extmetadata?: Record<string, { value?: string } | undefined>;
}
interface Page {
  title?: string;
  index?: number;
  imageinfo?: ImageInfo[];
}

/**
 * Wikimedia Commons (`IMAGES_WIKIMEDIA_URL`, default https://commons.wikimedia.org): a file
 * search for the scientific name with image info in one request; the licence and author come
 * from each file's extmetadata. A thumbnail of at most 1600 px is fetched, not the original.
 */
export function wikimediaProvider(baseUrl: string, http: Fetcher): PhotoProvider {
  return {
    name: 'wikimedia',
    async find(scientificName, limit) {
      const q = new URLSearchParams({
        action: 'query',
        format: 'json',
        generator: 'search',
        gsrsearch: `"${scientificName}" filetype:bitmap`,
        gsrnamespace: '6',
        gsrlimit: String(Math.min(limit * 3, 30)),
        prop: 'imageinfo',
        iiprop: 'url|mime|extmetadata',
        iiurlwidth: '1600',
      });
      const body = (await http.json(`${baseUrl}/w/api.php?${q}`)) as { query?: { pages?: Record<string, Page> } };
      const pages = Object.values(body.query?.pages ?? {}).sort((a, b) => (a.index ?? 0) - (b.index ?? 0));
      const out: PhotoCandidate[] = [];
      for (const p of pages) {
        const info = p.imageinfo?.[0];
        const meta = info?.extmetadata ?? {};
        const licence = allowedLicence(meta.LicenseShortName?.value);
        const author = plainCredit(meta.Artist?.value);
        const imageUrl = info?.thumburl ?? info?.url;
        if (!licence || !author || !imageUrl || !p.title || !/^image\/(jpeg|png|webp)$/.test(info?.mime ?? '')) continue;
        out.push({
          provider: 'wikimedia',
          sourceId: p.title,
          imageUrl,
          author,
          licence: licence.name,
          licenceUrl: meta.LicenseUrl?.value || licence.url,
          sourceUrl: info?.descriptionurl ?? `${baseUrl}/wiki/${encodeURIComponent(p.title)}`,
        });
        if (out.length >= limit) break;
      }
      return out;
    },
  };
}
