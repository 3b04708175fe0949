import { col, Count, shape, type Db, type RowOf } from '../../infra/db/index.ts';

export interface NoteFields {
  text: string;
  at: Date;
  satelliteId: string | null;
  satelliteName: string | null;
  latitude: number | null;
  longitude: number | null;
}

export const NoteRow = shape({
  id: col.text(),
  tenantId: col.text(),
  authorId: col.nullable(col.text()),
  authorName: col.text(),
  text: col.text(),
  at: col.date(),
  satelliteId: col.nullable(col.text()),
  satelliteName: col.nullable(col.text()),
  latitude: col.nullable(col.num()),
  longitude: col.nullable(col.num()),
  photoKey: col.nullable(col.text()),
  photoType: col.nullable(col.text()),
  createdAt: col.date(),
  updatedAt: col.date(),
});
export type NoteRow = RowOf<typeof NoteRow>;
// The author's and the satellite's current names while they exist; the names as written once they are gone.
const NOTE = `n.id, n.tenant_id AS "tenantId", n.author_id AS "authorId", COALESCE(u.name, n.author_name) AS "authorName", n.text, n.at,
  n.satellite_id AS "satelliteId", COALESCE(s.name, n.satellite_name) AS "satelliteName", n.latitude, n.longitude,
  n.photo_key AS "photoKey", n.photo_type AS "photoType", n.created_at AS "createdAt", n.updated_at AS "updatedAt"`;
const TeamOf = shape({ t: col.text() });

const FROM = `field_notes n LEFT JOIN users u ON u.id = n.author_id LEFT JOIN satellites s ON s.id = n.satellite_id`;

export function createFieldNotesRepo(db: Db) {
  return {
    async list(tenantId: string, f: { satelliteId?: string; from?: Date; to?: Date; limit: number; offset: number }) {
      const where = ['n.tenant_id = $1'];
      const params: unknown[] = [tenantId];
      if (f.satelliteId) where.push(`n.satellite_id = $${params.push(f.satelliteId)}`);
      if (f.from) where.push(`n.at >= $${params.push(f.from)}`);
      if (f.to) where.push(`n.at < $${params.push(f.to)}`);
      const w = where.join(' AND ');
      const [rows, total] = await Promise.all([
        db.query(
          NoteRow,
          `SELECT ${NOTE} FROM ${FROM} WHERE ${w} ORDER BY n.at DESC, n.id DESC LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
          [...params, f.limit, f.offset],
        ),
        db.one(Count, `SELECT count(*)::int AS n FROM field_notes n WHERE ${w}`, params),
      ]);
      return { rows, total: total.n };
    },
    find: (tenantId: string, id: string, tx: Db = db) =>
      tx.maybeOne(NoteRow, `SELECT ${NOTE} FROM ${FROM} WHERE n.tenant_id = $1 AND n.id = $2`, [tenantId, id]),
    insert: (tx: Db, r: NoteFields & { id: string; tenantId: string; authorId: string; authorName: string; now: Date }) =>
      tx.run(
        `INSERT INTO field_notes (id, tenant_id, author_id, author_name, text, at, satellite_id, satellite_name, latitude, longitude, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11)`,
        [r.id, r.tenantId, r.authorId, r.authorName, r.text, r.at, r.satelliteId, r.satelliteName, r.latitude, r.longitude, r.now],
      ),
    update: (tx: Db, tenantId: string, id: string, r: NoteFields & { now: Date }) =>
      tx.run(
        `UPDATE field_notes SET text = $3, at = $4, satellite_id = $5, satellite_name = $6, latitude = $7, longitude = $8, updated_at = $9
         WHERE tenant_id = $1 AND id = $2`,
        [tenantId, id, r.text, r.at, r.satelliteId, r.satelliteName, r.latitude, r.longitude, r.now],
      ),
    /** True when the note was there to take the photo. */
    setPhoto: async (tx: Db, tenantId: string, id: string, p: { key: string; type: string; bytes: number; now: Date }) =>
      (await tx.run(
        'UPDATE field_notes SET photo_key = $3, photo_type = $4, photo_bytes = $5, updated_at = $6 WHERE tenant_id = $1 AND id = $2',
        [tenantId, id, p.key, p.type, p.bytes, p.now],
      )) === 1,
    delete: async (tx: Db, tenantId: string, id: string) =>
      (await tx.run('DELETE FROM field_notes WHERE tenant_id = $1 AND id = $2', [tenantId, id])) === 1,
    teamOfNote: async (id: string) => (await db.maybeOne(TeamOf, 'SELECT tenant_id AS t FROM field_notes WHERE id = $1', [id]))?.t ?? null,
    countOfSatellite: async (satelliteId: string) =>
      (await db.one(Count, 'SELECT count(*)::int AS n FROM field_notes WHERE satellite_id = $1', [satelliteId])).n,
    /** Before a satellite goes: its notes keep its name as it is now (the foreign key then unlinks them). */
    keepSatelliteName: (tx: Db, satelliteId: string, name: string) =>
      tx.run('UPDATE field_notes SET satellite_name = $2 WHERE satellite_id = $1', [satelliteId, name]),
  };
}

export type FieldNotesRepo = ReturnType<typeof createFieldNotesRepo>;
