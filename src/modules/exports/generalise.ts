/**
 * Sensitive species in a file that leaves the team (issue 33), for the writers over rows: each
 * such row generalised, and moved to the end of its hour. The database's lines do the same in SQL
 * (formats/lines-sql.ts).
 */
import type { ExportRow, RowSource } from './types.ts';
import { coarsenTime, reorderCoarsened, toGrid, WITHHELD } from '../sensitive/service.ts';

/**
 * A sensitive species' row as it may leave the team (src/modules/sensitive/service.ts holds the
 * rule): its position on the 0.1° grid, its time coarsened to the hour (start and end: the
 * hour it was heard in), no satellite (name or id) and no chunk (and so no audio link and no
 * recording), which other rows of the same file would place exactly.
 */
export function generaliseRow(r: ExportRow): ExportRow {
  const when = coarsenTime(r.detectedAt, 'outside');
  return {
    ...r,
    detectedAt: when.start,
    endAt: when.end,
    latitude: toGrid(r.latitude),
    longitude: toGrid(r.longitude),
    satelliteId: WITHHELD,
    satelliteName: WITHHELD,
    chunkId: '',
  };
}

/** Sensitive rows generalised and moved to the end of their hour, where their place in the file says nothing. */
export function generalised(source: RowSource, codes: ReadonlySet<string>): RowSource {
  if (codes.size === 0) return source;
  const isSensitive = (r: ExportRow) => codes.has(r.speciesCode.toLowerCase());
  return (async function* () {
    for await (const batch of reorderCoarsened(source, isSensitive, 'outside'))
      yield batch.map((r) => (isSensitive(r) ? generaliseRow(r) : r));
  })();
}
