/**
 * The licences a stored photo may carry (docs/decisions.md "Species photos"): CC0, CC BY and
 * CC BY-SA, any version. NC is refused: a hub may be run by a company or show photos on a public
 * page that earns money, and NC forbids that use. ND is refused: a square crop is an adaptation.
 * Unknown and "all rights reserved" photos are refused too.
 */
export interface Licence {
  /** As shown: "CC0 1.0", "CC BY 4.0", "CC BY-SA 3.0". */
  name: string;
  url: string;
}

const CC0 = /^(?:cc[\s_-]?0|cc[\s_-]?zero)(?:[\s_-]?(1\.0))?$/i;
const BY = /^cc[\s_-]by(?:[\s_-](sa))?(?:[\s_-]?(\d\.\d)(?:[\s_-][a-z]{2})?)?$/i;

/** Normalises a provider's licence string ("cc-by-sa", "CC BY-SA 4.0", "CC0"); null when not allowed. */
export function allowedLicence(raw: string | null | undefined, defaultVersion = '4.0'): Licence | null {
  const s = (raw ?? '').trim();
  if (!s) return null;
  if (CC0.test(s)) return { name: 'CC0 1.0', url: 'https://creativecommons.org/publicdomain/zero/1.0/' };
  const m = BY.exec(s);
  if (!m) return null;
  const sa = Boolean(m[1]);
  const version = m[2] ?? defaultVersion;
  return {
    name: `CC BY${sa ? '-SA' : ''} ${version}`,
    url: `https://creativecommons.org/licenses/${sa ? 'by-sa' : 'by'}/${version}/`,
  };
}

/** Upstream credits may be HTML (Commons' Artist field): tags dropped, the common entities decoded, one line. */
export function plainCredit(raw: string | null | undefined, max = 200): string {
  const text = (raw ?? '')
    .replace(/<[^>]*>/g, ' ')
    .replace(/&nbsp;/g, ' ')
    .replace(/&quot;/g, '"')
    .replace(/&#0?39;|&apos;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ')
    .trim();
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
