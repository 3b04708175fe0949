import { col, shape, type Db, type RowOf } from '../../infra/db/index.ts';

export const IMAGE_STATUSES = ['pending', 'ready', 'failed', 'none'] as const;
export type ImageStatus = (typeof IMAGE_STATUSES)[number];

export const PhotoRow = shape({
  id: col.text(),
  speciesCode: col.text(),
  position: col.int(),
  provider: col.text(),
  sourceId: col.text(),
  storageKey: col.text(),
  contentType: col.text(),
  width: col.int(),
  height: col.int(),
  originalBytes: col.int(),
  displayKey: col.text(),
  displayBytes: col.int(),
  displayWidth: col.int(),
  displayHeight: col.int(),
  author: col.text(),
  licence: col.text(),
  licenceUrl: col.nullable(col.text()),
  sourceUrl: col.text(),
  focusX: col.nullable(col.num()),
  focusY: col.nullable(col.num()),
  analysedAt: col.nullable(col.date()),
  createdAt: col.date(),
});
export type PhotoRow = RowOf<typeof PhotoRow>;

export const StatusRow = shape({
  speciesCode: col.text(),
  status: col.oneOf(IMAGE_STATUSES),
  generation: col.int(),
  error: col.nullable(col.text()),
});
export type StatusRow = RowOf<typeof StatusRow>;

const Code = shape({ speciesCode: col.text() });
const Found = shape({ found: col.int() });
const Id = shape({ id: col.text() });
const Keys = shape({ id: col.text(), storageKey: col.text(), displayKey: col.text() });
const ByStatus = shape({ status: col.oneOf(IMAGE_STATUSES), n: col.int() });
const Totals = shape({
  photos: col.int(),
  species: col.int(),
  originalBytes: col.num(),
  displayBytes: col.num(),
  awaitingAnalysis: col.int(),
});

const PHOTO = `id, species_code AS "speciesCode", position, provider, source_id AS "sourceId", storage_key AS "storageKey",
  content_type AS "contentType", width, height, original_bytes AS "originalBytes", display_key AS "displayKey",
  display_bytes AS "displayBytes", display_width AS "displayWidth", display_height AS "displayHeight", author, licence,
  licence_url AS "licenceUrl", source_url AS "sourceUrl", focus_x AS "focusX", focus_y AS "focusY",
  analysed_at AS "analysedAt", created_at AS "createdAt"`;
const STATUS = `species_code AS "speciesCode", status, generation, error`;

export type NewPhoto = Omit<PhotoRow, 'focusX' | 'focusY' | 'analysedAt'>;

export function createSpeciesImagesRepo(db: Db) {
  return {
    statuses: (codes: readonly string[]) =>
      db.query(StatusRow, `SELECT ${STATUS} FROM species_image_status WHERE species_code = ANY($1::text[])`, [codes]),

    /**
     * Marks the codes pending (new ones, and those in `from` states) and bumps their generation;
     * returns the rows it changed, which the caller enqueues.
     */
    markPending: (tx: Db, codes: readonly string[], from: readonly ImageStatus[], now: Date) =>
      tx.query(
        StatusRow,
        `INSERT INTO species_image_status (species_code, status, generation, updated_at)
         SELECT c, 'pending', 1, $3 FROM unnest($1::text[]) AS c
         ON CONFLICT (species_code) DO UPDATE SET status = 'pending', generation = species_image_status.generation + 1, error = NULL, updated_at = $3
           WHERE species_image_status.status = ANY($2::text[])
         RETURNING ${STATUS}`,
        [codes, from, now],
      ),

    pendingOrFailed: (status: ImageStatus) =>
      db.query(Code, `SELECT species_code AS "speciesCode" FROM species_image_status WHERE status = $1`, [status]),

    setStatus: (code: string, status: ImageStatus, error: string | null, now: Date, tx: Db = db) =>
      tx.run(`UPDATE species_image_status SET status = $2, error = $3, updated_at = $4 WHERE species_code = $1`, [
        code,
        status,
        error,
        now,
      ]),

    photosOf: (codes: readonly string[]) =>
      db.query(PhotoRow, `SELECT ${PHOTO} FROM species_images WHERE species_code = ANY($1::text[]) ORDER BY species_code, position, id`, [
        codes,
      ]),

    photo: (id: string) => db.maybeOne(PhotoRow, `SELECT ${PHOTO} FROM species_images WHERE id = $1`, [id]),

    firstPhoto: (code: string) =>
      db.maybeOne(PhotoRow, `SELECT ${PHOTO} FROM species_images WHERE species_code = $1 ORDER BY position, id LIMIT 1`, [code]),

    hasPhoto: async (code: string, provider: string, sourceId: string) =>
      (await db.maybeOne(Found, `SELECT 1 AS found FROM species_images WHERE species_code = $1 AND provider = $2 AND source_id = $3`, [
        code,
        provider,
        sourceId,
      ])) !== null,

    insertPhoto: (tx: Db, p: NewPhoto) =>
      tx.run(
        `INSERT INTO species_images (id, species_code, position, provider, source_id, storage_key, content_type, width, height, original_bytes,
           display_key, display_bytes, display_width, display_height, author, licence, licence_url, source_url, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)
         ON CONFLICT (species_code, provider, source_id) DO NOTHING`,
        [
          p.id,
          p.speciesCode,
          p.position,
          p.provider,
          p.sourceId,
          p.storageKey,
          p.contentType,
          p.width,
          p.height,
          p.originalBytes,
          p.displayKey,
          p.displayBytes,
          p.displayWidth,
          p.displayHeight,
          p.author,
          p.licence,
          p.licenceUrl,
          p.sourceUrl,
          p.createdAt,
        ],
      ),

    setFocus: (id: string, focus: { x: number; y: number } | null, at: Date | null) =>
      db.run(`UPDATE species_images SET focus_x = $2, focus_y = $3, analysed_at = $4 WHERE id = $1`, [
        id,
        focus?.x ?? null,
        focus?.y ?? null,
        at,
      ]),

    /** Every photo back to awaiting analysis (a re-crop); returns their ids. */
    unsettleAll: () => db.query(Id, `UPDATE species_images SET focus_x = NULL, focus_y = NULL, analysed_at = NULL RETURNING id`),

    unanalysed: () => db.query(Id, `SELECT id FROM species_images WHERE analysed_at IS NULL`),

    allKeys: () => db.query(Keys, `SELECT id, storage_key AS "storageKey", display_key AS "displayKey" FROM species_images`),

    async stats() {
      const [byStatus, photos] = await Promise.all([
        db.query(ByStatus, `SELECT status, count(*)::int AS n FROM species_image_status GROUP BY status`),
        db.one(
          Totals,
          `SELECT count(*)::int AS photos, count(DISTINCT species_code)::int AS species,
             COALESCE(sum(original_bytes), 0)::float8 AS "originalBytes", COALESCE(sum(display_bytes), 0)::float8 AS "displayBytes",
             count(*) FILTER (WHERE analysed_at IS NULL)::int AS "awaitingAnalysis"
           FROM species_images`,
        ),
      ]);
      return { byStatus, ...photos };
    },

    async clear() {
      await db.run(`DELETE FROM species_images`);
      await db.run(`DELETE FROM species_image_status`);
    },
  };
}

export type SpeciesImagesRepo = ReturnType<typeof createSpeciesImagesRepo>;
