/**
 * Export lines written by the database (issue 34): one text value a row, byte for byte the line
 * the file holds, so PostgreSQL streams the file under COPY and the hub passes its bytes on
 * without a JavaScript row per detection (docs/exports.md "Performance"). This module holds what
 * the formats share, as SQL over detections `d` and satellites `s`: the formula guard and RFC 4180
 * quoting (as neutralise and csvLine in ./shared.ts), toFixed, the team's local time, the
 * calibrated confidence (the team's curves as a CASE per model, read as calibration's `calibrate`
 * reads them) and, for a file that leaves the team, a sensitive species generalised (exports
 * service `generaliseRow`). The formats' lines: ./detection-lines.ts (CSV, JSON),
 * ./submission-lines.ts (Darwin Core, iNaturalist).
 */
import { CALL_END, utcIso } from '../../detections/service.ts';

/** One bucket of a (team, model) calibration curve (src/modules/calibration/pav.ts). */
export interface CurveBucket {
  minConfidence: number;
  maxConfidence: number;
  calibrated: number;
}

export interface LinesOptions {
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
export const CRLF = 'chr(13) || chr(10)';

/** Whether a spreadsheet would run a cell starting like `x` as a formula (neutralise's test). */
export const startsLikeFormula = (x: string) => `ascii(${x}) IN ${GUARD}`;

/** neutralise: a leading apostrophe before a cell a spreadsheet would run as a formula. */
export const neutraliseSql = (x: string) => `CASE WHEN ${startsLikeFormula(x)} THEN '''' || ${x} ELSE ${x} END`;

/** csvLine's text cell: the formula guard, then quoted where a quote, comma or line break needs it. */
export const csvText = (x: string) =>
  `CASE WHEN ${x} ~ '[",\\r\\n]' THEN '"' || replace(${neutraliseSql(x)}, '"', '""') || '"' ` +
  `WHEN ${startsLikeFormula(x)} THEN '''' || ${x} ELSE coalesce(${x}, '') END`;

/** A number's shortest text; `none` when absent or not finite. */
export const numText = (x: string, none: string) =>
  `CASE WHEN ${x} IS NULL OR ${x} IN ('NaN', 'Infinity', '-Infinity') THEN '${none}' ELSE ${x}::text END`;

/**
 * toFixed(digits) of a float8 `x`: to_char rounds the double's exact value as toFixed does, except
 * on an exact tie, where toFixed takes the larger magnitude and to_char the even digit. A double
 * is an exact tie at 2 decimals only at odd multiples of 1/8, at 6 decimals of 1/128, where
 * multiplying by 8 or 128 is exact: those are nudged away from zero first.
 */
export const toFixedSql = (x: string, digits: 2 | 6) => {
  const steps = digits === 2 ? 8 : 128;
  const nudge = digits === 2 ? '0.001' : '0.0000001';
  const format = digits === 2 ? 'FM999990.00' : 'FM990.000000';
  return `to_char(CASE WHEN ${x} * ${steps} = floor(${x} * ${steps}) AND floor(${x} * ${steps})::bigint % 2 <> 0 THEN ${x} + sign(${x}) * ${nudge} ELSE ${x} END, '${format}')`;
};

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

/** A text parameter of the statement, added once however often it is named. */
export type TextParam = (value: string) => string;

/**
 * A row's cells as SQL, each read when a format uses it (a getter: a parameter that no
 * expression names has no type, so none is added unused). `generalised`: the cells of a
 * sensitive species' row in a file that leaves the team (generaliseRow), for lineSql's branch.
 */
export function detectionCells(o: LinesOptions, text: TextParam, generalised: boolean) {
  const hour = `date_trunc('hour', d.detected_at, 'UTC')`;
  const at = generalised ? hour : 'd.detected_at';
  const end = generalised ? `(${hour} + interval '1 hour')` : CALL_END;
  const grid = (v: string) => (generalised ? `(floor(${v} * 10 + 0.5) / 10 + 0)` : v);
  const curves = o.curves.filter((c) => c.buckets.length > 0);
  // The driver hands the confidence to JavaScript as its text, which calibrate reads as a double: so does this.
  const confidence = 'd.confidence::text::float8';
  const byModel = (value: (curve: string) => string, otherwise: string) =>
    curves.length
      ? `CASE d.model_id ${curves.map((c) => `WHEN ${text(c.modelId)} THEN ${value(curveSql(c.buckets, confidence))}`).join(' ')} ELSE ${otherwise} END`
      : otherwise;
  return {
    generalised,
    /** The call's start and end (a sensitive species': its hour) as timestamptz, and as toISOString writes them. */
    atTime: at,
    endTime: end,
    at: utcIso(at),
    end: utcIso(end),
    /** localStamp: `YYYY-MM-DD HH:MM:SS` in the team's zone. */
    get local() {
      return `to_char(${at} AT TIME ZONE ${text(o.timeZone)}, 'YYYY-MM-DD HH24:MI:SS')`;
    },
    /** localStampOffset: `YYYY-MM-DD HH:MM:SS ±HH:MM` or `YYYY-MM-DDTHH:MM:SS±HH:MM` in the team's zone. */
    stampOffset(t: string, sep: ' ' | 'T') {
      const zone = text(o.timeZone);
      const minutes = `(extract(epoch FROM (${t} AT TIME ZONE ${zone}) - (${t} AT TIME ZONE 'UTC'))::int / 60)`;
      return (
        // A space before the offset where a space separates date and time, as localStampOffset writes it.
        `to_char(${t} AT TIME ZONE ${zone}, 'YYYY-MM-DD"${sep}"HH24:MI:SS${sep === ' ' ? ' ' : ''}') || CASE WHEN ${minutes} < 0 THEN '-' ELSE '+' END || ` +
        `lpad((abs(${minutes}) / 60)::text, 2, '0') || ':' || lpad((abs(${minutes}) % 60)::text, 2, '0')`
      );
    },
    /** The confidence as the API writes it (`none` when absent), and as the double calibrate reads. */
    raw: (none: string) => numText('d.confidence', none),
    confidence,
    /** The calibrated confidence as the API writes it, and as a double. */
    calibrated: (none: string) => byModel((v) => `(${v})::text`, numText('d.confidence', none)),
    get calibratedFloat() {
      return byModel((v) => v, confidence);
    },
    latitude: grid('s.latitude'),
    longitude: grid('s.longitude'),
    get satelliteId() {
      return generalised ? text(o.withheld) : 'd.satellite_id::text';
    },
    get satelliteName() {
      return generalised ? text(o.withheld) : 's.name';
    },
    chunkId: generalised ? "''" : 'd.chunk_id::text',
    get detectionUrl() {
      return `${text(o.detectionUrlPrefix)} || d.id`;
    },
    get audioUrl() {
      return generalised ? "''" : `${text(o.audioUrlPrefix)} || d.chunk_id`;
    },
    text,
  };
}

export type DetectionCells = ReturnType<typeof detectionCells>;

/**
 * A format's line over a row's cells: built once as they are and, where the file leaves the team,
 * once more generalised, chosen by whether the row is a sensitive species (one test a row, not
 * one in every cell). `keep`: the rows the format writes (others are NULL, which writes nothing).
 */
export function lineSql(
  o: LinesOptions,
  add: (v: unknown) => string,
  build: (c: DetectionCells) => string,
  keep?: string,
): { line: string; coarsened: string } {
  const params = new Map<string, string>();
  const text: TextParam = (v) => {
    let p = params.get(v);
    if (!p) params.set(v, (p = `${add(v)}::text`));
    return p;
  };
  const plain = build(detectionCells(o, text, false));
  let line = plain;
  let coarsened = 'false';
  if (o.sensitive.length) {
    coarsened = `lower(d.species_code) = ANY(${add(o.sensitive)}::text[])`;
    line = `CASE WHEN ${coarsened} THEN ${build(detectionCells(o, text, true))} ELSE ${plain} END`;
  }
  return { line: keep ? `CASE WHEN ${keep} THEN ${line} END` : line, coarsened };
}
