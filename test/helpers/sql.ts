/**
 * Ad-hoc SQL for assertions. Repositories declare each row's shape (src/infra/db/shape.ts); a test
 * reading rows to assert on them names the type it expects instead, and the open shape takes any
 * column.
 */
import { Type } from 'typebox';
import type { Db } from '../../src/infra/db/index.ts';

const AnyRow = Type.Object({}, { additionalProperties: true });

type Loose = Record<string, any>;

export interface Sql {
  query<T = Loose>(sql: string, params?: readonly unknown[]): Promise<T[]>;
  one<T = Loose>(sql: string, params?: readonly unknown[]): Promise<T>;
  maybeOne<T = Loose>(sql: string, params?: readonly unknown[]): Promise<T | null>;
  run(sql: string, params?: readonly unknown[]): Promise<number>;
}

export function sqlOf(db: Db): Sql {
  return {
    query: async <T>(sql: string, params?: readonly unknown[]) => (await db.query(AnyRow, sql, params)) as T[],
    one: async <T>(sql: string, params?: readonly unknown[]) => (await db.one(AnyRow, sql, params)) as T,
    maybeOne: async <T>(sql: string, params?: readonly unknown[]) => (await db.maybeOne(AnyRow, sql, params)) as T | null,
    run: (sql, params) => db.run(sql, params),
  };
}
