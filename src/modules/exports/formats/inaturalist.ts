/**
 * iNaturalist's CSV import (FORMATS.md): one observation per detection, the columns in the
 * order iNaturalist's template lists them, with its header row. Sounds cannot travel in the
 * CSV; the Description links the recording so the observer can attach it afterwards.
 *
 * Date observed is `YYYY-MM-DD HH:MM:SS ±HH:MM`: the local wall-clock time the birder expects
 * to see, plus the offset, so iNaturalist (which otherwise reads a bare time in the uploader's
 * profile zone) places the observation at the right instant.
 */
import type { ExportContext, RowSource } from '../types.ts';
import { conf, coord, csvLine, isGeneralised, isOrganism, localTime, type SkipTally } from './shared.ts';

export const INATURALIST_COLUMNS = [
  'Taxon name',
  'Date observed',
  'Description',
  'Place name',
  'Latitude / y coord / northing',
  'Longitude / x coord / easting',
  'Tags',
  'Geoprivacy',
] as const;

export type Geoprivacy = 'open' | 'obscured' | 'private';

export interface InaturalistOptions {
  /** Default `open`: a fixed recorder's place is the team's to share or obscure. */
  geoprivacy?: Geoprivacy;
  /** Collects the rows left out (rejected detections, sounds that are no species). */
  skipped?: SkipTally;
}

export async function* inaturalistCsv(rows: RowSource, ctx: ExportContext, opts: InaturalistOptions = {}): AsyncGenerator<string> {
  const geoprivacy = opts.geoprivacy ?? 'open';
  yield csvLine(INATURALIST_COLUMNS);
  for await (const batch of rows) {
    let out = '';
    for (const r of batch) {
      // A rejected identification is known to be wrong: it must not become an observation.
      if (r.verificationStatus === 'rejected') {
        opts.skipped?.add(r, 'rejected');
        continue;
      }
      if (!isOrganism(r)) {
        opts.skipped?.add(r, 'not_a_species');
        continue;
      }
      const t = localTime(r.detectedAt, ctx.timeZone);
      const generalised = isGeneralised(r);
      const description =
        `${r.commonName}, detected acoustically by Chorus: confidence ${conf(r.confidence)} ` +
        `(calibrated ${conf(r.calibratedConfidence)}), model ${r.modelId}. ` +
        (generalised
          ? 'Sensitive species: position rounded to 0.1 degree, time to the hour, recorder and recording withheld.'
          : `Detection: ${ctx.detectionUrl(r.id)} Audio: ${ctx.audioUrl(r.chunkId)}`);
      out += csvLine([
        r.scientificName,
        `${t.date} ${t.time} ${t.offset}`,
        description,
        r.satelliteName,
        coord(r.latitude),
        coord(r.longitude),
        'Chorus,acoustic',
        // iNaturalist obscures a sensitive species' place further unless the team asked for private.
        generalised && geoprivacy === 'open' ? 'obscured' : geoprivacy,
      ]);
    }
    if (out) yield out;
  }
}
