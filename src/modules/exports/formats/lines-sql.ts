/**
 * Export lines written by the database (issue 34): one text value a row, byte for byte the line
 * the file holds, so PostgreSQL streams the file under COPY and the hub passes its bytes on
 * without a JavaScript row per detection (docs/exports.md "Performance"). This module holds what
 * the formats share, as SQL over detections `d` and satellites `s`: the formula guard and RFC 4180
 * quoting (as neutralise and csvLine in ./shared.ts), decimals (as fixedDecimal), the team's local time, the
 * calibrated confidence (the team's curves as a CASE per model, read as calibration's `calibrate`
 * reads them) and, for a file that leaves the team, a sensitive species generalised (exports
 * generalise.ts `generaliseRow`). The formats' lines: ./detection-lines.ts (CSV, JSON),
 * ./submission-lines.ts (Darwin Core, iNaturalist).
 */
import { CALL_END, CALL_HAS_LENGTH, utcIso } from '../../detections/service.ts';

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

/**
 * Cells joined by `separator` (SQL text) and ended by `end`, in one call: a chain of `||` copies
 * the growing line at every step, which for a line of twenty cells was a large share of its cost.
 * No cell may be NULL (concat_ws would leave it out, separator and all); every cell here is text
 * that is empty at worst.
 */
export const joinSql = (separator: string, cells: readonly string[], end: string) =>
  `concat_ws(${separator}, ${cells.join(', ')}) || ${end}`;

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
 * shared.ts fixedDecimal: `x` (a real or a double) with `digits` decimals, rounded half away from
 * zero on the decimal digits its shortest text writes, as JavaScript's String(v) writes them.
 */
export const fixedSql = (x: string, digits: 2 | 6) => `round(${x}::text::numeric, ${digits})::text`;

/** coord: six decimals, or an empty cell (absent or not finite). */
export const coordSql = (x: string) =>
  `CASE WHEN ${x} IS NULL OR ${x} IN ('NaN', 'Infinity', '-Infinity') THEN '' ELSE ${fixedSql(x, 6)} END`;

/** A sensitive species' hour (generaliseRow's time outside the team): the start of the row's UTC hour. */
export const HOUR_SQL = `date_trunc('hour', d.detected_at, 'UTC')`;

/** toGrid: a coordinate on the 0.1° grid, as a sensitive species' place is given outside the team. */
export const gridSql = (v: string) => `(floor(${v} * 10 + 0.5) / 10 + 0)`;

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
  const at = generalised ? HOUR_SQL : 'd.detected_at';
  const end = generalised ? `(${HOUR_SQL} + interval '1 hour')` : CALL_END;
  const grid = (v: string) => (generalised ? gridSql(v) : v);
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
    /** Whether the end falls on another millisecond than the start (a sensitive species' hour always does). */
    callHasLength: generalised ? 'true' : CALL_HAS_LENGTH,
    /** localStamp: `YYYY-MM-DD HH:MM:SS` in the team's zone. */
    get local() {
      return `to_char(${at} AT TIME ZONE ${text(o.timeZone)}, 'YYYY-MM-DD HH24:MI:SS')`;
    },
    /**
     * localStampOffset: `YYYY-MM-DD HH:MM:SS ±HH:MM` or `YYYY-MM-DDTHH:MM:SS±HH:MM` in the
     * session's zone, which must be the team's (Db.copyColumn's `timeZone`: the offset comes
     * with the time in one call instead of two conversions and their difference).
     */
    sessionStampOffset(t: string, sep: ' ' | 'T') {
      return `to_char(${t}, 'YYYY-MM-DD"${sep}"HH24:MI:SS${sep === ' ' ? ' ' : ''}TZH:TZM')`;
    },
    /** The confidence as the API writes it (`none` when absent). */
    raw: (none: string) => numText('d.confidence', none),
    /** The calibrated confidence as the API writes it, and as a double. */
    calibrated: (none: string) => byModel((v) => `(${v})::text`, numText('d.confidence', none)),
    /** The calibrated confidence as a number for fixedSql: the real itself where no curve applies (its text is the double's). */
    get calibratedFloat() {
      return curves.length ? byModel((v) => v, confidence) : 'd.confidence';
    },
    /**
     * `confidence R (calibrated C)`, two decimals each; where no curve applies C is R, rounded
     * once and written twice.
     */
    get confidencePair() {
      const raw = fixedSql('d.confidence', 2);
      return curves.length
        ? `'confidence ' || ${raw} || ' (calibrated ' || ${fixedSql(this.calibratedFloat, 2)} || ')'`
        : `replace('confidence # (calibrated #)', '#', ${raw})`;
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
