import { col, shape, type Db, type RowOf } from '../../infra/db/index.ts';

/** One stored audio chunk (table `chunks`); `id` is the satellite's chunkId. */
export const ChunkRow = shape({
  id: col.text(),
  tenantId: col.text(),
  satelliteId: col.text(),
  recordedAt: col.date(),
  durationMs: col.int(),
  sampleRate: col.int(),
  storageKey: col.text(),
  bytes: col.int(),
  latitude: col.nullable(col.num()),
  longitude: col.nullable(col.num()),
  receivedAt: col.date(),
  /** When its audio object was removed (the row stays); null while stored. */
  audioDeletedAt: col.nullable(col.date()),
  /** Why: audio retention, or a human voice heard in it (voice-privacy.ts); null while stored. */
  audioRemovedReason: col.nullable(col.oneOf(['retention', 'human_voice'] as const)),
});
export type ChunkRow = RowOf<typeof ChunkRow>;
const ROW = `id, tenant_id AS "tenantId", satellite_id AS "satelliteId", recorded_at AS "recordedAt", duration_ms AS "durationMs",
  sample_rate AS "sampleRate", storage_key AS "storageKey", bytes, latitude, longitude, received_at AS "receivedAt",
  audio_deleted_at AS "audioDeletedAt", audio_removed_reason AS "audioRemovedReason"`;

/** A chunk as ingest stores it (the retention run sets `audioDeletedAt` later). */
export type NewChunk = Omit<ChunkRow, 'audioDeletedAt' | 'audioRemovedReason'>;

const IngestFacts = shape({ known: col.bool(), chunkTenantId: col.nullable(col.text()), chunkSatelliteId: col.nullable(col.text()) });

const Stored = shape({
  i: col.int(),
  known: col.bool(),
  inserted: col.bool(),
  chunkTenantId: col.nullable(col.text()),
  chunkSatelliteId: col.nullable(col.text()),
  storageKey: col.nullable(col.text()),
});

const TenantOf = shape({ tenantId: col.text() });

const Unclassified = shape({
  id: col.text(),
  tenantId: col.text(),
  satelliteId: col.text(),
  storageKey: col.text(),
  receivedAt: col.date(),
});

export function createAudioRepo(db: Db) {
  return {
    /**
     * What ingest needs before writing anything, in one round trip: whether the satellite exists
     * in that team, and whether the chunk id is already taken (and by whom: chunk ids are global).
     */
    ingestFacts: (tenantId: string, satelliteId: string, chunkId: string) =>
      db.one(
        IngestFacts,
        `SELECT s.id IS NOT NULL AS known, c.tenant_id AS "chunkTenantId", c.satellite_id AS "chunkSatelliteId"
         FROM (VALUES (1)) v
         LEFT JOIN satellites s ON s.tenant_id = $1 AND s.id = $2
         LEFT JOIN chunks c ON c.id = $3`,
        [tenantId, satelliteId, chunkId],
      ),

    /**
     * Stores many chunk rows in ONE statement (the ingester batches the chunks arriving together;
     * on PGlite every statement costs main-thread time, so ingest is one statement per batch) and
     * answers, per item in order: whether the satellite exists in that team, whether this
     * statement inserted the row, and who held the chunk id before (chunk ids are global; the
     * `chunks` read sees the table as it was before this statement). Idempotent on the chunk id.
     * Scalar parameters in a VALUES list: on PGlite array parameters cost more than they save.
     */
    storeMany: async (cs: ReadonlyArray<NewChunk>) => {
      const casts = ['uuid', 'uuid', 'uuid', 'timestamptz', 'int', 'int', 'text', 'int', 'float8', 'float8', 'timestamptz'];
      const rows = await db.query(
        Stored,
        `WITH v (i, id, tenant_id, satellite_id, recorded_at, duration_ms, sample_rate, storage_key, bytes, latitude, longitude, received_at) AS (
           VALUES ${cs.map((_, i) => `(${i}, ${casts.map((t, j) => `$${11 * i + j + 1}::${t}`).join(', ')})`).join(', ')}
         ), ins AS (
           INSERT INTO chunks (id, tenant_id, satellite_id, recorded_at, duration_ms, sample_rate, storage_key, bytes, latitude, longitude, received_at)
           SELECT v.id, v.tenant_id, v.satellite_id, v.recorded_at, v.duration_ms, v.sample_rate, v.storage_key, v.bytes, v.latitude, v.longitude, v.received_at
           FROM v JOIN satellites s ON s.tenant_id = v.tenant_id AND s.id = v.satellite_id
           ORDER BY v.i
           ON CONFLICT (id) DO NOTHING
           RETURNING id, satellite_id, storage_key
         )
         SELECT v.i, s.id IS NOT NULL AS known, ins.id IS NOT NULL AS inserted,
           c.tenant_id AS "chunkTenantId", c.satellite_id AS "chunkSatelliteId", c.storage_key AS "storageKey"
         FROM v
         LEFT JOIN satellites s ON s.tenant_id = v.tenant_id AND s.id = v.satellite_id
         LEFT JOIN ins ON ins.id = v.id AND ins.satellite_id = v.satellite_id AND ins.storage_key = v.storage_key
         LEFT JOIN chunks c ON c.id = v.id
         ORDER BY v.i`,
        cs.flatMap((c) => [
          c.id,
          c.tenantId,
          c.satelliteId,
          c.recordedAt,
          c.durationMs,
          c.sampleRate,
          c.storageKey,
          c.bytes,
          c.latitude,
          c.longitude,
          c.receivedAt,
        ]),
      );
      // The same chunk twice in one batch (two deliveries at once): one row was inserted; only the
      // first of the items that match it is told so, the others are its redeliveries.
      const told = new Set<number>();
      return rows.map(({ i, known, inserted, chunkTenantId, chunkSatelliteId, storageKey }) => {
        const first = cs.findIndex((c) => c.id === cs[i].id && c.satelliteId === cs[i].satelliteId && c.storageKey === cs[i].storageKey);
        const mine = inserted && !told.has(first);
        if (mine) told.add(first);
        return { known, inserted: mine, chunkTenantId, chunkSatelliteId, storageKey };
      });
    },

    /** Marks a chunk whose audio object was removed because a voice was heard in it; true when this call marked it. */
    markVoiceRemoved: async (tenantId: string, id: string, at: Date) =>
      (await db.run(
        `UPDATE chunks SET audio_deleted_at = $3, audio_removed_reason = 'human_voice'
         WHERE tenant_id = $1 AND id = $2 AND audio_deleted_at IS NULL`,
        [tenantId, id, at],
      )) > 0,

    find: (tenantId: string, id: string) =>
      db.maybeOne(ChunkRow, `SELECT ${ROW} FROM chunks WHERE tenant_id = $1 AND id = $2`, [tenantId, id]),

    /** The guard's team resolver for `chunk` resources. */
    teamOfChunk: async (id: string) =>
      (await db.maybeOne(TenantOf, 'SELECT tenant_id AS "tenantId" FROM chunks WHERE id = $1', [id]))?.tenantId ?? null,

    /**
     * Chunks received since a time without any detection (the worker's mark of a finished chunk),
     * across all teams, in pages (start-up re-enqueueing is a hub job, not a team's request).
     * Keyset on (received_at, id).
     */
    unclassifiedSince: (since: Date, after: { receivedAt: Date; id: string } | null, limit: number) =>
      db.query(
        Unclassified,
        `SELECT c.id, c.tenant_id AS "tenantId", c.satellite_id AS "satelliteId", c.storage_key AS "storageKey", c.received_at AS "receivedAt"
         FROM chunks c
         WHERE c.classified_at IS NULL AND c.received_at >= $1 AND ($2::timestamptz IS NULL OR (c.received_at, c.id) > ($2::timestamptz, $3::uuid))
           AND NOT EXISTS (SELECT 1 FROM detections d WHERE d.chunk_id = c.id)
         ORDER BY c.received_at, c.id
         LIMIT $4`,
        [since, after?.receivedAt ?? null, after?.id ?? null, limit],
      ),

    /** The worker classified these chunks (detections or none): the start-up re-queue leaves them be. One statement for all. */
    markClassified: (marks: ReadonlyArray<{ tenantId: string; chunkId: string; at: Date }>) =>
      db.run(
        `UPDATE chunks c SET classified_at = m.at
         FROM unnest($1::uuid[], $2::uuid[], $3::timestamptz[]) AS m (tenant_id, id, at)
         WHERE c.tenant_id = m.tenant_id AND c.id = m.id AND c.classified_at IS NULL`,
        [marks.map((m) => m.tenantId), marks.map((m) => m.chunkId), marks.map((m) => m.at)],
      ),
  };
}

export type AudioRepo = ReturnType<typeof createAudioRepo>;
