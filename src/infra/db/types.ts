import type { Readable } from 'node:stream';
import type { CopyColumnOptions } from './copy-binary.ts';
import { checkColumns, checkRows, type RowOf, type RowShape } from './shape.ts';
import { rethrowUnavailable } from './unavailable.ts';

export type Row = Record<string, unknown>;

/** What an adapter's statement primitive returns: the rows, their column names, the rows touched. */
export interface RawResult {
  rows: Row[];
  columns: string[];
  count: number;
}

/**
 * The database port. PGlite and PostgreSQL both speak it; domain code only sees this.
 * SQL is written once and must run on PostgreSQL 15 (the server) and 18 (PGlite).
 * Every statement whose rows are read names their shape (./shape.ts): the result's columns are
 * checked against it and the row type comes from it, so no caller casts a result.
 */
export interface Db {
  readonly kind: 'pglite' | 'postgres';
  query<S extends RowShape>(shape: S, sql: string, params?: readonly unknown[]): Promise<RowOf<S>[]>;
  maybeOne<S extends RowShape>(shape: S, sql: string, params?: readonly unknown[]): Promise<RowOf<S> | null>;
  one<S extends RowShape>(shape: S, sql: string, params?: readonly unknown[]): Promise<RowOf<S>>;
  /** A statement whose rows are not read (INSERT, UPDATE, DELETE, DDL, locks): the number of rows it touched. */
  run(sql: string, params?: readonly unknown[]): Promise<number>;
  /** Runs a script of several statements without parameters (migrations). */
  exec(sql: string): Promise<void>;
  /** Runs fn in one transaction; inside a transaction it joins the outer one. */
  tx<T>(fn: (tx: Db) => Promise<T>): Promise<T>;
  close(): Promise<void>;
  /** PostgreSQL: the connection pool's clients (GET /metrics); PGlite has no pool. */
  poolStats?(): { total: number; idle: number; waiting: number };
  /** The same of the connections that exports streamed under COPY use (copyColumn). */
  copyPoolStats?(): { total: number; idle: number; waiting: number };
  /**
   * PostgreSQL: the rows of a one-column text statement as that column's bytes end to end, under
   * `COPY (sql) TO STDOUT (FORMAT binary)` (./copy-binary.ts): what the database wrote reaches the
   * reader without a JavaScript row. COPY takes no bind parameters, so `params` are written into
   * the text as quoted literals, typed by their place as a parameter would be (`sql` must hold no
   * `$n` inside its own string literals). The stream yields Buffers, and PART_BREAK where
   * `opts.partLines` cuts (./copy-binary.ts). Destroying the stream ends the statement (its
   * connection is closed, not returned). PGlite has none.
   */
  copyColumn?(sql: string, params: readonly unknown[], opts?: CopyColumnOptions): Readable;
  /** PGlite on files: its data dir as a gzipped tar, taken between statements (the online backup, src/ops/online-backup.ts). */
  dumpDataDir?(): Promise<Uint8Array>;
}

type QueryFn = (sql: string, params?: readonly unknown[]) => Promise<RawResult>;

/** Builds the row helpers shared by both adapters from a single statement primitive. */
export function withHelpers(kind: Db['kind'], rawQuery: QueryFn, rawExec: Db['exec'], rawTx: Db['tx'], close: Db['close']): Db {
  // A lost connection is told apart from a failing statement here, once for both adapters.
  const raw: QueryFn = (sql, params) => rawQuery(sql, params).catch(rethrowUnavailable);
  const exec: Db['exec'] = (sql) => rawExec(sql).catch(rethrowUnavailable);
  const tx: Db['tx'] = (fn) => rawTx(fn).catch(rethrowUnavailable);
  async function query<S extends RowShape>(shape: S, sql: string, params?: readonly unknown[]): Promise<RowOf<S>[]> {
    const res = await raw(sql, params);
    checkColumns(shape, sql, res.columns);
    checkRows(shape, sql, res.rows);
    // The column check above is what makes this the shape's rows.
    return res.rows as RowOf<S>[];
  }
  const db: Db = {
    kind,
    query,
    async maybeOne(shape, sql, params) {
      return (await query(shape, sql, params))[0] ?? null;
    },
    async one(shape, sql, params) {
      const rows = await query(shape, sql, params);
      if (rows.length === 0) throw new Error('Expected one row, got none');
      return rows[0];
    },
    async run(sql, params) {
      return (await raw(sql, params)).count;
    },
    exec,
    tx,
    close,
  };
  return db;
}

/** An ILIKE/LIKE pattern matching `text` anywhere, its wildcards (`%`, `_`) and backslashes taken literally. */
export const containsPattern = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
