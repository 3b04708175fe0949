/**
 * The eBird checklist file as the database writes it (issue 34; docs/exports.md "Performance"):
 * byte for byte what ./ebird.ts writes from rows (a test holds the two to each other), one text
 * value a checklist (all its species' lines), so the COPY reader can cut the 1 MB parts between
 * checklists (Db.copyColumn's partBytes) and the hub holds no checklist, row or species.
 *
 * One sort of the detections by checklist, taxon and confidence feeds two aggregations: per taxon
 * of a checklist (its calls, best confidence and model, three most confident detections, in the
 * sorted order ./ebird.ts keeps them in), then per checklist (its lines, joined by a mark that the
 * checklist's own cells replace once they are known: place, date, effort, the submission comment).
 * The statement goes day by day (a lateral subquery a local day), so its first checklists leave
 * before the last day is read and each day sorts in memory; a day's checklists are in the file's
 * order: satellite name, satellite, position.
 *
 * What eBird's rules ask of a value (ebirdValue: no quoting, commas and line breaks replaced) is
 * done here for what the hub knows before the statement runs: the taxa's names, the satellites'
 * names and places, the models' ids, the link prefix, the team's name. A model id the hub no
 * longer has (deleted since) is cleaned by a SQL approximation of ebirdValue.
 */
import { CALL_END, type ExportTeamStatement } from '../../detections/service.ts';
import type { EbirdTaxon } from './ebird-names.ts';
import { ebirdPlace, ebirdValue } from './ebird.ts';
import { coord } from './shared.ts';
import { coordSql, CRLF, fixedSql, gridSql, HOUR_SQL } from './lines-sql.ts';
import { toGrid } from '../../sensitive/service.ts';

export interface EbirdLinesOptions {
  /** What a detection's id is appended to for its dashboard link. */
  detectionUrlPrefix: string;
  /** Lower-case species codes generalised (every eBird file leaves the team). */
  sensitive: readonly string[];
  /** Written for a generalised row's satellite name. */
  withheld: string;
  teamName: string;
  counts: 'presence' | 'calls';
  /** The team's species keys (lower-case codes) and their eBird taxa: a row of any other species is left out. */
  taxa: ReadonlyArray<{ key: string; taxon: EbirdTaxon }>;
  /** The hub's model ids: a checklist names its models from these (and cleans any other in SQL). */
  models: readonly string[];
  /** The team's satellites: their names and places are cleaned and looked up by the hub. */
  satellites: ReadonlyArray<{ name: string; latitude: number | null; longitude: number | null }>;
}

/**
 * What ebirdValue makes of `value` inside a longer value, between a space and `after`: its
 * characters replaced and its spaces run together with its neighbours', as in the whole.
 */
export function ebirdInner(value: string, after: string): string {
  const whole = ebirdValue(`x ${value}${after}`);
  return whole.slice(2, whole.length - after.length);
}

/** ebirdValue in SQL, for what the hub could not clean first (a deleted model's id): trims ASCII and common spaces only. */
const ebirdValueSql = (x: string) =>
  `regexp_replace(translate(regexp_replace(${x}, '[\\r\\n\\t\\v\\f\\u0085\\u2028\\u2029]+', ' ', 'g'), '",', '''' || ';'), ' {2,}', ' ', 'g')`;

/** Up to this many models are named from a bit mask; more than that are named by the SQL path for unknown ids. */
const MASK_MODELS = 62;
/** Masks whose model lists are written out by the hub (2^6 lists); more models use a subquery per checklist. */
const LISTED_MASK_MODELS = 6;

/** Ends each species' line of a checklist until the checklist's own cells replace it: a control character no name or id here holds. */
const PART_MARK = 'chr(1)';

const sortedIds = (ids: readonly string[]) => [...ids].sort();

/**
 * The statement (over detections `d` and satellites `s`, under `where`, the export's filter) whose
 * one column is a whole checklist's lines. Its session's time zone must be the team's
 * (Db.copyColumn's `timeZone`): local days, dates and start times are read in it.
 */
export function ebirdChecklistSql(o: EbirdLinesOptions): ExportTeamStatement {
  return (add, where) => {
    const text = (v: string) => `${add(v)}::text`;
    const json = (v: Record<string, string>) => `${add(JSON.stringify(v))}::jsonb`;
    const taxa = o.taxa;
    const keys = `${add(taxa.map((t) => t.key))}::text[]`;
    const orders = `${add(taxa.map((t) => t.taxon.taxonomicOrder))}::float8[]`;
    const heads = `${add(
      taxa.map((t) => {
        const sci = t.taxon.scientificName;
        const cut = sci.indexOf(' ');
        return [t.taxon.commonName, cut > 0 ? sci.slice(0, cut) : sci, cut > 0 ? sci.slice(cut + 1) : ''].map(ebirdValue).join(',');
      }),
    )}::text[]`;

    const models = sortedIds(o.models).slice(0, MASK_MODELS);
    const modelIds = `${add(models)}::text[]`;
    const modelSafe = `${add(models.map((m) => ebirdInner(m, ';')))}::text[]`;
    const safeModel = (m: string, index: string) => `coalesce((${modelSafe})[${index}], ${ebirdValueSql(m)})`;

    const gen = o.sensitive.length ? `lower(d.species_code) = ANY(${add(o.sensitive)}::text[])` : null;
    const pick = (generalised: string, plain: string) => (gen ? `CASE WHEN ${gen} THEN ${generalised} ELSE ${plain} END` : plain);
    const at = pick(HOUR_SQL, 'd.detected_at');
    const fin = pick(`${HOUR_SQL} + interval '1 hour'`, `greatest(${CALL_END}, d.detected_at)`);

    // A checklist's key: its satellite (none for generalised rows), and for generalised rows the grid cell.
    const cell = (v: 'latitude' | 'longitude') => `(SELECT ${gridSql(`s.${v}`)} FROM satellites s WHERE s.id = d.satellite_id)`;
    const keyed = gen
      ? [
          `${pick('NULL::uuid', 'd.satellite_id')} AS sat`,
          `${pick(cell('latitude'), 'NULL::float8')} AS glat`,
          `${pick(cell('longitude'), 'NULL::float8')} AS glon`,
        ]
      : ['d.satellite_id AS sat'];
    const key = gen ? 'sat, glat, glon' : 'sat';

    // One local day's rows (the session's zone is the team's), by checklist, then taxon, then most
    // confident first, earlier first among equals (ebird.ts addRow's order). A generalised row's
    // time is its UTC hour, which in a zone off the whole hour can fall on the day before: the
    // window reaches an hour into the next day, and the row's own day decides.
    const rows = `SELECT ${keyed.join(', ')}, t.ord, t.head, d.confidence AS c, d.id, d.model_id AS model,
        array_position(${modelIds}, d.model_id) AS mi, ${at} AS at, ${fin} AS fin
      FROM detections d JOIN unnest(${keys}, ${orders}, ${heads}) AS t(key, ord, head) ON t.key = lower(d.species_code)
      ${where ? `${where} AND` : 'WHERE'} d.verification_status <> 'rejected' AND d.category = 'bird'
        AND d.detected_at >= days.d0::timestamptz AND d.detected_at < (days.d0 + interval '1 day')::timestamptz + interval '1 hour'
        AND (${at})::date = days.d0::date
      ORDER BY ${key}, t.ord, t.head, c DESC, at, d.id`;

    // Per taxon of a checklist: its calls, best confidence and model (the first row's: named by its index, or, where the hub
    // does not have it, the first unknown one's, which is then the first row's), three most confident.
    const species = `SELECT ${key}, ord, head, count(*) AS calls, max(c) AS best,
        (array_agg(mi))[1] AS best_mi, (array_agg(model) FILTER (WHERE mi IS NULL))[1] AS best_model, (array_agg(id))[1:3] AS ids,
        min(at) AS first, max(fin) AS fin, bit_or(1::bigint << (mi - 1)) AS mask,
        min(model COLLATE "C") FILTER (WHERE mi IS NULL) AS umin, max(model COLLATE "C") FILTER (WHERE mi IS NULL) AS umax
      FROM (${rows}) r GROUP BY ${key}, ord, head`;

    const link = text(ebirdInner(o.detectionUrlPrefix, 'a'));
    const number = o.counts === 'calls' ? 'g.calls::text' : "'X'";
    const calls = (n: string) => `${n}::text || CASE WHEN ${n} = 1 THEN ' call' ELSE ' calls' END`;
    const part = `concat(g.head, ',', ${number}, ',Detected acoustically by Chorus (model ', ${safeModel('g.best_model', 'g.best_mi')},
        '; best confidence ', ${fixedSql('g.best', 2)}, '); ', ${calls('g.calls')}, '; ', ${link}, g.ids[1],
        ' ' || ${link} || g.ids[2], ' ' || ${link} || g.ids[3])`;

    // Per checklist: its species' lines (in taxonomic order: the input's), each ended by the mark.
    const checklists = `SELECT ${key}, min(first) AS first, max(fin) AS fin, sum(calls) AS calls,
        bit_or(mask) AS mask, min(umin) AS umin, max(umax) AS umax, string_agg(${part}, ${PART_MARK}) || ${PART_MARK} AS parts
      FROM (${species}) g GROUP BY ${key}`;

    const listed = models.length <= LISTED_MASK_MODELS;
    const maskText = (mask: number) => {
      const names = models.filter((_, i) => mask & (1 << i));
      return `${names.length > 1 ? 'models' : 'model'} ${names.map((m) => ebirdInner(m, ';')).join('; ')}`;
    };
    const named = listed
      ? `(${add(Array.from({ length: 2 ** models.length }, (_, mask) => maskText(mask)))}::text[])[l.mask::int + 1]`
      : 'NULL';
    const modelList = `CASE WHEN l.umin IS NULL AND ${named} IS NOT NULL THEN ${named} ELSE (
        SELECT CASE WHEN count(*) > 1 THEN 'models ' ELSE 'model ' END || string_agg(n, '; ' ORDER BY id COLLATE "C")
        FROM (SELECT (${modelIds})[i] AS id, (${modelSafe})[i] AS n FROM generate_series(1, ${models.length}) i WHERE (l.mask >> (i - 1)) & 1 = 1
          UNION ALL SELECT l.umin, ${ebirdValueSql('l.umin')} WHERE l.umin IS NOT NULL
          UNION ALL SELECT l.umax, ${ebirdValueSql('l.umax')} WHERE l.umax IS NOT NULL AND l.umax <> l.umin) m) END`;

    const names = new Map<string, { location: string; submission: string }>();
    const places: Record<string, string> = {};
    for (const s of [...o.satellites, { name: o.withheld, latitude: null, longitude: null }]) {
      names.set(s.name, {
        location: ebirdValue(s.name),
        submission: ebirdValue(
          `Automated acoustic monitoring by Chorus satellite '${s.name}' (team ${o.teamName}). Species identified by machine learning (x`,
        ).slice(0, -1),
      });
      for (const [lat, lon] of [
        [s.latitude, s.longitude],
        [toGrid(s.latitude), toGrid(s.longitude)],
      ]) {
        const p = ebirdPlace(lat ?? null, lon ?? null);
        places[`${coord(lat ?? null).text},${coord(lon ?? null).text}`] = `${ebirdValue(p.state)},${ebirdValue(p.country)}`;
      }
    }
    const byName = (field: 'location' | 'submission') => json(Object.fromEntries([...names].map(([name, v]) => [name, v[field]])));
    const minutes = `least(1440, greatest(1, ceil(extract(epoch from date_trunc('milliseconds', l.fin) - date_trunc('milliseconds', l.first)) / 60)))::text`;
    const suffix = `concat(',', coalesce(${byName('location')} ->> l.name, ${ebirdValueSql('l.name')}), ',', ${coordSql('l.lat')}, ',', ${coordSql('l.lon')}, ',',
        to_char(l.first, 'MM/DD/YYYY,HH24:MI'), ',', coalesce(${json(places)} ->> (${coordSql('l.lat')} || ',' || ${coordSql('l.lon')}), ','),
        ',Stationary,1,', ${minutes}, ',N,,,',
        coalesce(${byName('submission')} ->> l.name, 'Automated acoustic monitoring by Chorus satellite ''' || ${ebirdValueSql('l.name')} || ''' (team ' || ${text(ebirdInner(o.teamName, ')'))} || '). Species identified by machine learning ('),
        ${modelList}, ') from ', ${calls('l.calls')}, '; an automated recorder does not report every species present.', ${CRLF})`;

    // The checklists of one day with their satellites' names and places, in the file's order.
    const day = `SELECT replace(l.parts, ${PART_MARK}, ${suffix}) AS line
      FROM (SELECT c.*, coalesce(s.name, ${text(o.withheld)}) COLLATE "C" AS name,
              ${gen ? 'CASE WHEN c.sat IS NULL THEN c.glat ELSE s.latitude END' : 's.latitude'} AS lat,
              ${gen ? 'CASE WHEN c.sat IS NULL THEN c.glon ELSE s.longitude END' : 's.longitude'} AS lon
            FROM (${checklists}) c LEFT JOIN satellites s ON s.id = c.sat) l
      ORDER BY l.name, l.sat, l.lat, l.lon`;

    // Day by day, so the first checklists leave before the last day is read: the days from the
    // first row's to the last's (a generalised row's hour may start the day before its row).
    return `SELECT x.line FROM (SELECT min(d.detected_at) - interval '1 hour' AS lo, max(d.detected_at) AS hi FROM detections d ${where}) b
        CROSS JOIN generate_series(b.lo::date, b.hi::date, interval '1 day') AS days(d0)
        CROSS JOIN LATERAL (${day}) x`;
  };
}
