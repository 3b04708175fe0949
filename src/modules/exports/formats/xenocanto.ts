/**
 * A zip to prepare xeno-canto uploads (FORMATS.md): metadata.csv, one line per recording with
 * the submission form's fields, and the recordings as audio/<detectionId>.wav.
 *
 * A recording is the whole call: the chunks it spans (detections' span_chunk_ids and stitched
 * rows, and the chunks recorded between them), their samples joined into one WAV; a call inside
 * one chunk is that chunk exactly as audio() returns it (no re-encoding, no compression: WAV
 * barely deflates). At most MAX_CALL_CHUNKS chunks (two minutes, one recording in memory at a
 * time); a longer call, or one whose later chunks are gone, is cut there and its remarks say so.
 *
 * Country is the English name of the country at the satellite's position (src/modules/places,
 * offline). Automatic recording is `yes`: a satellite records unattended. Sound type is a word
 * of xeno-canto's vocabulary only when the model's label names it (soundType); a species model
 * says what called, not how, so it is otherwise left empty for the recordist. Elevation is empty:
 * a satellite carries coordinates only.
 * Rows left out (audio gone, rejected, not a species, a sensitive species' withheld recording) are listed in missing.txt
 * (detection_id,species_code,reason), which exists only when something was left out.
 */
import type { Readable } from 'node:stream';
import type { ExportContext, ExportRow, RowSource } from '../types.ts';
import { conf, coord, csvLine, isGeneralised, isOrganism, localTime, type SkipReason, type SkipTally } from './shared.ts';
import { type TempText, zipStream } from './zip.ts';
import { countryName, placeAt } from '../../places/index.ts';
import { CHUNK_DURATION_MS, makeWav, parseWav } from '../../../protocol/wav.ts';

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
  'automatic_recording',
  'license',
] as const;

/** A call's recording holds at most this many 3-second chunks (two minutes, ≈ 11.5 MB). */
export const MAX_CALL_CHUNKS = 40;

/**
 * xeno-canto's sound types (its upload form's list) a model's label may end in, longest first:
 * `Strix aluco_Tawny Owl (call)`, `… - song`, `…_flight call`. Only such a qualifier counts, so
 * a name like "Song Sparrow" says nothing.
 */
const SOUND_TYPES = [
  'nocturnal flight call',
  'alarm call',
  'begging call',
  'flight call',
  'dawn song',
  'subsong',
  'drumming',
  'song',
  'call',
] as const;
const QUALIFIER = new RegExp(`(?:\\(\\s*|\\s[-–]\\s*|_)(${SOUND_TYPES.join('|')})\\s*\\)?\\s*$`, 'i');

/** The sound type a label names, from xeno-canto's vocabulary, else ''. */
export function soundType(label: string): string {
  return QUALIFIER.exec(label)?.[1]?.toLowerCase() ?? '';
}

export type AudioSource = (chunkId: string) => Promise<Buffer | null>;
/** The chunks of a row's call, oldest first (at most MAX_CALL_CHUNKS); empty: the row's own chunk. */
export type CallChunks = (r: ExportRow) => Promise<string[]>;

/**
 * One recording of the call: its chunks' WAVs in order, up to the first that is gone. One chunk
 * is returned as it is; several are parsed and their samples joined under one header (the
 * protocol's format: 48 kHz, 16-bit mono). Null when the first is gone.
 */
async function callRecording(chunkIds: string[], audio: AudioSource): Promise<{ wav: Buffer; chunks: number } | null> {
  const parts: Buffer[] = [];
  for (const id of chunkIds) {
    const wav = await audio(id);
    if (!wav) break;
    parts.push(wav);
  }
  if (parts.length <= 1) return parts[0] ? { wav: parts[0], chunks: 1 } : null;
  const samples: Buffer[] = [];
  for (const part of parts) {
    const parsed = parseWav(part);
    // A chunk not in the protocol's format cannot be joined: the call ends before it.
    if (!parsed.ok) break;
    samples.push(part.subarray(parsed.wav.dataOffset, parsed.wav.dataOffset + parsed.wav.dataLength));
  }
  if (samples.length <= 1) return { wav: parts[0]!, chunks: 1 };
  const pcm = Buffer.concat(samples);
  return { wav: makeWav(new Int16Array(pcm.buffer, pcm.byteOffset, pcm.length / 2)), chunks: samples.length };
}

/** A file name from an id: ids are ours, but a path must never leave audio/. */
const safe = (id: string) => id.replace(/[^A-Za-z0-9._-]/g, '_');

function metadataLine(r: ExportRow, file: string, ctx: ExportContext, cut: string): string {
  const t = localTime(r.detectedAt, ctx.timeZone);
  const remarks =
    `${r.commonName}, detected by Chorus: confidence ${conf(r.confidence)} (calibrated ${conf(r.calibratedConfidence)}), ` +
    `model ${r.modelId}.${cut} ${ctx.detectionUrl(r.id)}` +
    // The public link of the call's first chunk, when the export published it (issue 34); the zip holds the whole call.
    (ctx.audioUrl(r.chunkId) ? ` Audio: ${ctx.audioUrl(r.chunkId)}` : '');
  const place = placeAt(r.latitude, r.longitude);
  return csvLine([
    file,
    ctx.recordist,
    t.date,
    t.time.slice(0, 5),
    place ? countryName(place.country) : '',
    r.satelliteName,
    coord(r.latitude),
    coord(r.longitude),
    '',
    r.scientificName,
    '',
    soundType(r.commonName),
    remarks,
    `Chorus satellite ${r.satelliteName}, 48 kHz mono`,
    'field recording',
    'unknown',
    'no',
    'yes',
    ctx.license,
  ]);
}

export function xenoCantoZip(
  rows: RowSource,
  ctx: ExportContext,
  audio: AudioSource,
  opts: { skipped?: SkipTally; callChunks?: CallChunks } = {},
): Readable {
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
        const spanned = opts.callChunks ? await opts.callChunks(r) : [];
        const chunkIds = spanned.length ? spanned.slice(0, MAX_CALL_CHUNKS) : [r.chunkId];
        const rec = await callRecording(chunkIds, audio);
        if (!rec) {
          await leaveOut(r, 'audio_missing');
          continue;
        }
        const whole = rec.chunks === chunkIds.length && spanned.length <= MAX_CALL_CHUNKS;
        const cut = whole ? '' : ` The recording holds the call's first ${(rec.chunks * CHUNK_DURATION_MS) / 1000} s.`;
        const file = `audio/${safe(r.id)}.wav`;
        await metadata.write(metadataLine(r, file, ctx, cut));
        await job.addAndWait(rec.wav, file);
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
