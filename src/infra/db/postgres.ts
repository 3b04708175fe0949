import { pipeline, type Readable } from 'node:stream';
import pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import { CopyBinaryColumn, type CopyColumnOptions } from './copy-binary.ts';
import { type Db, type RawResult, type Row, withHelpers } from './types.ts';

// int8 (count(*), bigserial) as JS numbers: our counts stay far below 2^53.
pg.types.setTypeParser(20, (v: string) => Number(v));
pg.types.setTypeParser(1700, (v: string) => Number(v));

export interface PostgresOptions {
  url: string;
  schema?: string | null;
  poolSize?: number;
  /** Connections of the exports streamed under COPY (copyColumn), apart from `poolSize`'s. */
  copyPoolSize?: number;
}

export function createPostgresDb(opts: PostgresOptions): Db {
  const connection = { connectionString: opts.url, options: opts.schema ? `-c search_path=${opts.schema}` : undefined };
  const pool = new pg.Pool({ ...connection, max: opts.poolSize ?? 10 });
  // A streamed export holds its connection until its reader has taken the last byte, over a slow
  // link for minutes: exports have connections of their own, so downloads that stall can never
  // leave a request of the API waiting for one. An export past them waits for one of theirs.
  const copyPool = new pg.Pool({ ...connection, max: opts.copyPoolSize ?? 4 });
  // An idle client losing its server must not crash the process; the pool replaces it.
  pool.on('error', () => {});
  copyPool.on('error', () => {});

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
    async () => {
      await Promise.all([pool.end(), copyPool.end()]);
    },
  );
  const copyColumn = (sql: string, params: readonly unknown[], opts?: CopyColumnOptions): Readable => {
    const text = `COPY (${inlineParams(sql, params)}) TO STDOUT (FORMAT binary)`;
    const rows = new CopyBinaryColumn(opts);
    void copyPool.connect().then(
      async (client) => {
        try {
          // No JIT: an export's line is a hundred expressions, and compiling them took longer than the
          // whole statement then runs (1.3-1.5 s of 3.6-4.9 s at a million rows; docs/exports.md "Performance").
          await client.query(
            `SELECT set_config('jit', 'off', false), set_config('TimeZone', coalesce($1, current_setting('TimeZone')), false)`,
            [opts?.timeZone ?? null],
          );
        } catch (err) {
          client.release(err as Error);
          rows.destroy(err as Error);
          return;
        }
        const copy = client.query(copyTo(text));
        pipeline(copy, rows, (err) => {
          // A COPY stopped half-way leaves its connection mid-protocol: closed (release with the error), never handed on.
          if (err) return client.release(err);
          client.query('RESET jit; RESET TimeZone').then(
            () => client.release(),
            (e: Error) => client.release(e),
          );
        });
      },
      (err: Error) => rows.destroy(err),
    );
    return rows;
  };

  // What GET /metrics reports of the pools (chorus_db_pool_connections).
  const statsOf = (p: pg.Pool) => () => ({ total: p.totalCount, idle: p.idleCount, waiting: p.waitingCount });
  return Object.assign(db, { copyColumn, poolStats: statsOf(pool), copyPoolStats: statsOf(copyPool) });
}

/**
 * `sql` with each `$n` replaced by its value as a quoted literal: the text the driver would have
 * sent for it (a parameter of no stated type, typed by its place, as an untyped literal is), so
 * the statement means what it means with bind parameters. One pass, so a value holding `$2` is
 * never read as a placeholder.
 */
export function inlineParams(sql: string, params: readonly unknown[]): string {
  return sql.replace(/\$(\d+)/g, (_, n: string) => {
    const i = Number(n) - 1;
    if (i < 0 || i >= params.length) throw new Error(`no value for $${n}`);
    return literal(params[i]);
  });
}

function literal(v: unknown): string {
  if (v === null || v === undefined) return 'NULL';
  if (typeof v === 'string') return pg.escapeLiteral(v);
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw new Error('a parameter is not a finite number');
    return `'${v}'`;
  }
  if (typeof v === 'boolean') return v ? "'true'" : "'false'";
  if (v instanceof Date) return `'${v.toISOString()}'`;
  if (Array.isArray(v))
    return pg.escapeLiteral(
      `{${v.map((x) => (x === null ? 'NULL' : `"${String(x as string | number).replace(/["\\]/g, '\\$&')}"`)).join(',')}}`,
    );
  throw new Error(`a parameter of type ${typeof v} cannot be written as a literal`);
}
