/**
 * Module boundaries at the database: docs/architecture.md ("Tables: who writes, who reads") says
 * which module owns each table and which others a module may read; this test holds every SQL
 * statement under src/ to it. It reads source text, so a table named in a statement counts
 * whether or not a test runs that statement.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');

function filesUnder(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return filesUnder(p);
    return e.name.endsWith('.ts') ? [p] : [];
  });
}

/** Every table the migrations leave standing. */
function tablesOfMigrations(): Set<string> {
  const tables = new Set<string>();
  const dir = path.join(root, 'src/db/migrations');
  for (const f of fs.readdirSync(dir).sort()) {
    const sql = fs.readFileSync(path.join(dir, f), 'utf8');
    for (const m of sql.matchAll(/^\s*(CREATE|DROP) TABLE (?:IF (?:NOT )?EXISTS )?(\w+)/gim)) {
      if (m[1].toUpperCase() === 'CREATE') tables.add(m[2]);
      else tables.delete(m[2]);
    }
  }
  return tables;
}

interface Declared {
  owns: Map<string, Set<string>>;
  reads: Map<string, Set<string>>;
}

/** The table in docs/architecture.md: | `module` … | owned tables | also reads |. */
function declared(): Declared {
  const doc = fs.readFileSync(path.join(root, 'docs/architecture.md'), 'utf8');
  const start = doc.indexOf('## Tables: who writes, who reads');
  assert.ok(start >= 0, 'docs/architecture.md has the tables section');
  const owns = new Map<string, Set<string>>();
  const reads = new Map<string, Set<string>>();
  const list = (cell: string) =>
    new Set(
      cell
        .split(',')
        .map((t) => t.trim())
        .filter(Boolean),
    );
  for (const line of doc.slice(start).split('\n').slice(1)) {
    if (line.startsWith('## ')) break;
    const m = /^\| `([a-z-]+)`[^|]*\|([^|]*)\|([^|]*)\|$/.exec(line.trim());
    if (!m) continue;
    owns.set(m[1], list(m[2]));
    reads.set(m[1], list(m[3]));
  }
  return { owns, reads };
}

interface Use {
  file: string;
  table: string;
  kind: 'write' | 'read';
}

/** Tables a source file's SQL writes and reads. SQL keywords are upper case in this code base. */
function usesOf(file: string, tables: Set<string>): Use[] {
  const text = fs.readFileSync(file, 'utf8');
  // Names of common table expressions (`WITH recent AS (`, `, totals AS (`) are not tables.
  const ctes = new Set(
    [...text.matchAll(/(?:WITH(?: RECURSIVE)?|,)\s+(\w+)(?:\s*\([^)]*\))?\s+AS\s+(?:NOT\s+)?(?:MATERIALIZED\s+)?\(/g)].map((m) => m[1]),
  );
  const uses: Use[] = [];
  const rel = path.relative(root, file);
  for (const m of text.matchAll(/\b(INSERT\s+INTO|UPDATE|DELETE\s+FROM|TRUNCATE(?:\s+TABLE)?)\s+(\w+)/g)) {
    if (tables.has(m[2]) && !ctes.has(m[2])) uses.push({ file: rel, table: m[2], kind: 'write' });
  }
  for (const m of text.matchAll(/\b(?<!DELETE\s+)(?:FROM|JOIN|USING)\s+(\w+)/g)) {
    if (tables.has(m[1]) && !ctes.has(m[1])) uses.push({ file: rel, table: m[1], kind: 'read' });
  }
  return uses;
}

const moduleOf = (rel: string) => /^src\/modules\/([^/]+)\//.exec(rel)?.[1] ?? null;

describe('table ownership (docs/architecture.md)', () => {
  const tables = tablesOfMigrations();
  const { owns, reads } = declared();
  const uses = filesUnder(path.join(root, 'src'))
    .filter((f) => !f.includes(`${path.sep}migrations${path.sep}`))
    .flatMap((f) => usesOf(f, tables));

  test('every table has exactly one owner, and every owned table exists', () => {
    const owners = new Map<string, string[]>();
    for (const [mod, set] of owns) for (const t of set) owners.set(t, [...(owners.get(t) ?? []), mod]);
    const problems = [
      ...[...tables]
        .filter((t) => t !== 'schema_migrations' && (owners.get(t)?.length ?? 0) !== 1)
        .map((t) => `${t}: owned by ${owners.get(t)?.join(' and ') || 'no module'}`),
      ...[...owners.keys()].filter((t) => !tables.has(t)).map((t) => `${t}: no migration creates it`),
      ...[...reads].flatMap(([mod, set]) => [...set].filter((t) => !tables.has(t)).map((t) => `${mod} reads ${t}: no such table`)),
    ];
    assert.deepEqual(problems, []);
  });

  test('a module writes only its own tables', () => {
    const wrong = uses
      .filter((u) => u.kind === 'write')
      .filter((u) => {
        const mod = moduleOf(u.file);
        return mod !== null && !owns.get(mod)?.has(u.table);
      })
      .map((u) => `${u.file} writes ${u.table}`);
    assert.deepEqual([...new Set(wrong)], []);
  });

  test('a module reads only its own tables and the ones docs/architecture.md lists for it', () => {
    const wrong = uses
      .filter((u) => u.kind === 'read')
      .filter((u) => {
        const mod = moduleOf(u.file);
        return mod !== null && !owns.get(mod)?.has(u.table) && !reads.get(mod)?.has(u.table);
      })
      .map((u) => `${u.file} reads ${u.table}`);
    assert.deepEqual([...new Set(wrong)], []);
  });

  test('every listed read is still made (the page does not outlive the code)', () => {
    const stale = [...reads].flatMap(([mod, set]) =>
      [...set].filter((t) => !uses.some((u) => u.kind === 'read' && u.table === t && moduleOf(u.file) === mod)).map((t) => `${mod} → ${t}`),
    );
    assert.deepEqual(stale, []);
  });

  test('no SQL on our tables outside src/modules', () => {
    const outside = uses.filter((u) => moduleOf(u.file) === null).map((u) => `${u.file}: ${u.kind} ${u.table}`);
    assert.deepEqual([...new Set(outside)], []);
  });

  test('the scanner sees writes, reads and common table expressions', () => {
    const dir = fs.mkdtempSync(path.join(root, '.tmp-ownership-'));
    try {
      const f = path.join(dir, 'x.ts');
      fs.writeFileSync(
        f,
        'const a = `WITH recent AS (SELECT 1 FROM detections) UPDATE satellites SET x = 1 FROM recent`;\nconst b = `DELETE FROM chunks USING users`;',
      );
      const got = usesOf(f, new Set(['detections', 'satellites', 'chunks', 'users', 'recent'])).map((u) => `${u.kind} ${u.table}`);
      assert.deepEqual(got.sort(), ['read detections', 'read users', 'write chunks', 'write satellites']);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
