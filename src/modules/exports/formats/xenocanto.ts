/**
 * A zip to prepare xeno-canto uploads (FORMATS.md): metadata.csv, one line per recording with
 * the submission form's fields, and the recordings as audio/<detectionId>.wav, stored exactly
 * as audio() returns them (no re-encoding, no compression: WAV barely deflates).
 *
 * Sound type is `uncertain`: a model names the species, not whether it sang or called.
 * Country and elevation are empty: a satellite carries coordinates only.
 * Rows left out (audio gone, rejected, not a species, a sensitive species' withheld recording) are listed in missing.txt
 * (detection_id,species_code,reason), which exists only when something was left out.
 */
import type { Readable } from 'node:stream';
import type { ExportContext, ExportRow, RowSource } from '../types.ts';
import { conf, coord, csvLine, isGeneralised, isOrganism, localTime, type SkipReason, type SkipTally } from './shared.ts';
import { type TempText, zipStream } from './zip.ts';

export const XENO_CANTO_COLUMNS = [
  'file',
  'recordist',
  'date',
  'time',
  'country',
  'location',
  'latitude',
  'longitude',
  'elevation',
  'species',
  'subspecies',
  'sound_type',
  'remarks',
  'equipment',
  'recording_method',
  'animal_seen',
  'playback_used',
  'license',
] as const;

export type AudioSource = (chunkId: string) => Promise<Buffer | null>;

/** A file name from an id: ids are ours, but a path must never leave audio/. */
const safe = (id: string) => id.replace(/[^A-Za-z0-9._-]/g, '_');

function metadataLine(r: ExportRow, file: string, ctx: ExportContext): string {
  const t = localTime(r.detectedAt, ctx.timeZone);
  const remarks =
    `${r.commonName}, detected by Chorus: confidence ${conf(r.confidence)} (calibrated ${conf(r.calibratedConfidence)}), ` +
    `model ${r.modelId}. ${ctx.detectionUrl(r.id)}`;
  return csvLine([
    file,
    ctx.recordist,
    t.date,
    t.time.slice(0, 5),
    '',
    r.satelliteName,
    coord(r.latitude),
    coord(r.longitude),
    '',
    r.scientificName,
    '',
    'uncertain',
    remarks,
    `Chorus satellite ${r.satelliteName}, 48 kHz mono`,
    'field recording',
    'unknown',
    'no',
    ctx.license,
  ]);
}

export function xenoCantoZip(rows: RowSource, ctx: ExportContext, audio: AudioSource, opts: { skipped?: SkipTally } = {}): Readable {
  return zipStream(async (job) => {
    const metadata = job.temp('metadata.csv');
    await metadata.write(csvLine(XENO_CANTO_COLUMNS));
    let missing: TempText | null = null;
    const leaveOut = async (r: ExportRow, reason: SkipReason) => {
      opts.skipped?.add(r, reason);
      if (!missing) {
        missing = job.temp('missing.txt');
        await missing.write(csvLine(['detection_id', 'species_code', 'reason']));
      }
      await missing.write(csvLine([r.id, r.speciesCode, reason]));
    };
    for await (const batch of rows) {
      for (const r of batch) {
        job.check();
        if (r.verificationStatus === 'rejected') {
          await leaveOut(r, 'rejected');
          continue;
        }
        if (!isOrganism(r)) {
          await leaveOut(r, 'not_a_species');
          continue;
        }
        // A sensitive species' recording is its chunk, which other species' recordings share: withheld.
        if (isGeneralised(r)) {
          await leaveOut(r, 'sensitive_species');
          continue;
        }
        // One recording in memory at a time: the next is fetched once the reader took this one.
        const wav = await audio(r.chunkId);
        if (!wav) {
          await leaveOut(r, 'audio_missing');
          continue;
        }
        const file = `audio/${safe(r.id)}.wav`;
        await metadata.write(metadataLine(r, file, ctx));
        await job.addAndWait(wav, file);
      }
    }
    await metadata.close();
    job.zip.addFile(metadata.file, 'metadata.csv');
    const left = missing as TempText | null;
    if (left) {
      await left.close();
      job.zip.addFile(left.file, 'missing.txt');
    }
  });
}
