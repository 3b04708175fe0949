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
 * make no cell arrays (docs/exports.md "Performance"). The cells the database writes itself
 * (uuid ids, `to_char` times, the verification enum, `withheld`, the local stamp's digits) can
 * neither start like a formula nor hold a quote, comma or line break: written without the
 * guard's two tests, which were a tenth of a row's time.
 */
function csvRecord(r: ExportRow, ctx: ExportContext, zone: string): string {
  return (
    `${r.id},${r.detectedAt},${localStamp(r.detectedAt, ctx.timeZone)},${zone},${r.endAt},` +
    `${text(r.speciesCode)},${text(r.commonName)},${text(r.scientificName)},${text(r.category)},` +
    `${num(r.confidence)},${num(r.calibratedConfidence)},${r.satelliteId},${text(r.satelliteName)},` +
    `${num(r.latitude)},${num(r.longitude)},${r.verificationStatus},${r.isRare ? 'true' : 'false'},${num(r.callChunks)},` +
    `${text(r.modelId)},${r.chunkId},${text(ctx.detectionUrl(r.id))},${text(ctx.audioUrl(r.chunkId))}\r\n`
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

const js = JSON.stringify;
/** A number as JSON.stringify writes it (null when absent or not finite). */
const jnum = (v: number | null): string => (v != null && Number.isFinite(v) ? String(v) : 'null');

/**
 * JSON.stringify(detectionJson(r, ctx)) byte for byte, written as one template: no object per
 * row for the serialiser to walk. The database's own cells (uuid ids, `to_char` times, the
 * verification enum, `withheld`) and the local stamp's digits need no escaping.
 */
function jsonRecord(r: ExportRow, ctx: ExportContext, zone: string): string {
  return (
    `{"id":"${r.id}","detectedAt":"${r.detectedAt}","detectedAtLocal":"${localStamp(r.detectedAt, ctx.timeZone)}",` +
    `"timeZone":${zone},"endAt":"${r.endAt}","speciesCode":${js(r.speciesCode)},"commonName":${js(r.commonName)},` +
    `"scientificName":${js(r.scientificName)},"category":${js(r.category)},"confidence":${jnum(r.confidence)},` +
    `"calibratedConfidence":${jnum(r.calibratedConfidence)},"satelliteId":"${r.satelliteId}","satelliteName":${js(r.satelliteName)},` +
    `"latitude":${jnum(r.latitude)},"longitude":${jnum(r.longitude)},"verificationStatus":"${r.verificationStatus}",` +
    `"rare":${r.isRare ? 'true' : 'false'},"callChunks":${jnum(r.callChunks)},"modelId":${js(r.modelId)},"chunkId":"${r.chunkId}",` +
    `"detectionUrl":${js(ctx.detectionUrl(r.id))},"audioUrl":${js(ctx.audioUrl(r.chunkId))}}`
  );
}

/** One JSON array, streamed: `[`, the objects of each batch separated by commas, `]`. */
export async function* detectionsJson(rows: RowSource, ctx: ExportContext): AsyncGenerator<string> {
  let first = true;
  const zone = js(ctx.timeZone);
  yield '[';
  for await (const batch of rows) {
    if (batch.length === 0) continue;
    let out = '';
    for (const r of batch) {
      out += (first ? '\n' : ',\n') + jsonRecord(r, ctx, zone);
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
