/**
 * The detections list as CSV (spreadsheets) and JSON (scripts): one record per row, every
 * field a user filters on, local time in the team's zone beside UTC, and links back to the
 * dashboard and the audio. Both stream batch by batch: nothing but the current batch is held.
 */
import type { ExportContext, ExportRow, RowSource } from '../types.ts';
import { csvLine, localStamp, neutralise, PIECE_CHARS } from './shared.ts';

export const DETECTIONS_CSV_COLUMNS = [
  'id',
  'detected_at_utc',
  'detected_at_local',
  'time_zone',
  'end_at_utc',
  'species_code',
  'common_name',
  'scientific_name',
  'category',
  'confidence',
  'calibrated_confidence',
  'satellite_id',
  'satellite_name',
  'latitude',
  'longitude',
  'verification_status',
  'rare',
  'call_chunks',
  'model_id',
  'chunk_id',
  'detection_url',
  'audio_url',
] as const;

export interface DetectionsCsvOptions {
  /**
   * Start with a UTF-8 byte order mark. Excel reads a CSV without one in the legacy code page
   * and garbles non-Latin names; off by default because RFC 4180 readers do not expect it.
   */
  bom?: boolean;
}

/** A text cell as csvLine writes it: neutralised, then quoted where RFC 4180 needs it. */
const QUOTE = /[",\r\n]/;
function text(v: string | null): string {
  if (v == null) return '';
  const t = neutralise(v);
  return QUOTE.test(t) ? `"${t.replace(/"/g, '""')}"` : t;
}
/** A number cell as csvLine writes it (empty when absent or not finite). */
const num = (v: number | null): string => (v != null && Number.isFinite(v) ? String(v) : '');

/**
 * One record, byte for byte what csvLine writes for these cells (numbers stay numbers, never
 * neutralised; every text cell through the same guard), built as one string: a million rows
 * make no cell arrays (docs/exports.md "Performance").
 */
function csvRecord(r: ExportRow, ctx: ExportContext, zone: string): string {
  return (
    `${text(r.id)},${text(r.detectedAt)},${text(localStamp(r.detectedAt, ctx.timeZone))},${zone},${text(r.endAt)},` +
    `${text(r.speciesCode)},${text(r.commonName)},${text(r.scientificName)},${text(r.category)},` +
    `${num(r.confidence)},${num(r.calibratedConfidence)},${text(r.satelliteId)},${text(r.satelliteName)},` +
    `${num(r.latitude)},${num(r.longitude)},${text(r.verificationStatus)},${r.isRare ? 'true' : 'false'},${num(r.callChunks)},` +
    `${text(r.modelId)},${text(r.chunkId)},${text(ctx.detectionUrl(r.id))},${text(ctx.audioUrl(r.chunkId))}\r\n`
  );
}

/** RFC 4180 CSV (CRLF, quoted where needed) with a header row; strings of up to about PIECE_CHARS. */
export async function* detectionsCsv(rows: RowSource, ctx: ExportContext, opts: DetectionsCsvOptions = {}): AsyncGenerator<string> {
  yield (opts.bom ? '\uFEFF' : '') + csvLine(DETECTIONS_CSV_COLUMNS);
  const zone = text(ctx.timeZone);
  for await (const batch of rows) {
    if (batch.length === 0) continue;
    let out = '';
    for (const r of batch) {
      out += csvRecord(r, ctx, zone);
      if (out.length >= PIECE_CHARS) {
        yield out;
        out = '';
      }
    }
    if (out) yield out;
  }
}

/** The JSON object of one row: camelCase, local time and links included. */
export function detectionJson(r: ExportRow, ctx: ExportContext): Record<string, unknown> {
  return {
    id: r.id,
    detectedAt: r.detectedAt,
    detectedAtLocal: localStamp(r.detectedAt, ctx.timeZone),
    timeZone: ctx.timeZone,
    endAt: r.endAt,
    speciesCode: r.speciesCode,
    commonName: r.commonName,
    scientificName: r.scientificName,
    category: r.category,
    confidence: r.confidence,
    calibratedConfidence: r.calibratedConfidence,
    satelliteId: r.satelliteId,
    satelliteName: r.satelliteName,
    latitude: r.latitude,
    longitude: r.longitude,
    verificationStatus: r.verificationStatus,
    rare: r.isRare,
    callChunks: r.callChunks,
    modelId: r.modelId,
    chunkId: r.chunkId,
    detectionUrl: ctx.detectionUrl(r.id),
    audioUrl: ctx.audioUrl(r.chunkId),
  };
}

/** One JSON array, streamed: `[`, the objects of each batch separated by commas, `]`. */
export async function* detectionsJson(rows: RowSource, ctx: ExportContext): AsyncGenerator<string> {
  let first = true;
  yield '[';
  for await (const batch of rows) {
    if (batch.length === 0) continue;
    let out = '';
    for (const r of batch) {
      out += (first ? '\n' : ',\n') + JSON.stringify(detectionJson(r, ctx));
      first = false;
      if (out.length >= PIECE_CHARS) {
        yield out;
        out = '';
      }
    }
    if (out) yield out;
  }
  yield first ? ']\n' : '\n]\n';
}
