import { col, Count, shape, type Db, type RowOf } from '../../infra/db/index.ts';

/** A publication as the service needs it: which team's which chunk. */
export const PublicationRow = shape({ id: col.text(), tenantId: col.text(), chunkId: col.text() });
export type PublicationRow = RowOf<typeof PublicationRow>;

/** A publication as the team's list shows it: the chunk's time and satellite, and what was heard in it. */
export const PublicationListRow = shape({
  id: col.text(),
  chunkId: col.text(),
  recordedAt: col.date(),
  satelliteName: col.text(),
  species: col.array(col.text()),
  publishedAt: col.date(),
  publishedBy: col.nullable(col.text()),
});
export type PublicationListRow = RowOf<typeof PublicationListRow>;

const ChunkOnly = shape({ chunkId: col.text() });

/**
 * published_audio (migration 0032). Reads chunks and satellites for the list, and detections to
 * find the chunks a sensitive species was heard in (docs/architecture.md "Tables").
 */
export function createPublishedAudioRepo(db: Db) {
  return {
    /** The publications of these chunks, existing ones only. */
    ofChunks: (tenantId: string, chunkIds: readonly string[], tx: Db = db) =>
      tx.query(
        PublicationRow,
        `SELECT id, tenant_id AS "tenantId", chunk_id AS "chunkId" FROM published_audio WHERE tenant_id = $1 AND chunk_id = ANY($2::uuid[])`,
        [tenantId, chunkIds],
      ),

    /**
     * Publishes each chunk that is not yet: rows inserted by a concurrent export win, and this
     * statement returns only the rows it added. Chunks of another team are never matched.
     */
    insertMissing: (tx: Db, tenantId: string, rows: readonly { id: string; chunkId: string }[], by: string | null, at: Date) =>
      tx.query(
        ChunkOnly,
        `INSERT INTO published_audio (id, tenant_id, chunk_id, published_by, published_at)
         SELECT n.id, c.tenant_id, c.id, $4, $5
         FROM unnest($2::uuid[], $3::uuid[]) AS n(id, chunk_id) JOIN chunks c ON c.id = n.chunk_id AND c.tenant_id = $1
         ON CONFLICT (tenant_id, chunk_id) DO NOTHING
         RETURNING chunk_id AS "chunkId"`,
        [tenantId, rows.map((r) => r.id), rows.map((r) => r.chunkId), by, at],
      ),

    /**
     * Of these chunks, those holding a detection of one of the species (lower-case codes): a call
     * stitched over several chunks counts in each of them, and tentative rows count too, since
     * the sound is in the recording whether or not the row was promoted.
     */
    chunksWithSpecies: async (tenantId: string, chunkIds: readonly string[], codes: readonly string[]) =>
      codes.length === 0 || chunkIds.length === 0
        ? []
        : (
            await db.query(
              ChunkOnly,
              `SELECT DISTINCT c.id AS "chunkId" FROM unnest($2::uuid[]) AS c(id)
               WHERE EXISTS (SELECT 1 FROM detections d WHERE d.tenant_id = $1 AND lower(d.species_code) = ANY($3::text[])
                 AND (d.chunk_id = c.id OR c.id = ANY(d.span_chunk_ids)))`,
              [tenantId, chunkIds, codes],
            )
          ).map((r) => r.chunkId),

    /** The public route's lookup: the publication of that id in whichever team holds it. */
    teamOf: async (id: string) =>
      (await db.maybeOne(shape({ tenantId: col.text() }), 'SELECT tenant_id AS "tenantId" FROM published_audio WHERE id = $1', [id]))
        ?.tenantId ?? null,

    find: (tenantId: string, id: string, tx: Db = db) =>
      tx.maybeOne(
        PublicationRow,
        'SELECT id, tenant_id AS "tenantId", chunk_id AS "chunkId" FROM published_audio WHERE tenant_id = $1 AND id = $2',
        [tenantId, id],
      ),

    list: (tenantId: string, limit: number, offset: number) =>
      db.query(
        PublicationListRow,
        `SELECT p.id, p.chunk_id AS "chunkId", c.recorded_at AS "recordedAt", s.name AS "satelliteName",
           COALESCE((SELECT array_agg(DISTINCT d.common_name ORDER BY d.common_name) FROM detections d
                     WHERE d.tenant_id = p.tenant_id AND d.chunk_id = p.chunk_id AND NOT d.tentative), '{}') AS species,
           p.published_at AS "publishedAt", p.published_by AS "publishedBy"
         FROM published_audio p JOIN chunks c ON c.id = p.chunk_id JOIN satellites s ON s.id = c.satellite_id
         WHERE p.tenant_id = $1 ORDER BY p.published_at DESC, p.id LIMIT $2 OFFSET $3`,
        [tenantId, limit, offset],
      ),

    count: async (tenantId: string) =>
      (await db.one(Count, 'SELECT count(*)::int AS n FROM published_audio WHERE tenant_id = $1', [tenantId])).n,

    delete: async (tx: Db, tenantId: string, id: string) =>
      tx.maybeOne(ChunkOnly, 'DELETE FROM published_audio WHERE tenant_id = $1 AND id = $2 RETURNING chunk_id AS "chunkId"', [
        tenantId,
        id,
      ]),

    deleteAll: (tx: Db, tenantId: string) => tx.run('DELETE FROM published_audio WHERE tenant_id = $1', [tenantId]),
  };
}
