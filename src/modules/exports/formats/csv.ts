/**
 * The detections list as CSV (spreadsheets) and JSON (scripts): one record per row, every
 * field a user filters on, local time in the team's zone beside UTC, and links back to the
 * dashboard and the audio. Both stream batch by batch: nothing but the current batch is held.
 */
import type { ExportContext, ExportRow, RowSource } from '../types.ts';
import { csvLine, localTime, type Cell } from './shared.ts';

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

const localStamp = (iso: string, timeZone: string) => {
  const t = localTime(iso, timeZone);
  return `${t.date} ${t.time}`;
};

function csvCells(r: ExportRow, ctx: ExportContext): Cell[] {
  // Numbers stay numbers (never neutralised); every text cell goes through csvLine's guard.
  return [
    r.id,
    r.detectedAt,
    localStamp(r.detectedAt, ctx.timeZone),
    ctx.timeZone,
    r.endAt,
    r.speciesCode,
    r.commonName,
    r.scientificName,
    r.category,
    r.confidence,
    r.calibratedConfidence,
    r.satelliteId,
    r.satelliteName,
    r.latitude,
    r.longitude,
    r.verificationStatus,
    r.isRare,
    r.callChunks,
    r.modelId,
    r.chunkId,
    ctx.detectionUrl(r.id),
    ctx.audioUrl(r.chunkId),
  ];
}

/** RFC 4180 CSV (CRLF, quoted where needed) with a header row; one string per batch. */
export async function* detectionsCsv(rows: RowSource, ctx: ExportContext, opts: DetectionsCsvOptions = {}): AsyncGenerator<string> {
  yield (opts.bom ? '\uFEFF' : '') + csvLine(DETECTIONS_CSV_COLUMNS);
  for await (const batch of rows) {
    if (batch.length === 0) continue;
    let out = '';
    for (const r of batch) out += csvLine(csvCells(r, ctx));
    yield out;
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
    }
    yield out;
  }
  yield first ? ']\n' : '\n]\n';
}
