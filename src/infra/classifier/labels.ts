import { ModelError, type ModelLabel } from './types.ts';

/**
 * Column names a class list saved as CSV starts with (Perch's `ebird2021`, and the usual names of
 * a label column): such a first line names the column, not the first output.
 */
const CSV_HEADERS = new Set([
  'ebird2021',
  'ebird',
  'ebird_code',
  'inat2024_fsd50k',
  'label',
  'labels',
  'class',
  'classes',
  'species',
  'scientific_name',
]);

/**
 * Parses a labels file: one label per line, BirdNET's `Scientific name_Common name` split at the
 * first `_`, or one eBird code or name per line (Perch's class lists, also as a one-column CSV
 * whose first line is the column's name). A line without `_` is taken as both names (custom
 * classifiers sometimes have such labels). Trailing blank lines are ignored; a blank line in
 * between is an error, since it would shift every later label off its output.
 */
export function parseLabels(text: string): ModelLabel[] {
  const lines = text
    .replace(/^\uFEFF/, '')
    .split('\n')
    .map((l) => l.replace(/\r$/, '').trim());
  while (lines.length && lines[lines.length - 1] === '') lines.pop();
  if (lines.length > 1 && CSV_HEADERS.has(lines[0].replace(/^"|"$/g, '').toLowerCase())) lines.shift();
  return lines.map((line, i) => {
    if (line === '') throw new ModelError(`labels: line ${i + 1} is empty`);
    const cut = line.indexOf('_');
    return cut > 0
      ? { label: line, scientificName: line.slice(0, cut), commonName: line.slice(cut + 1) }
      : { label: line, scientificName: line, commonName: line };
  });
}
