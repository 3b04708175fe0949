/**
 * The detections CSV and JSON lines, written by the database (issue 34): one text value a row,
 * byte for byte the line the file holds, so PostgreSQL streams the file under COPY and the hub
 * passes its bytes on without a JavaScript row per detection (docs/exports.md "Performance").
 * Everything a line says is decided here: the formula guard and RFC 4180 quoting (as csvLine and
 * neutralise in ./shared.ts do for the other files), JSON's string escaping (`to_json`, as
 * JSON.stringify escapes), the team's local time (`AT TIME ZONE`), the calibrated confidence
 * (the team's curves as a CASE per model, read as calibration's `calibrate` reads them), and for a
 * file that leaves the team a sensitive species generalised (exports service `generaliseRow`).
 */
import type { ExportLineSql } from '../../detections/service.ts';
import { CALL_END, utcIso } from '../../detections/service.ts';
import { csvLine } from './shared.ts';

/** One bucket of a (team, model) calibration curve (src/modules/calibration/pav.ts). */
export interface CurveBucket {
  minConfidence: number;
  maxConfidence: number;
  calibrated: number;
}

export interface DetectionLinesOptions {
  /** The team's IANA zone: local times. */
  timeZone: string;
  /** What a detection's id is appended to for its dashboard link. */
  detectionUrlPrefix: string;
  /** What a chunk's id is appended to for its audio link. */
  audioUrlPrefix: string;
  /** The team's calibration curves; a model without one keeps its raw confidence. */
  curves: ReadonlyArray<{ modelId: string; buckets: readonly CurveBucket[] }>;
  /** Lower-case species codes generalised (a file that leaves the team); empty for the team's own. */
  sensitive: readonly string[];
  /** Written for a generalised row's satellite id and name. */
  withheld: string;
}

/** neutralise's first characters (= + - @ tab CR) as code points. */
const GUARD = '(61, 43, 45, 64, 9, 13)';
const CRLF = 'chr(13) || chr(10)';

/** csvLine's text cell: the formula guard, then quoted where a quote, comma or line break needs it. */
const csvText = (x: string) =>
  `CASE WHEN ${x} ~ '[",\\r\\n]' THEN '"' || replace(CASE WHEN ascii(${x}) IN ${GUARD} THEN '''' || ${x} ELSE ${x} END, '"', '""') || '"' ` +
  `WHEN ascii(${x}) IN ${GUARD} THEN '''' || ${x} ELSE coalesce(${x}, '') END`;

/** JSON.stringify of a text value (null when absent). */
const jsonText = (x: string) => `coalesce(to_json(${x})::text, 'null')`;

/** A number's shortest text; `none` when absent or not finite. */
const numText = (x: string, none: string) =>
  `CASE WHEN ${x} IS NULL OR ${x} IN ('NaN', 'Infinity', '-Infinity') THEN '${none}' ELSE ${x}::text END`;

/** A JavaScript number as a float8 literal that reads back as the same double. */
const float = (v: number) => `${String(v)}::float8`;

/**
 * calibrate(buckets, c) as a CASE over `c`: a bucket's value inside it, a straight line between
 * two buckets' edges (the same operations in the same order, so the same double), the first or
 * last bucket's value beyond the ends.
 */
function curveSql(buckets: readonly CurveBucket[], c: string): string {
  const first = buckets[0]!;
  const whens = [`WHEN ${c} <= ${float(first.minConfidence)} THEN ${float(first.calibrated)}`];
  buckets.forEach((b, i) => {
    whens.push(`WHEN ${c} <= ${float(b.maxConfidence)} THEN ${float(b.calibrated)}`);
    const next = buckets[i + 1];
    if (next)
      whens.push(
        `WHEN ${c} < ${float(next.minConfidence)} THEN ${float(b.calibrated)} + ((${c} - ${float(b.maxConfidence)}) / (${float(next.minConfidence)} - ${float(b.maxConfidence)})) * (${float(next.calibrated)} - ${float(b.calibrated)})`,
      );
  });
  return `CASE ${whens.join(' ')} ELSE ${float(buckets[buckets.length - 1]!.calibrated)} END`;
}

/**
 * The columns a line is made of, as SQL text expressions; `coarsened` is the generalised rows'
 * condition (`false` for the team's own file).
 */
function cells(o: DetectionLinesOptions, add: (v: unknown) => string, none: string) {
  const coarsened = o.sensitive.length ? `lower(d.species_code) = ANY(${add(o.sensitive)}::text[])` : null;
  const unless = (plain: string, generalised: string) =>
    coarsened ? `CASE WHEN ${coarsened} THEN ${generalised} ELSE ${plain} END` : plain;
  const hour = `date_trunc('hour', d.detected_at, 'UTC')`;
  const at = unless('d.detected_at', hour);
  const grid = (v: string) => unless(v, `floor(${v} * 10 + 0.5) / 10 + 0`);
  const text = (v: string) => `${add(v)}::text`;
  // Added only where it is used: a parameter no expression names has no type.
  const withheld = coarsened ? text(o.withheld) : '';
  // The driver hands the confidence to JavaScript as its text, which calibrate reads as a double: so does this.
  const raw = numText('d.confidence', none);
  const curves = o.curves.filter((c) => c.buckets.length > 0);
  const calibrated = curves.length
    ? `CASE d.model_id ${curves.map((c) => `WHEN ${add(c.modelId)} THEN (${curveSql(c.buckets, 'd.confidence::text::float8')})::text`).join(' ')} ELSE ${raw} END`
    : raw;
  return {
    coarsened: coarsened ?? 'false',
    at: utcIso(at),
    local: `to_char(${at} AT TIME ZONE ${text(o.timeZone)}, 'YYYY-MM-DD HH24:MI:SS')`,
    end: utcIso(unless(CALL_END, `${hour} + interval '1 hour'`)),
    raw,
    calibrated,
    latitude: numText(grid('s.latitude'), none),
    longitude: numText(grid('s.longitude'), none),
    satelliteId: unless('d.satellite_id::text', withheld),
    satelliteName: unless('s.name', withheld),
    chunkId: unless('d.chunk_id::text', "''"),
    detectionUrl: `${text(o.detectionUrlPrefix)} || d.id`,
    audioUrl: unless(`${text(o.audioUrlPrefix)} || d.chunk_id`, "''"),
    text,
  };
}

/** A constant text cell as csvLine writes it. */
const csvCell = (v: string) => csvLine([v]).slice(0, -2);
/** Whether text after this prefix (a uuid) needs neither the guard nor quotes: the common case of a URL. */
const plainCsv = (prefix: string) => csvCell(`${prefix}0`) === `${prefix}0`;
const plainJson = (prefix: string) => JSON.stringify(`${prefix}0`) === `"${prefix}0"`;

/** A detections CSV record (DETECTIONS_CSV_COLUMNS), CRLF-terminated. */
export const csvLineSql =
  (o: DetectionLinesOptions): ExportLineSql =>
  (add) => {
    const c = cells(o, add, '');
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
      c.raw,
      c.calibrated,
      c.satelliteId,
      csvText(c.satelliteName),
      c.latitude,
      c.longitude,
      'd.verification_status',
      "CASE WHEN d.is_rare THEN 'true' ELSE 'false' END",
      'd.call_chunks::text',
      csvText('d.model_id'),
      c.chunkId,
      url(c.detectionUrl, o.detectionUrlPrefix),
      url(c.audioUrl, o.audioUrlPrefix),
    ].join(" || ',' || ");
    return { line: `${line} || ${CRLF}`, coarsened: c.coarsened };
  };

/**
 * A detections JSON object preceded by `,` and a line feed (the file writer drops the first
 * row's comma): the keys of the API's detection in camelCase, local time and links included.
 */
export const jsonLineSql =
  (o: DetectionLinesOptions): ExportLineSql =>
  (add) => {
    const c = cells(o, add, 'null');
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
      ['confidence', c.raw],
      ['calibratedConfidence', c.calibrated],
      ['satelliteId', `'"' || ${c.satelliteId} || '"'`],
      ['satelliteName', jsonText(c.satelliteName)],
      ['latitude', c.latitude],
      ['longitude', c.longitude],
      ['verificationStatus', `'"' || d.verification_status || '"'`],
      ['rare', "CASE WHEN d.is_rare THEN 'true' ELSE 'false' END"],
      ['callChunks', 'd.call_chunks::text'],
      ['modelId', jsonText('d.model_id')],
      ['chunkId', `'"' || ${c.chunkId} || '"'`],
      ['detectionUrl', url(c.detectionUrl, o.detectionUrlPrefix)],
      ['audioUrl', url(c.audioUrl, o.audioUrlPrefix)],
    ];
    const body = fields.map(([k, v], i) => `'${i === 0 ? '' : ','}"${k}":' || ${v}`).join(' || ');
    return { line: `',' || chr(10) || '{' || ${body} || '}'`, coarsened: c.coarsened };
  };
