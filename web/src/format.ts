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
