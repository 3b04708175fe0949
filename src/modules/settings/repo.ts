import type { Db } from '../../infra/db/index.ts';
import type { Level } from './registry.ts';

export interface SettingRow {
  key: string;
  value: unknown;
  mayOverride: boolean | null;
}

export function createSettingsRepo(db: Db) {
  return {
    list: (level: Level, scopeId: string) =>
      db.query<SettingRow>(
        `SELECT key, value, may_override AS "mayOverride" FROM settings WHERE level = $1 AND scope_id = $2`,
        [level, scopeId],
      ),

    /** null clears the stored value; the row goes when it holds neither value nor lock. */
    async put(tx: Db, level: Level, scopeId: string, key: string, value: unknown, at: Date, by: string | null) {
      if (value === null) {
        await tx.query(`DELETE FROM settings WHERE level = $1 AND scope_id = $2 AND key = $3 AND may_override IS NULL`, [level, scopeId, key]);
        await tx.query(`UPDATE settings SET value = NULL, updated_at = $4, updated_by = $5 WHERE level = $1 AND scope_id = $2 AND key = $3`, [level, scopeId, key, at, by]);
        return;
      }
      await tx.query(
        `INSERT INTO settings (level, scope_id, key, value, updated_at, updated_by) VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (level, scope_id, key) DO UPDATE SET value = EXCLUDED.value, updated_at = EXCLUDED.updated_at, updated_by = EXCLUDED.updated_by`,
        [level, scopeId, key, JSON.stringify(value), at, by],
      );
    },

    deleteScope: (tx: Db, level: Level, scopeId: string) =>
      tx.query(`DELETE FROM settings WHERE level = $1 AND scope_id = $2`, [level, scopeId]),
  };
}

export type SettingsRepo = ReturnType<typeof createSettingsRepo>;
