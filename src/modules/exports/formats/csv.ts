/**
 * The detections list as CSV (spreadsheets) and JSON (scripts): one record per row, every
 * field a user filters on, local time in the team's zone beside UTC, and links back to the
 * dashboard and the audio. The database writes each row's line (./lines-sql.ts); these add the
 * header and the array's brackets around the lines as they stream.
 */
import { csvLine } from './shared.ts';

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

/** Lines as they come: bytes from the database's COPY stream, or text a batch at a time. */
export type LineSource = AsyncIterable<Buffer | string>;

/** The header record, then every row's line (csvLineSql): RFC 4180 with CRLF. */
export async function* detectionsCsv(lines: LineSource, opts: DetectionsCsvOptions = {}): AsyncGenerator<Buffer | string> {
  yield (opts.bom ? '\uFEFF' : '') + csvLine(DETECTIONS_CSV_COLUMNS);
  yield* lines;
}

/**
 * One JSON array: `[`, the rows' objects (jsonLineSql writes each after `,` and a line feed; the
 * first row's comma is dropped), then `]`.
 */
export async function* detectionsJson(lines: LineSource): AsyncGenerator<Buffer | string> {
  let first = true;
  yield '[';
  for await (const piece of lines) {
    if (piece.length === 0) continue;
    // The comma is one byte, and one UTF-16 unit: the same slice for bytes and text.
    yield first ? piece.slice(1) : piece;
    first = false;
  }
  yield first ? ']\n' : '\n]\n';
}
