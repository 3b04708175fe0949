/** Number formats shared by the dashboard's views, outside React so tests can call them. */

const BYTE_UNITS = ['byte', 'kilobyte', 'megabyte', 'gigabyte', 'terabyte', 'petabyte'] as const;

/**
 * A byte count in the person's language with SI units (1 kB = 1000 B), e.g. "1.5 GB" / "1,5 GB":
 * Intl names the units, so both languages read them natively; negative counts keep their sign.
 * The dashboard's one byte formatter (docs/decisions.md); views reach it through useFormat().bytes.
 */
export function formatBytes(n: number | null | undefined, lang: string): string {
  if (n === null || n === undefined) return '—';
  let v = Math.abs(n);
  let i = 0;
  while (v >= 1000 && i < BYTE_UNITS.length - 1) {
    v /= 1000;
    i++;
  }
  const text = new Intl.NumberFormat(lang, {
    style: 'unit',
    unit: BYTE_UNITS[i],
    unitDisplay: 'short',
    maximumFractionDigits: i === 0 ? 0 : v < 10 ? 2 : 1,
  }).format(v);
  return n < 0 ? `−${text}` : text;
}

/**
 * A number with exactly `digits` decimals in the person's language: "0.912" / "0,912" (issue 36
 * point 5: no toFixed on screen, whose decimal point is English in every language).
 */
export function formatDecimal(n: number | null | undefined, lang: string, digits: number): string {
  if (n === null || n === undefined || !Number.isFinite(n)) return '—';
  return new Intl.NumberFormat(lang, { minimumFractionDigits: digits, maximumFractionDigits: digits }).format(n);
}

/** A share 0–1 as a percentage in the person's language: "75%" / "75 %". */
export function formatPercent(x: number | null | undefined, lang: string, digits = 0): string {
  if (x === null || x === undefined || !Number.isFinite(x)) return '—';
  return new Intl.NumberFormat(lang, { style: 'percent', maximumFractionDigits: digits }).format(x);
}

/**
 * A position as latitude and longitude with `digits` decimals. Where the decimal mark is a comma
 * the pair is set apart by a semicolon, so "52,52; 13,40" never reads as four numbers.
 */
export function formatCoords(lat: number, lon: number, lang: string, digits: number): string {
  const comma = formatDecimal(0.5, lang, 1).includes(',');
  return `${formatDecimal(lat, lang, digits)}${comma ? ';' : ','} ${formatDecimal(lon, lang, digits)}`;
}
