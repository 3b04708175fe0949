import { col, containsPattern, Count, shape, type Db, type RowOf } from '../../infra/db/index.ts';
import { categoryCondition } from './category-sql.ts';
import { CALL_END, Params, teamIs, utcIso, VERIFICATION_STATUSES, whereOf, type DetectionListFilter } from './list-sql.ts';

/** The columns of a detection as the worker writes them (COLUMNS), shared by the shapes below. */
const STORED = {
  id: col.text(),
  tenantId: col.text(),
  satelliteId: col.text(),
  chunkId: col.text(),
  speciesCode: col.text(),
  scientificName: col.text(),
  commonName: col.text(),
  category: col.text(),
  confidence: col.num(),
  startMs: col.int(),
  endMs: col.int(),
  modelId: col.text(),
  isFirstOfSeason: col.bool(),
  isFirstOfDay: col.bool(),
  isRare: col.bool(),
  rareReason: col.nullable(col.text()),
  /** The window ran past the chunks that came: completed with silence (migration 0026). */
  padded: col.bool(),
  /** The range filter flagged the species out of range at the satellite that week (migration 0033). */
  outOfRange: col.bool(),
  /** What judged its range (range_model, ebird, team_list); null when nothing did. */
  rangeSource: col.nullable(col.oneOf(['range_model', 'ebird', 'team_list'] as const)),
  /** The range model's score for it there; null unless the range model judged it. */
  rangeScore: col.nullable(col.num()),
};

/**
 * One detection as the API shows it (spec hub-http-api §2 "Detection"), as ROW selects it.
 * detectedAt, createdAt and callEndAt are ISO 8601 in UTC, formatted by the database: a listed
 * page never parses and re-prints its timestamps. callId: the call's representative (its first
 * row), null when this row is the representative; callChunks and callEndAt: the chunks the call
 * spans and where it ends (on the representative). pinned: for the team (POST /detections/:id/pin).
 */
export const DetectionRow = shape({
  ...STORED,
  satelliteName: col.nullable(col.text()),
  detectedAt: col.text(),
  verificationStatus: col.oneOf(VERIFICATION_STATUSES),
  tentative: col.bool(),
  promoted: col.bool(),
  createdAt: col.text(),
  pinned: col.bool(),
  callId: col.nullable(col.text()),
  callChunks: col.int(),
  callEndAt: col.text(),
  /** On an observation's listed row, the satellites that heard it (migration 0036); 1 otherwise. */
  recorders: col.int(),
  /** Every chunk the detection's window spans, its own chunk first (one for a window inside its chunk). */
  spanChunkIds: col.array(col.text()),
  /** The species threshold it fell below when recorded, and was held tentative for (migration 0034); null: none. */
  belowThreshold: col.nullable(col.num()),
});
export type DetectionRow = RowOf<typeof DetectionRow>;

/**
 * What the inference worker writes (COLUMNS): a row before review, aggregation and the satellite
 * join. spanChunkIds: null for a window inside its chunk.
 */
export const NewDetection = shape({
  ...STORED,
  detectedAt: col.date(),
  createdAt: col.date(),
  spanChunkIds: col.nullable(col.array(col.text())),
});
export type NewDetection = RowOf<typeof NewDetection>;

/** DetectionRow's columns, of detections `d` LEFT JOIN satellites `s`. */
const ROW = `d.id, d.tenant_id AS "tenantId", d.satellite_id AS "satelliteId", s.name AS "satelliteName", d.chunk_id AS "chunkId",
  d.species_code AS "speciesCode", d.scientific_name AS "scientificName", d.common_name AS "commonName", d.category,
  d.confidence, ${utcIso('d.detected_at')} AS "detectedAt", d.start_ms AS "startMs", d.end_ms AS "endMs", d.model_id AS "modelId",
  d.verification_status AS "verificationStatus", d.tentative, d.promoted, d.is_first_of_season AS "isFirstOfSeason",
  d.is_first_of_day AS "isFirstOfDay", d.is_rare AS "isRare", d.rare_reason AS "rareReason", ${utcIso('d.created_at')} AS "createdAt",
  d.pinned_at IS NOT NULL AS pinned, d.call_id AS "callId", d.call_chunks AS "callChunks", d.recorders,
  ${utcIso(CALL_END)} AS "callEndAt", d.padded, coalesce(d.span_chunk_ids, ARRAY[d.chunk_id])::text[] AS "spanChunkIds",
  d.out_of_range AS "outOfRange", d.range_source AS "rangeSource", d.range_score::float8 AS "rangeScore",
  d.below_threshold AS "belowThreshold"`;

const COLUMNS = [
  'id',
  'tenant_id',
  'satellite_id',
  'chunk_id',
  'species_code',
  'scientific_name',
  'common_name',
  'category',
  'confidence',
  'detected_at',
  'start_ms',
  'end_ms',
  'model_id',
  'is_first_of_season',
  'is_first_of_day',
  'is_rare',
  'rare_reason',
  'created_at',
  'padded',
  'span_chunk_ids',
  'out_of_range',
  'range_source',
  'range_score',
] as const;

/**
 * The chunk a job names, with what classifying it needs (null when taken back or its team or
 * satellite deleted). done: classified before (marked, or detections from before the mark); failed: marked as
 * failed by an earlier job (migration 0020), a success clears the mark.
 */
export const ChunkToClassify = shape({
  satelliteId: col.text(),
  satelliteName: col.nullable(col.text()),
  recordedAt: col.date(),
  durationMs: col.int(),
  storageKey: col.text(),
  done: col.bool(),
  failed: col.bool(),
  /** Its audio was removed because a human voice was heard in it (voice privacy). */
  voiceRemoved: col.bool(),
  /** When the hub stored it (its clock): a window waiting for the chunk after it counts from here. */
  receivedAt: col.date(),
  /** Where it was recorded, when the satellite said (the range filter's position before the satellite's). */
  latitude: col.nullable(col.num()),
  longitude: col.nullable(col.num()),
});
export type ChunkToClassify = RowOf<typeof ChunkToClassify>;

/** A chunk recorded after another by the same satellite (followingChunks): a long window's neighbour. */
export const FollowingChunk = shape({
  id: col.text(),
  recordedAt: col.date(),
  durationMs: col.int(),
  storageKey: col.text(),
  /** Its audio was deleted (retention, privacy): the window has silence there. */
  audioGone: col.bool(),
});
export type FollowingChunk = RowOf<typeof FollowingChunk>;

/** Per species code the recorder asks about, the team's record (teamRecord). */
const TeamRecordRow = shape({
  code: col.text(),
  done: col.bool(),
  teamSince: col.nullable(col.date()),
  today: col.bool(),
  season: col.bool(),
  records: col.int(),
  lastSeenAt: col.nullable(col.date()),
});

/** A detection as find reads it: the listed row and where its chunk's audio lives (null once the chunk is gone). */
export const DetectionWithAudio = shape({ ...DetectionRow.properties, storageKey: col.nullable(col.text()) });
export type DetectionWithAudio = RowOf<typeof DetectionWithAudio>;

const SpeciesTallyRow = shape({ speciesCode: col.text(), commonName: col.text(), category: col.text(), count: col.int() });
const TeamOf = shape({ tenantId: col.text() });
const ChunkId = shape({ id: col.text() });

const HasColumn = shape({ found: col.bool() });

export function createDetectionsRepo(db: Db) {
  // Whether migration 0035 found pgvector (the `embedding` column): asked once per repo, inside the
  // caller's transaction (on PGlite a statement outside it would wait for it).
  let vectorColumn: Promise<boolean> | null = null;
  const hasVectorColumn = (tx: Db) =>
    (vectorColumn ??= tx
      .one(
        HasColumn,
        `SELECT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = 'detection_embeddings'::regclass
           AND attname = 'embedding' AND NOT attisdropped) AS found`,
      )
      .then(
        (r) => r.found,
        (err) => {
          vectorColumn = null; // a failed transaction answers nothing about the schema: ask again next time
          throw err;
        },
      ));
  return {
    chunkToClassify: (tenantId: string, chunkId: string) =>
      db.maybeOne(
        ChunkToClassify,
        `SELECT c.satellite_id AS "satelliteId", s.name AS "satelliteName", c.recorded_at AS "recordedAt", c.duration_ms AS "durationMs", c.storage_key AS "storageKey",
           (c.classified_at IS NOT NULL OR EXISTS (SELECT 1 FROM detections d WHERE d.chunk_id = c.id)) AS done, c.inference_failed_at IS NOT NULL AS failed,
           c.audio_removed_reason IS NOT DISTINCT FROM 'human_voice' AS "voiceRemoved", c.received_at AS "receivedAt",
           c.latitude, c.longitude
         FROM chunks c LEFT JOIN satellites s ON s.id = c.satellite_id
         WHERE c.id = $1 AND c.tenant_id = $2`,
        [chunkId, tenantId],
      ),

    /**
     * The satellite's chunks recorded after `after` and before `before`, oldest first: what a
     * window longer than the chunk at `after` is assembled from (the chunks index on satellite, time).
     */
    followingChunks: (tenantId: string, satelliteId: string, after: Date, before: Date) =>
      db.query(
        FollowingChunk,
        `SELECT c.id, c.recorded_at AS "recordedAt", c.duration_ms AS "durationMs", c.storage_key AS "storageKey", c.audio_deleted_at IS NOT NULL AS "audioGone"
         FROM chunks c
         WHERE c.satellite_id = $2 AND c.tenant_id = $1 AND c.recorded_at > $3 AND c.recorded_at < $4
         ORDER BY c.recorded_at, c.id LIMIT 50`,
        [tenantId, satelliteId, after, before],
      ),

    /**
     * What the worker must know of the team's record before storing a chunk's detections, in one
     * read inside its transaction: whether the chunk has its detections already (idempotence),
     * the team's earliest detection, and per species among `codes` whether the team detected it
     * that day and that season, how often (counted up to `few`) and when last (rarity).
     */
    teamRecord: async (
      tx: Db,
      q: { tenantId: string; chunkId: string; codes: string[]; day: readonly [Date, Date]; season: readonly [Date, Date]; few: number },
    ) => {
      const rows = await tx.query(
        TeamRecordRow,
        `SELECT c.code,
           EXISTS (SELECT 1 FROM detections d WHERE d.chunk_id = $3) AS done,
           (SELECT min(d.detected_at) FROM detections d WHERE d.tenant_id = $1) AS "teamSince",
           EXISTS (SELECT 1 FROM detections d WHERE d.tenant_id = $1 AND d.species_code = c.code AND d.detected_at >= $4 AND d.detected_at < $5) AS today,
           EXISTS (SELECT 1 FROM detections d WHERE d.tenant_id = $1 AND d.species_code = c.code AND d.detected_at >= $6 AND d.detected_at < $7) AS season,
           (SELECT count(*)::int FROM (SELECT 1 FROM detections d WHERE d.tenant_id = $1 AND d.species_code = c.code LIMIT $8) x) AS records,
           (SELECT max(d.detected_at) FROM detections d WHERE d.tenant_id = $1 AND d.species_code = c.code) AS "lastSeenAt"
         FROM unnest($2::text[]) AS c(code)`,
        [q.tenantId, q.codes, q.chunkId, q.day[0], q.day[1], q.season[0], q.season[1], q.few],
      );
      return {
        done: rows.some((r) => r.done),
        teamSince: rows[0]?.teamSince ? new Date(rows[0].teamSince) : null,
        seenToday: new Set(rows.filter((r) => r.today).map((r) => r.code)),
        seenSeason: new Set(rows.filter((r) => r.season).map((r) => r.code)),
        bySpecies: new Map(rows.map((r) => [r.code, { records: r.records, lastSeenAt: r.lastSeenAt ? new Date(r.lastSeenAt) : null }])),
      };
    },

    /** One multi-row insert. */
    insertMany: async (tx: Db, rows: NewDetection[]) => {
      if (rows.length === 0) return;
      const params: unknown[] = [];
      const values = rows.map((r) => {
        const v = [
          r.id,
          r.tenantId,
          r.satelliteId,
          r.chunkId,
          r.speciesCode,
          r.scientificName,
          r.commonName,
          r.category,
          r.confidence,
          r.detectedAt,
          r.startMs,
          r.endMs,
          r.modelId,
          r.isFirstOfSeason,
          r.isFirstOfDay,
          r.isRare,
          r.rareReason,
          r.createdAt,
          r.padded,
          r.spanChunkIds,
          r.outOfRange,
          r.rangeSource,
          r.rangeScore,
        ];
        const start = params.length;
        params.push(...v);
        return `(${v.map((_, i) => `$${start + i + 1}`).join(', ')})`;
      });
      await tx.run(`INSERT INTO detections (${COLUMNS.join(', ')}) VALUES ${values.join(', ')}`, params);
    },

    /** Holds new rows below their species threshold: tentative, not promoted, the threshold kept (id → threshold). */
    holdBelowThreshold: async (tx: Db, held: ReadonlyMap<string, number>) => {
      if (held.size === 0) return;
      await tx.run(
        `UPDATE detections d SET tentative = true, promoted = false, below_threshold = h.threshold
         FROM unnest($1::uuid[], $2::float8[]) AS h (id, threshold) WHERE d.id = h.id`,
        [[...held.keys()], [...held.values()]],
      );
    },

    /** The window embeddings of stored detections (float32 little-endian), one multi-row insert. */
    insertEmbeddings: async (tx: Db, rows: Array<{ detectionId: string; tenantId: string; modelId: string; vector: Float32Array }>) => {
      if (rows.length === 0) return;
      // Where pgvector is in force the `embedding` column is written here, as pgvector's text: the
      // trigger of migration 0035 would decode the bytes in SQL instead (milliseconds per row).
      const withVector = await hasVectorColumn(tx);
      const params: unknown[] = [];
      const values = rows.map((r) => {
        const bytes = Buffer.alloc(r.vector.length * 4);
        r.vector.forEach((v, i) => bytes.writeFloatLE(v, i * 4));
        params.push(r.detectionId, r.tenantId, r.modelId, r.vector.length, bytes);
        if (withVector) params.push(`[${Array.from(r.vector, (v) => (Number.isFinite(v) ? v : 0)).join(',')}]`);
        const n = params.length;
        return withVector
          ? `($${n - 5}, $${n - 4}, $${n - 3}, $${n - 2}, $${n - 1}, $${n}::vector)`
          : `($${n - 4}, $${n - 3}, $${n - 2}, $${n - 1}, $${n})`;
      });
      await tx.run(
        `INSERT INTO detection_embeddings (detection_id, tenant_id, model_id, dims, vector${withVector ? ', embedding' : ''})
         VALUES ${values.join(', ')} ON CONFLICT (detection_id) DO NOTHING`,
        params,
      );
    },

    /** Of `ids`, the rows that head their call (not continuations), as the worker wrote them. */
    callHeadsAmong: (tx: Db, ids: string[]) =>
      tx.query(
        NewDetection,
        `SELECT id, tenant_id AS "tenantId", satellite_id AS "satelliteId", chunk_id AS "chunkId", species_code AS "speciesCode",
           scientific_name AS "scientificName", common_name AS "commonName", category, confidence, detected_at AS "detectedAt",
           start_ms AS "startMs", end_ms AS "endMs", model_id AS "modelId", is_first_of_season AS "isFirstOfSeason",
           is_first_of_day AS "isFirstOfDay", is_rare AS "isRare", rare_reason AS "rareReason", created_at AS "createdAt",
           padded, span_chunk_ids::text[] AS "spanChunkIds", out_of_range AS "outOfRange", range_source AS "rangeSource", range_score::float8 AS "rangeScore"
         FROM detections WHERE id = ANY($1::uuid[]) AND call_id IS NULL ORDER BY detected_at, id`,
        [ids],
      ),

    find: (tenantId: string, id: string) =>
      db.maybeOne(
        DetectionWithAudio,
        `SELECT ${ROW}, c.storage_key AS "storageKey"
         FROM detections d
         LEFT JOIN satellites s ON s.id = d.satellite_id
         LEFT JOIN chunks c ON c.id = d.chunk_id
         WHERE d.tenant_id = $1 AND d.id = $2`,
        [tenantId, id],
      ),

    /**
     * The chunks a call's audio lies in, oldest first (xeno-canto's whole-call recording): from
     * the first to the last chunk that any of its rows' windows spans (span_chunk_ids, else its
     * own chunk), and every chunk of the satellite recorded between them, so a stitched call's
     * gap of up to one chunk is heard too; the satellite's own recording only, where other
     * satellites heard the call too (an observation). At most `limit`.
     */
    callChunkIds: async (tenantId: string, detectionId: string, limit: number) =>
      (
        await db.query(
          ChunkId,
          `WITH span AS (
             SELECT unnest(coalesce(d.span_chunk_ids, ARRAY[d.chunk_id])) AS id FROM detections d
             WHERE d.tenant_id = $1 AND (d.id = $2 OR d.call_id = $2)
               -- One recording: an observation's other satellites (observations.ts) are theirs.
               AND d.satellite_id = (SELECT satellite_id FROM detections WHERE id = $2)
           ), ends AS (
             SELECT c.satellite_id, min(c.recorded_at) AS lo, max(c.recorded_at) AS hi
             FROM chunks c JOIN span ON span.id = c.id WHERE c.tenant_id = $1 GROUP BY c.satellite_id
           )
           SELECT c.id FROM chunks c JOIN ends e ON c.satellite_id = e.satellite_id AND c.recorded_at BETWEEN e.lo AND e.hi
           WHERE c.tenant_id = $1 ORDER BY c.recorded_at, c.id LIMIT $3`,
          [tenantId, detectionId, limit],
        )
      ).map((r) => r.id),

    /** Detections per species under a filter (what an export would list): the eBird checklist's skip report. */
    speciesTally(f: DetectionListFilter) {
      const p = new Params();
      return db.query(
        SpeciesTallyRow,
        `SELECT d.species_code AS "speciesCode", min(d.common_name) AS "commonName", min(d.category) AS category, count(*)::int AS count
         FROM detections d ${whereOf(f, p, f.start, f.end)} GROUP BY d.species_code ORDER BY count(*) DESC`,
        p.values,
      );
    },

    /** The guard's team resolver for `detection` resources. */
    teamOfDetection: async (id: string) =>
      (await db.maybeOne(TeamOf, 'SELECT tenant_id AS "tenantId" FROM detections WHERE id = $1', [id]))?.tenantId ?? null,

    async list(f: DetectionListFilter): Promise<{ rows: DetectionRow[]; total: number | null }> {
      const page = new Params();
      const w = whereOf(f, page, f.start, f.end);
      const dir = f.sortDir === 'asc' ? 'ASC' : 'DESC';
      // id breaks ties so pages never overlap or skip.
      const order =
        f.sortBy === 'confidence'
          ? `d.confidence ${dir}, d.detected_at ${dir}, d.id ${dir}`
          : f.sortBy === 'species'
            ? `d.common_name ${dir}, d.detected_at DESC, d.id DESC`
            : `d.detected_at ${dir}, d.id ${dir}`;
      // The page's ids come from the index alone; only those rows are then read whole and joined,
      // so a deep offset skips index entries instead of full rows with their satellite.
      const rowsSql = `SELECT ${ROW} FROM (SELECT d.id FROM detections d ${w} ORDER BY ${order} LIMIT ${page.add(f.limit)} OFFSET ${page.add(f.offset)}) page
         JOIN detections d ON d.id = page.id LEFT JOIN satellites s ON s.id = d.satellite_id
         ORDER BY ${order}`;
      const count = f.withCount ? countStatement(f) : null;
      // On PostgreSQL the pool runs both at once; PGlite takes them in turn.
      const [rows, total] = await Promise.all([
        db.query(DetectionRow, rowsSql, page.values),
        count ? db.one(Count, count.sql, count.params).then((r) => r.n) : null,
      ]);
      return { rows, total };
    },
  };
}

const DAY_MS = 86_400_000;
const dayFloor = (t: Date) => new Date(Math.floor(t.getTime() / DAY_MS) * DAY_MS);
const dayCeil = (t: Date) => new Date(Math.ceil(t.getTime() / DAY_MS) * DAY_MS);
const isoDay = (t: Date) => t.toISOString().slice(0, 10);

/** The day counts' confidence thresholds (migration 0042): 0, 0.05, …, 1, each the double nearest its decimal, as PostgreSQL reads it. */
const CONFIDENCE_STEPS = Array.from({ length: 21 }, (_, i) => (i * 5) / 100);

/**
 * `total` in one statement. When the filter is one detection_day_counts can answer (team, and
 * a satellite, a species, a minimum confidence or a name search, tentative or not, a window, the categories shown), whole UTC days inside the window are summed
 * from it and only the partial days at its edges are counted row by row; otherwise every
 * matching row is counted (docs/decisions.md "Detection counts").
 */
function countStatement(f: DetectionListFilter): { sql: string; params: unknown[] } {
  const p = new Params();
  const exact = (from: Date | undefined, to: Date | undefined) => `(SELECT count(*) FROM detections d ${whereOf(f, p, from, to)})`;
  // The first confidence step at or above minConfidence (0-based; its key in the day counts is one more).
  const step = f.minConfidence === undefined ? -1 : CONFIDENCE_STEPS.findIndex((t) => t >= f.minConfidence!);
  // The day counts hold the team, each satellite, each species, each confidence step and each name pair, one at a time.
  const rollable =
    !f.callId &&
    !f.verificationStatus &&
    Number(Boolean(f.satelliteId)) +
      Number(Boolean(f.species)) +
      Number(f.minConfidence !== undefined) +
      Number(Boolean(f.speciesSearch)) <=
      1 &&
    (f.minConfidence === undefined || step >= 0) &&
    f.outOfRange === undefined;
  const fullFrom = f.start ? dayCeil(f.start) : undefined;
  const fullTo = f.end ? dayFloor(f.end) : undefined;
  if (!rollable || (fullFrom && fullTo && fullFrom >= fullTo))
    return { sql: `SELECT ${exact(f.start, f.end)}::int AS n`, params: p.values };

  const where: string[] = [];
  if (f.tenantIds) where.push(teamIs(f.tenantIds, p, 'c'));
  if (f.satelliteId) where.push(`c.dim = 'satellite' AND c.key = ${p.add(f.satelliteId.toLowerCase())}`);
  else if (f.species) where.push(`c.dim = 'species' AND c.key = lower(${p.add(f.species)})`);
  else if (f.speciesSearch) {
    // Each (common, scientific) pair's names tested as the list tests each row's.
    const q = p.add(containsPattern(f.speciesSearch));
    const pairs = f.tenantIds ? teamIs(f.tenantIds, p, 'n') : 'true';
    where.push(
      `c.dim = 'name' AND c.key IN (SELECT n.key FROM detection_name_pairs n WHERE ${pairs} AND (n.common_name ILIKE ${q} OR n.scientific_name ILIKE ${q}))`,
    );
  } else if (step >= 0) {
    const keys = CONFIDENCE_STEPS.slice(step).map((_, i) => String(step + 1 + i));
    where.push(`c.dim = 'confidence' AND c.key = ANY(${p.add(keys)}::text[])`);
  } else where.push(`c.dim = 'all' AND c.key = ''`);
  if (fullFrom) where.push(`c.day >= ${p.add(isoDay(fullFrom))}::date`);
  if (fullTo) where.push(`c.day < ${p.add(isoDay(fullTo))}::date`);
  // Day rows are per category (migration 0012): sum those of the categories each team shows.
  if (f.categories) where.push(categoryCondition(f.categories, f.tenantIds, (v) => p.add(v), 'c'));
  const days = `(SELECT coalesce(sum(${f.includeTentative ? 'c.listed + c.tentative' : 'c.listed'}), 0) FROM detection_day_counts c ${where.length ? `WHERE ${where.join(' AND ')}` : ''})`;
  const parts = [days];
  // Whole days' rows between minConfidence and its step (compared as `real`, as the list compares them).
  if (step >= 0 && f.minConfidence! < CONFIDENCE_STEPS[step]!)
    parts.push(
      `(SELECT count(*) FROM detections d ${whereOf(f, p, fullFrom, fullTo)} AND d.confidence < ${p.add(CONFIDENCE_STEPS[step])})`,
    );
  if (f.start && fullFrom && f.start < fullFrom) parts.push(exact(f.start, fullFrom));
  if (f.end && fullTo && fullTo < f.end) parts.push(exact(fullTo, f.end));
  return { sql: `SELECT (${parts.join(' + ')})::int AS n`, params: p.values };
}

export type DetectionsRepo = ReturnType<typeof createDetectionsRepo>;
