import { Type, type Static, type TObject, type TProperties, type TSchema } from 'typebox';
import { Value } from 'typebox/value';

/**
 * Row shapes: the one definition of what a query returns. A repository declares the shape, the
 * port checks every result's column names against it (a renamed or misspelled alias fails the
 * statement instead of leaving a field undefined), and `Static<typeof shape>` is the row type, so
 * no query result is ever cast (docs/decisions.md, "Rows typed from one source").
 */
export type RowShape = TObject;
export type RowOf<S extends RowShape> = Static<S>;

/** The column kinds repositories use. A timestamp comes back as a Date from both adapters. */
export const col = {
  text: () => Type.String(),
  num: () => Type.Number(),
  int: () => Type.Integer(),
  bool: () => Type.Boolean(),
  date: () => Type.Unsafe<Date>({ 'x-column': 'timestamp' }),
  /** jsonb: the stored value as parsed; the caller narrows it. */
  json: <T = unknown>() => Type.Unsafe<T>({}),
  /** One of the listed texts, typed as their union. */
  oneOf: <const T extends readonly string[]>(values: T) => Type.Unsafe<T[number]>(Type.Union(values.map((v) => Type.Literal(v)))),
  /** text[], int[] … */
  array: <T extends TSchema>(item: T) => Type.Array(item),
  nullable: <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]),
  /** A column only some variants of a statement select (SQL built with optional parts). */
  optional: <T extends TSchema>(t: T) => Type.Optional(t),
};

/** Declares a row shape from its columns. */
export const shape = <P extends TProperties>(columns: P) => Type.Object(columns);

/** The row of a statement that returns one column, `n`, a number (counts, sums). */
export const Count = shape({ n: col.num() });

const verified = new WeakMap<RowShape, Set<string>>();
/** Statement texts remembered per shape: SQL built with varying text must not grow the memory. */
const MAX_VERIFIED = 256;

/**
 * Throws when a result's columns are not the shape's: a column the shape does not name, or a
 * required one missing. Checked once per (shape, statement text): the column list of a statement
 * never changes.
 */
export function checkColumns(s: RowShape, sql: string, columns: readonly string[]): void {
  let seen = verified.get(s);
  if (seen?.has(sql)) return;
  const names = Object.keys(s.properties);
  const required = new Set((s.required as string[] | undefined) ?? []);
  // An open shape (additionalProperties) takes any further column: the test suite's ad-hoc reads.
  const extra = (s as { additionalProperties?: unknown }).additionalProperties === true ? [] : columns.filter((c) => !(c in s.properties));
  const missing = names.filter((n) => required.has(n) && !columns.includes(n));
  if (extra.length > 0 || missing.length > 0) {
    const parts = [extra.length ? `unexpected ${extra.join(', ')}` : '', missing.length ? `missing ${missing.join(', ')}` : ''];
    throw new Error(`query result does not match its row shape: ${parts.filter(Boolean).join('; ')} — ${sql.slice(0, 160)}`);
  }
  if (!seen) verified.set(s, (seen = new Set()));
  // Past the bound a statement is checked again each time (a few comparisons), never remembered.
  if (seen.size < MAX_VERIFIED) seen.add(sql);
}

/**
 * In tests every row's values are checked as well (a count that came back as text, a null where
 * the shape says never): the suite finds a shape that lies about types, production pays nothing.
 */
const checkValues = process.env.NODE_ENV === 'test';
export function checkRows(s: RowShape, sql: string, rows: readonly unknown[]): void {
  if (!checkValues) return;
  for (const row of rows) {
    if (!Value.Check(s, row)) {
      const first = Value.Errors(s, row)[0];
      throw new Error(
        `query row does not match its row shape: ${first ? `${first.instancePath || '/'} ${first.message}` : 'invalid'} — ${sql.slice(0, 160)}`,
      );
    }
  }
}
