import { ModelError, type ModelLabel } from './types.ts';

/**
 * Parses a BirdNET labels file: one label per line, `Scientific name_Common name`, split at the
 * first `_`. A line without `_` is taken as both names (custom classifiers sometimes have such
 * labels). Trailing blank lines are ignored; a blank line in between is an error, since it
 * would shift every later label off its output.
 */
export function parseLabels(text: string): ModelLabel[] {
  const lines = text
    .replace(/^\uFEFF/, '')
    .split('\n')
    .map((l) => l.replace(/\r$/, '').trim());
  while (lines.length && lines[lines.length - 1] === '') lines.pop();
  return lines.map((line, i) => {
    if (line === '') throw new ModelError(`labels: line ${i + 1} is empty`);
    const cut = line.indexOf('_');
    return cut > 0
      ? { label: line, scientificName: line.slice(0, cut), commonName: line.slice(cut + 1) }
      : { label: line, scientificName: line, commonName: line };
  });
}
