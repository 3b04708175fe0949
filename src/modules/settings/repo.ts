import { col, shape, type Db, type RowOf } from '../../infra/db/index.ts';
import type { Level } from './registry.ts';
import type { Layer, Layers } from './resolve.ts';

const Row = shape({
  level: col.oneOf(['hub', 'team', 'satellite', 'account'] as const satisfies readonly Level[]),
  scopeId: col.text(),
  key: col.text(),
  /** The stored jsonb, null when the row holds only a lock; the registry's entry says what it is. */
  value: col.json<unknown>(),
  mayOverride: col.nullable(col.bool()),
});
type Row = RowOf<typeof Row>;
const ROW = `level, scope_id AS "scopeId", key, value, may_override AS "mayOverride"`;
const Id = shape({ id: col.text() });

export const HUB_SCOPE = '';

function group(rows: Row[]): Map<string, Layer> {
  const out = new Map<string, Layer>();
  for (const r of rows) {
    const id = `${r.level}:${r.scopeId}`;
    if (!out.has(id)) out.set(id, new Map());
    out.get(id)!.set(r.key, { value: r.value, mayOverride: r.mayOverride });
  }
  return out;
}

export function createSettingsRepo(db: Db) {
  async function rows(tx: Db, scopes: Array<[Level, string]>): Promise<Row[]> {
    return tx.query(
      Row,
      `SELECT ${ROW} FROM settings
       WHERE (level, scope_id) IN (SELECT * FROM unnest($1::text[], $2::text[]))`,
      [scopes.map((s) => s[0]), scopes.map((s) => s[1])],
    );
  }

  return {
    /** Every layer a scope resolves through, in one query. */
    async layers(scope: { team?: string | null; satellite?: string | null; account?: string | null }, tx: Db = db): Promise<Layers> {
      const scopes: Array<[Level, string]> = [['hub', HUB_SCOPE]];
      if (scope.team) scopes.push(['team', scope.team]);
      if (scope.satellite) scopes.push(['satellite', scope.satellite]);
      if (scope.account) scopes.push(['account', scope.account]);
      const g = group(await rows(tx, scopes));
      const layer = (l: Level, id: string | null | undefined) => (id ? (g.get(`${l}:${id}`) ?? new Map()) : undefined);
      return {
        hub: g.get(`hub:${HUB_SCOPE}`) ?? new Map(),
        team: layer('team', scope.team),
        satellite: layer('satellite', scope.satellite),
        account: layer('account', scope.account),
      };
    },

    /** Teams holding a value of their own for `key` (the rest resolve to the hub's value or the default). */
    teamsWithOwnValue: async (key: string) =>
      (
        await db.query(
          Id,
          `SELECT scope_id AS id FROM settings WHERE level = 'team' AND key = $1 AND value IS NOT NULL AND value <> 'null'::jsonb ORDER BY scope_id`,
          [key],
        )
      ).map((r) => r.id),

    /** Layers of many scopes of one level at once (every satellite a hub-wide change reaches). */
    async layersOf(tx: Db, level: Level, ids: string[]): Promise<Map<string, Layer>> {
      if (ids.length === 0) return new Map();
      const found = await tx.query(Row, `SELECT ${ROW} FROM settings WHERE level = $1 AND scope_id = ANY($2::text[])`, [level, ids]);
      const g = group(found);
      return new Map(ids.map((id) => [id, g.get(`${level}:${id}`) ?? new Map()]));
    },

    putValue: (tx: Db, level: Level, scopeId: string, key: string, value: unknown, at: Date, by: string | null) =>
      tx.run(
        `INSERT INTO settings (level, scope_id, key, value, updated_at, updated_by) VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (level, scope_id, key) DO UPDATE SET value = EXCLUDED.value, updated_at = EXCLUDED.updated_at, updated_by = EXCLUDED.updated_by`,
        [level, scopeId, key, value === null ? null : JSON.stringify(value), at, by],
      ),

    putLock: (tx: Db, level: Level, scopeId: string, key: string, mayOverride: boolean, at: Date, by: string | null) =>
      tx.run(
        `INSERT INTO settings (level, scope_id, key, may_override, updated_at, updated_by) VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (level, scope_id, key) DO UPDATE SET may_override = EXCLUDED.may_override, updated_at = EXCLUDED.updated_at, updated_by = EXCLUDED.updated_by`,
        // An unlocked key is stored as NULL: "no lock" is the default, so the row can go when empty.
        [level, scopeId, key, mayOverride ? null : false, at, by],
      ),

    /** Rows that hold neither a value nor a lock carry nothing. */
    prune: (tx: Db, level: Level, scopeId: string) =>
      tx.run(`DELETE FROM settings WHERE level = $1 AND scope_id = $2 AND value IS NULL AND may_override IS NULL`, [level, scopeId]),

    deleteScope: (tx: Db, level: Level, scopeId: string) =>
      tx.run(`DELETE FROM settings WHERE level = $1 AND scope_id = $2`, [level, scopeId]),

    /** Team rows whose value of `key` is the text `value`: gone, so those teams follow the hub again. */
    releaseTeamValue: (tx: Db, key: string, value: string) =>
      tx.run(`DELETE FROM settings WHERE level = 'team' AND key = $1 AND value = to_jsonb($2::text)`, [key, value]),
  };
}

export type SettingsRepo = ReturnType<typeof createSettingsRepo>;
