import type { Db } from '../../infra/db/index.ts';

/** One stored audio chunk (table `chunks`); `id` is the satellite's chunkId. */
export interface ChunkRow {
  id: string;
  tenantId: string;
  satelliteId: string;
  recordedAt: Date;
  durationMs: number;
  sampleRate: number;
  storageKey: string;
  bytes: number;
  latitude: number | null;
  longitude: number | null;
  receivedAt: Date;
}

const ROW = `id, tenant_id AS "tenantId", satellite_id AS "satelliteId", recorded_at AS "recordedAt", duration_ms AS "durationMs",
  sample_rate AS "sampleRate", storage_key AS "storageKey", bytes, latitude, longitude, received_at AS "receivedAt"`;

/** Where a chunk's WAV lives (DESIGN.md §5), dated by its recording day in UTC. */
export function chunkStorageKey(tenantId: string, satelliteId: string, chunkId: string, recordedAt: Date): string {
  const d = recordedAt.toISOString();
  return `audio/${tenantId}/${satelliteId}/${d.slice(0, 4)}/${d.slice(5, 7)}/${d.slice(8, 10)}/${chunkId}.wav`;
}

export function createAudioRepo(db: Db) {
  return {
    /**
     * What ingest needs before writing anything, in one round trip: whether the satellite exists
     * in that team, and whether the chunk id is already taken (and by whom: chunk ids are global).
     */
    ingestFacts: (tenantId: string, satelliteId: string, chunkId: string) =>
      db.one<{ known: boolean; chunkTenantId: string | null; chunkSatelliteId: string | null }>(
        `SELECT s.id IS NOT NULL AS known, c.tenant_id AS "chunkTenantId", c.satellite_id AS "chunkSatelliteId"
         FROM (VALUES (1)) v
         LEFT JOIN satellites s ON s.tenant_id = $1 AND s.id = $2
         LEFT JOIN chunks c ON c.id = $3`,
        [tenantId, satelliteId, chunkId],
      ),

    /**
     * ingestFacts for many chunks in one statement (the ingester batches the chunks arriving
     * together); one answer per item, in order. Scalar parameters in a VALUES list: on PGlite
     * array parameters cost more than the round trip they save.
     */
    ingestFactsMany: async (items: ReadonlyArray<{ tenantId: string; satelliteId: string; chunkId: string }>) => {
      const rows = await db.query<{ i: number; known: boolean; chunkTenantId: string | null; chunkSatelliteId: string | null }>(
        `SELECT v.i, s.id IS NOT NULL AS known, c.tenant_id AS "chunkTenantId", c.satellite_id AS "chunkSatelliteId"
         FROM (VALUES ${items.map((_, i) => `(${i}, $${3 * i + 1}::uuid, $${3 * i + 2}::uuid, $${3 * i + 3}::uuid)`).join(', ')}) AS v(i, tenant_id, satellite_id, chunk_id)
         LEFT JOIN satellites s ON s.tenant_id = v.tenant_id AND s.id = v.satellite_id
         LEFT JOIN chunks c ON c.id = v.chunk_id
         ORDER BY v.i`,
        items.flatMap((x) => [x.tenantId, x.satelliteId, x.chunkId]),
      );
      return rows.map(({ known, chunkTenantId, chunkSatelliteId }) => ({ known, chunkTenantId, chunkSatelliteId }));
    },

    /**
     * Inserts many chunk rows in one statement, idempotent on the chunk id; answers, per row in
     * order, whether this statement inserted it (false: the id was already taken).
     */
    insertMany: async (cs: ReadonlyArray<ChunkRow>) => {
      const rows = await db.query<{ id: string; satelliteId: string }>(
        `INSERT INTO chunks (id, tenant_id, satellite_id, recorded_at, duration_ms, sample_rate, storage_key, bytes, latitude, longitude, received_at)
         VALUES ${cs.map((_, i) => `(${Array.from({ length: 11 }, (_, j) => `$${11 * i + j + 1}`).join(', ')})`).join(', ')}
         ON CONFLICT (id) DO NOTHING
         RETURNING id, satellite_id AS "satelliteId"`,
        cs.flatMap((c) => [c.id, c.tenantId, c.satelliteId, c.recordedAt, c.durationMs, c.sampleRate, c.storageKey, c.bytes, c.latitude, c.longitude, c.receivedAt]),
      );
      // A chunk id twice in one batch (two deliveries at once) is inserted once: only one item
      // of the satellite that won is told so; the others look it up again.
      const inserted = new Set(rows.map((r) => `${r.id}/${r.satelliteId}`));
      return cs.map((c) => inserted.delete(`${c.id}/${c.satelliteId}`));
    },

    /** Idempotent on the chunk id: a redelivery (or a race with one) inserts nothing. */
    insert: (c: Omit<ChunkRow, 'receivedAt'> & { receivedAt: Date }) =>
      db.query(
        `INSERT INTO chunks (id, tenant_id, satellite_id, recorded_at, duration_ms, sample_rate, storage_key, bytes, latitude, longitude, received_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
         ON CONFLICT (id) DO NOTHING`,
        [c.id, c.tenantId, c.satelliteId, c.recordedAt, c.durationMs, c.sampleRate, c.storageKey, c.bytes, c.latitude, c.longitude, c.receivedAt],
      ),

    delete: (tenantId: string, id: string) => db.query('DELETE FROM chunks WHERE tenant_id = $1 AND id = $2', [tenantId, id]),

    find: (tenantId: string, id: string) => db.maybeOne<ChunkRow>(`SELECT ${ROW} FROM chunks WHERE tenant_id = $1 AND id = $2`, [tenantId, id]),

    /** The guard's team resolver for `chunk` resources. */
    teamOfChunk: async (id: string) => (await db.maybeOne<{ tenantId: string }>('SELECT tenant_id AS "tenantId" FROM chunks WHERE id = $1', [id]))?.tenantId ?? null,

    /**
     * Chunks received since a time, across all teams, in pages (start-up re-enqueueing is a hub
     * job, not a team's request). Keyset on (received_at, id).
     */
    receivedSince: (since: Date, after: { receivedAt: Date; id: string } | null, limit: number) =>
      db.query<{ id: string; tenantId: string; satelliteId: string; storageKey: string; receivedAt: Date }>(
        `SELECT id, tenant_id AS "tenantId", satellite_id AS "satelliteId", storage_key AS "storageKey", received_at AS "receivedAt"
         FROM chunks
         WHERE received_at >= $1 AND ($2::timestamptz IS NULL OR (received_at, id) > ($2::timestamptz, $3::uuid))
         ORDER BY received_at, id
         LIMIT $4`,
        [since, after?.receivedAt ?? null, after?.id ?? null, limit],
      ),
  };
}

export type AudioRepo = ReturnType<typeof createAudioRepo>;
