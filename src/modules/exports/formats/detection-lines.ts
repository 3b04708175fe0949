/**
 * The detections CSV and JSON lines as the database writes them (./lines-sql.ts): the records
 * of ./csv.ts's files.
 */
import type { ExportLineSql } from '../../detections/service.ts';
import { csvLine } from './shared.ts';
import { CRLF, csvText, joinSql, lineSql, numText, type LinesOptions } from './lines-sql.ts';

/** JSON.stringify of a text value (null when absent). */
const jsonText = (x: string) => `coalesce(to_json(${x})::text, 'null')`;

/** A constant text cell as csvLine writes it. */
const csvCell = (v: string) => csvLine([v]).slice(0, -2);
/** Whether text after this prefix (a uuid) needs neither the guard nor quotes: the common case of a URL. */
const plainCsv = (prefix: string) => csvCell(`${prefix}0`) === `${prefix}0`;
const plainJson = (prefix: string) => JSON.stringify(`${prefix}0`) === `"${prefix}0"`;

/** A detections CSV record (DETECTIONS_CSV_COLUMNS), CRLF-terminated. */
export const csvLineSql =
  (o: LinesOptions): ExportLineSql =>
  (add) =>
    lineSql(o, add, (c) => {
      const url = (expr: string, prefix: string) => (plainCsv(prefix) ? expr : csvText(expr));
      const line = [
        'd.id::text',
        c.at,
        c.local,
        c.text(csvCell(o.timeZone)),
        c.end,
        csvText('d.species_code'),
        csvText('d.common_name'),
        csvText('d.scientific_name'),
        csvText('d.category'),
        c.raw(''),
        c.calibrated(''),
        c.satelliteId,
        csvText(c.satelliteName),
        numText(c.latitude, ''),
        numText(c.longitude, ''),
        'd.verification_status',
        "CASE WHEN d.is_rare THEN 'true' ELSE 'false' END",
        'd.call_chunks::text',
        csvText('d.model_id'),
        c.chunkId,
        url(c.detectionUrl, o.detectionUrlPrefix),
        url(c.audioUrl, o.audioUrlPrefix),
      ];
      return joinSql("','", line, CRLF);
    });

/**
 * A detections JSON object preceded by `,` and a line feed (the file writer drops the first
 * row's comma): the keys of the API's detection in camelCase, local time and links included.
 */
export const jsonLineSql =
  (o: LinesOptions): ExportLineSql =>
  (add) =>
    lineSql(o, add, (c) => {
      const url = (expr: string, prefix: string) => (plainJson(prefix) ? `'"' || ${expr} || '"'` : jsonText(expr));
      const fields: Array<[string, string]> = [
        ['id', `'"' || d.id || '"'`],
        ['detectedAt', `'"' || ${c.at} || '"'`],
        ['detectedAtLocal', `'"' || ${c.local} || '"'`],
        ['timeZone', c.text(JSON.stringify(o.timeZone))],
        ['endAt', `'"' || ${c.end} || '"'`],
        ['speciesCode', jsonText('d.species_code')],
        ['commonName', jsonText('d.common_name')],
        ['scientificName', jsonText('d.scientific_name')],
        ['category', jsonText('d.category')],
        ['confidence', c.raw('null')],
        ['calibratedConfidence', c.calibrated('null')],
        ['satelliteId', `'"' || ${c.satelliteId} || '"'`],
        ['satelliteName', jsonText(c.satelliteName)],
        ['latitude', numText(c.latitude, 'null')],
        ['longitude', numText(c.longitude, 'null')],
        ['verificationStatus', `'"' || d.verification_status || '"'`],
        ['rare', "CASE WHEN d.is_rare THEN 'true' ELSE 'false' END"],
        ['callChunks', 'd.call_chunks::text'],
        ['modelId', jsonText('d.model_id')],
        ['chunkId', `'"' || ${c.chunkId} || '"'`],
        ['detectionUrl', url(c.detectionUrl, o.detectionUrlPrefix)],
        ['audioUrl', url(c.audioUrl, o.audioUrlPrefix)],
      ];
      const body = fields.map(([k, v], i) => `'${i === 0 ? '' : ','}"${k}":' || ${v}`).join(' || ');
      return `',' || chr(10) || '{' || ${body} || '}'`;
    });
