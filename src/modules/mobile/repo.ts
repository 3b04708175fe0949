import { col, shape, type Db, type RowOf } from '../../infra/db/index.ts';

/** A mobile app package as stored (table `mobile_releases`, migration 0016). */
export const MobileReleaseRow = shape({
  id: col.text(),
  version: col.text(),
  notes: col.text(),
  forceUpdate: col.bool(),
  extension: col.text(),
  storageKey: col.text(),
  fileSize: col.num(),
  sha256: col.text(),
  uploadedBy: col.nullable(col.text()),
  createdAt: col.date(),
});
export type MobileReleaseRow = RowOf<typeof MobileReleaseRow>;
const ROW = `id, version, notes, force_update AS "forceUpdate", extension, storage_key AS "storageKey", file_size::float8 AS "fileSize",
  sha256, uploaded_by AS "uploadedBy", created_at AS "createdAt"`;

const Version = shape({ id: col.text(), version: col.text(), forceUpdate: col.bool() });
const Found = shape({ found: col.int() });

/** Hub-wide rows: releases belong to no team. */
export function createMobileRepo(db: Db) {
  return {
    recent: (limit: number) =>
      db.query(MobileReleaseRow, `SELECT ${ROW} FROM mobile_releases ORDER BY created_at DESC, seq DESC LIMIT $1`, [limit]),

    /** Every release's version and force flag: few rows, compared by SemVer in the service. */
    versions: () => db.query(Version, 'SELECT id, version, force_update AS "forceUpdate" FROM mobile_releases'),

    find: (id: string, tx: Db = db) => tx.maybeOne(MobileReleaseRow, `SELECT ${ROW} FROM mobile_releases WHERE id = $1`, [id]),

    hasVersionKey: async (versionKey: string) =>
      (await db.maybeOne(Found, 'SELECT 1 AS found FROM mobile_releases WHERE version_key = $1', [versionKey])) !== null,

    insert: (tx: Db, r: MobileReleaseRow & { versionKey: string }) =>
      tx.run(
        `INSERT INTO mobile_releases (id, version, version_key, notes, force_update, extension, storage_key, file_size, sha256, uploaded_by, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
        [r.id, r.version, r.versionKey, r.notes, r.forceUpdate, r.extension, r.storageKey, r.fileSize, r.sha256, r.uploadedBy, r.createdAt],
      ),

    setForce: (tx: Db, id: string, forceUpdate: boolean) =>
      tx.run('UPDATE mobile_releases SET force_update = $2 WHERE id = $1', [id, forceUpdate]),

    remove: (tx: Db, id: string) => tx.run('DELETE FROM mobile_releases WHERE id = $1', [id]),
  };
}
