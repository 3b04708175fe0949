import pg from 'pg';
import { type Db, type RawResult, type Row, withHelpers } from './types.ts';

// int8 (count(*), bigserial) as JS numbers: our counts stay far below 2^53.
pg.types.setTypeParser(20, (v: string) => Number(v));
pg.types.setTypeParser(1700, (v: string) => Number(v));

export interface PostgresOptions {
  url: string;
  schema?: string | null;
  poolSize?: number;
}

export function createPostgresDb(opts: PostgresOptions): Db {
  const pool = new pg.Pool({
    connectionString: opts.url,
    max: opts.poolSize ?? 10,
    options: opts.schema ? `-c search_path=${opts.schema}` : undefined,
  });
  // An idle client losing its server must not crash the process; the pool replaces it.
  pool.on('error', () => {});

  // Parameterised statements are prepared once per connection (named by their text), so hot
  // queries such as the credential lookup skip parsing and planning on every request.
  const names = new Map<string, string>();
  // Bounded, so SQL built with varying text can never grow every connection's statement cache.
  const MAX_PREPARED = 1000;
  const nameOf = (sql: string) => {
    let name = names.get(sql);
    if (!name && names.size < MAX_PREPARED) {
      name = `q${names.size}`;
      names.set(sql, name);
    }
    return name;
  };
  const run =
    (client: pg.Pool | pg.PoolClient) =>
    async (sql: string, params?: readonly unknown[]): Promise<RawResult> => {
      const name = params && params.length > 0 ? nameOf(sql) : undefined;
      const res = name
        ? await client.query({ name, text: sql, values: params as unknown[] })
        : await client.query(sql, params as unknown[] | undefined);
      // pg's rows are plain objects keyed by column; the port checks them against the caller's shape.
      return { rows: res.rows as Row[], columns: res.fields.map((f) => f.name), count: res.rowCount ?? res.rows.length };
    };

  const exec = (client: pg.Pool | pg.PoolClient) => async (sql: string) => {
    await client.query(sql);
  };

  const makeTxDb = (client: pg.PoolClient): Db => {
    const txDb: Db = withHelpers(
      'postgres',
      run(client),
      exec(client),
      (fn) => fn(txDb),
      async () => {},
    );
    return txDb;
  };

  const db = withHelpers(
    'postgres',
    run(pool),
    exec(pool),
    async (fn) => {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const result = await fn(makeTxDb(client));
        await client.query('COMMIT');
        return result;
      } catch (err) {
        await client.query('ROLLBACK').catch(() => {});
        throw err;
      } finally {
        client.release();
      }
    },
    () => pool.end(),
  );
  // What GET /metrics reports of the pool (chorus_db_pool_connections).
  return Object.assign(db, { poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }) });
}
