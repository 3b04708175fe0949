import type { Db, RowOf, RowShape } from '../../infra/db/index.ts';

/**
 * A statistics read with planner settings of its own, scoped to one transaction (SET LOCAL), so
 * no other query on the pooled connection inherits them. JIT is always off on PostgreSQL: its
 * estimate for a join on an array of ranges is far above what the aggregate reads, and compiling
 * the plan cost up to a second where running it cost 15 ms (docs/stats.md). `settings` holds what
 * one query measured faster with; the names are ours, never a caller's.
 */
export function tunedRead(db: Db, settings: Readonly<Record<string, string>> = {}) {
  return <S extends RowShape>(shape: S, sql: string, params: unknown[]): Promise<RowOf<S>[]> =>
    db.tx(async (tx) => {
      if (db.kind === 'postgres') await tx.run('SET LOCAL jit = off');
      for (const [name, value] of Object.entries(settings)) await tx.run(`SET LOCAL ${name} = '${value}'`);
      return tx.query(shape, sql, params);
    });
}
