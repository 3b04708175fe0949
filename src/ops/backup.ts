/**
 * `chorus backup` and `chorus restore` for a hub on embedded parts: PGlite in `${dataDir}/db`,
 * objects as files in `${dataDir}/objects`, the generated `${dataDir}/secret`. With the hub
 * stopped (the data dir lock says whether it runs) the command opens the database itself; while
 * a hub runs, that hub dumps its database on request (online-backup.ts) and the objects are copied
 * after the dump, so every row's object is in the archive. PostgreSQL and S3 deployments
 * back up with their own tools (docs/operations.md, "Backups").
 *
 * The archive is a gzipped tar: `manifest.json` first (format, hub version, when, the
 * database's migrations and row counts per table, object count and bytes), then `secret`,
 * `database.tar.gz` (PGlite's own dump of its data dir) and `objects/<key>` for every object.
 */
import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import { createGunzip, createGzip } from 'node:zlib';
import { parseArgs } from 'node:util';
import { createPgliteDb } from '../infra/db/pglite.ts';
import type { Db } from '../infra/db/types.ts';
import { col, Count, shape } from '../infra/db/shape.ts';
import { listMigrations } from '../infra/db/migrate.ts';
import { PACKAGE_VERSION } from '../protocol/version.ts';
import { DataDirInUse, lockDataDir, type DataDirLock, type LockNote } from './data-dir-lock.ts';
import { dumpFromRunningHub } from './online-backup.ts';
import { readTar, tarStream, type TarSource } from './tar.ts';

export const BACKUP_FORMAT = 'chorus-backup/1';

export interface BackupManifest {
  format: typeof BACKUP_FORMAT;
  version: string;
  created: string;
  database: { migrations: string[]; tables: Record<string, number>; bytes: number };
  objects: { count: number; bytes: number };
  /** Whether the archive holds `${dataDir}/secret`; without it the hub's secret is CHORUS_SECRET, kept elsewhere. */
  secret: boolean;
}

type Env = Record<string, string | undefined>;

const dataDirOf = (env: Env, flag?: string) => path.resolve(flag || env.CHORUS_DATA_DIR || './data');

/** Embedded parts only: PostgreSQL and S3 have their own backup tools. */
function requireEmbedded(env: Env, what: 'backup' | 'restore') {
  if (env.DATABASE_URL) {
    throw new Error(
      `DATABASE_URL is set: this hub's database is PostgreSQL. chorus ${what} covers embedded parts only; use pg_dump / pg_restore (docs/operations.md, "Backups").`,
    );
  }
  if (env.S3_URL) {
    throw new Error(
      `S3_URL is set: this hub's objects live in an S3 store. chorus ${what} covers embedded parts only; sync the bucket with the object store's tools (docs/operations.md, "Backups").`,
    );
  }
}

/** Object files under root as [key, file, size], temp files of unfinished puts left out. */
function listObjects(root: string): { key: string; file: string; size: number }[] {
  const out: { key: string; file: string; size: number }[] = [];
  const walk = (dir: string) => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw e;
    }
    for (const e of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      const file = path.join(dir, e.name);
      if (e.isDirectory()) walk(file);
      else if (e.isFile() && !/^\..*\.tmp$/.test(e.name)) {
        out.push({ key: path.relative(root, file).split(path.sep).join('/'), file, size: fs.statSync(file).size });
      }
    }
  };
  walk(root);
  return out;
}

const TableName = shape({ name: col.text() });
const Version = shape({ version: col.text() });

async function tableCounts(db: Db): Promise<Record<string, number>> {
  const tables = await db.query(TableName, `SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename`);
  const counts: Record<string, number> = {};
  for (const { name } of tables) {
    counts[name] = (await db.one(Count, `SELECT count(*)::int AS n FROM "${name.replace(/"/g, '""')}"`)).n;
  }
  return counts;
}

export interface BackupResult {
  file: string;
  manifest: BackupManifest;
  /** The process id of the running hub that dumped its database, or null (the hub was stopped). */
  fromRunningHub: number | null;
}

export async function backup(opts: { dataDir: string; out: string; force?: boolean; now?: Date }): Promise<BackupResult> {
  const dataDir = path.resolve(opts.dataDir);
  const out = path.resolve(opts.out);
  if (fs.existsSync(out)) throw new Error(`${out} exists; name a new file for the backup`);
  if (!fs.existsSync(path.join(dataDir, 'db', 'PG_VERSION')))
    throw new Error(`No embedded database in ${dataDir} (expected ${dataDir}/db)`);
  // A running hub that answers backup requests dumps its own database (online-backup.ts); any
  // other holder of the data dir (an older hub, a restore) is refused as before.
  let lock: DataDirLock | null = null;
  let hub: LockNote | null = null;
  try {
    lock = lockDataDir(dataDir, { purpose: 'backup', takeForeign: opts.force });
  } catch (err) {
    if (!(err instanceof DataDirInUse && err.holder.purpose === 'serve' && err.holder.onlineBackup)) throw err;
    hub = err.holder;
  }
  const partial = `${out}.${process.pid}.partial`;
  try {
    let dbBytes = Buffer.alloc(0);
    if (hub) dbBytes = Buffer.from(await dumpFromRunningHub(dataDir));
    // Row counts and migrations from the dump itself (a running hub's tables move on meanwhile).
    const { db, dump } = hub
      ? await createPgliteDb({ dataDir: null, loadDataDir: dbBytes })
      : await createPgliteDb({ dataDir: path.join(dataDir, 'db') });
    let tables: Record<string, number>;
    let migrations: string[];
    try {
      migrations = (await db.query(Version, 'SELECT version FROM schema_migrations ORDER BY version')).map((r) => r.version);
      tables = await tableCounts(db);
      if (!hub) dbBytes = Buffer.from(await dump());
    } finally {
      await db.close();
    }
    const objects = listObjects(path.join(dataDir, 'objects'));
    const secretFile = path.join(dataDir, 'secret');
    const secret = fs.existsSync(secretFile) ? fs.readFileSync(secretFile) : null;
    const manifest: BackupManifest = {
      format: BACKUP_FORMAT,
      version: PACKAGE_VERSION,
      created: (opts.now ?? new Date()).toISOString(),
      database: { migrations, tables, bytes: dbBytes.length },
      objects: { count: objects.length, bytes: objects.reduce((s, o) => s + o.size, 0) },
      secret: secret !== null,
    };
    const mtime = new Date(manifest.created);
    function* entries(): Generator<TarSource> {
      const m = Buffer.from(JSON.stringify(manifest, null, 2) + '\n');
      yield { name: 'manifest.json', data: m, size: m.length, mtime };
      if (secret) yield { name: 'secret', data: secret, size: secret.length, mode: 0o600, mtime };
      yield { name: 'database.tar.gz', data: dbBytes, size: dbBytes.length, mtime };
      for (const o of objects) yield { name: `objects/${o.key}`, file: o.file, size: o.size, mtime };
    }
    await pipeline(Readable.from(tarStream(entries())), createGzip(), fs.createWriteStream(partial, { mode: 0o600 }));
    fs.renameSync(partial, out);
    return { file: out, manifest, fromRunningHub: hub?.pid ?? null };
  } catch (err) {
    fs.rmSync(partial, { force: true });
    throw err;
  } finally {
    lock?.release();
  }
}

/** The one place an archive name may land: inside dir, no `..`, no absolute path. */
function inside(dir: string, rel: string): string {
  const parts = rel.split('/');
  if (!rel || rel.startsWith('/') || parts.some((p) => p === '' || p === '.' || p === '..' || p.includes('\\'))) {
    throw new Error(`the archive names an unsafe path: ${JSON.stringify(rel)}`);
  }
  const file = path.resolve(dir, ...parts);
  if (!file.startsWith(dir + path.sep)) throw new Error(`the archive names an unsafe path: ${JSON.stringify(rel)}`);
  return file;
}

const RESTORED = ['db', 'objects', 'secret', 'tmp'];

export async function restore(opts: { dataDir: string; file: string; force?: boolean }): Promise<BackupManifest> {
  const dataDir = path.resolve(opts.dataDir);
  const file = path.resolve(opts.file);
  if (!fs.existsSync(file)) throw new Error(`${file} does not exist`);
  const existing = fs.existsSync(dataDir) ? fs.readdirSync(dataDir) : [];
  if (existing.length > 0 && !opts.force) {
    throw new Error(
      `The data dir ${dataDir} is not empty; restore into an empty one, or add --force to replace its database, objects and secret`,
    );
  }
  const lock = lockDataDir(dataDir, { purpose: 'restore', takeForeign: opts.force });
  const clear = () => {
    for (const p of RESTORED) fs.rmSync(path.join(dataDir, p), { recursive: true, force: true });
  };
  try {
    clear();
    const objectsDir = path.join(dataDir, 'objects');
    let manifest: BackupManifest | null = null;
    let database: Buffer | null = null;
    let objects = 0;
    let objectBytes = 0;
    const source = fs.createReadStream(file).pipe(createGunzip());
    for await (const entry of readTar(source)) {
      if (!manifest) {
        if (entry.name !== 'manifest.json') throw new Error(`${file} is not a chorus backup (it does not start with manifest.json)`);
        const parsed = JSON.parse(Buffer.concat(await collect(entry.content)).toString('utf8')) as BackupManifest;
        if (parsed.format !== BACKUP_FORMAT)
          throw new Error(`${file} has format ${JSON.stringify(parsed.format)}; this hub reads ${BACKUP_FORMAT}`);
        const known = new Set(listMigrations().map((m) => m.version));
        const unknown = parsed.database.migrations.filter((v) => !known.has(v));
        if (unknown.length && !opts.force) {
          throw new Error(
            `The backup comes from a newer hub (${parsed.version}; migrations ${unknown.join(', ')} are unknown to ${PACKAGE_VERSION}). Restore it with that version or newer.`,
          );
        }
        manifest = parsed;
      } else if (entry.name === 'secret') {
        fs.mkdirSync(dataDir, { recursive: true });
        await pipeline(Readable.from(entry.content), fs.createWriteStream(path.join(dataDir, 'secret'), { mode: 0o600 }));
      } else if (entry.name === 'database.tar.gz') {
        database = Buffer.concat(await collect(entry.content));
      } else if (entry.name.startsWith('objects/')) {
        const target = inside(objectsDir, entry.name.slice('objects/'.length));
        fs.mkdirSync(path.dirname(target), { recursive: true });
        await pipeline(Readable.from(entry.content), fs.createWriteStream(target));
        objects++;
        objectBytes += entry.size;
      } else {
        throw new Error(`the archive holds an unexpected entry ${JSON.stringify(entry.name)}`);
      }
    }
    if (!manifest) throw new Error(`${file} is empty`);
    if (!database) throw new Error(`${file} holds no database`);
    if (objects !== manifest.objects.count || objectBytes !== manifest.objects.bytes) {
      throw new Error(
        `the archive holds ${objects} objects (${objectBytes} bytes); its manifest says ${manifest.objects.count} (${manifest.objects.bytes} bytes)`,
      );
    }
    const dbDir = path.join(dataDir, 'db');
    fs.mkdirSync(dbDir, { recursive: true });
    const { db } = await createPgliteDb({ dataDir: dbDir, loadDataDir: database });
    try {
      const counts = await tableCounts(db);
      for (const [table, n] of Object.entries(manifest.database.tables)) {
        if (counts[table] !== n) throw new Error(`the restored table ${table} has ${counts[table] ?? 'no'} rows; the manifest says ${n}`);
      }
    } finally {
      await db.close();
    }
    return manifest;
  } catch (err) {
    clear();
    throw err;
  } finally {
    lock.release();
  }
}

async function collect(it: AsyncIterable<Buffer>): Promise<Buffer[]> {
  const parts: Buffer[] = [];
  for await (const p of it) parts.push(p);
  return parts;
}

const mib = (n: number) => `${(n / 1048576).toFixed(1)} MiB`;

/** `chorus backup --out FILE [--data DIR] [--force]`; the exit code. */
export async function backupCommand(args: string[], env: Env = process.env): Promise<number> {
  const { values } = parseArgs({
    args,
    options: { out: { type: 'string' }, data: { type: 'string' }, force: { type: 'boolean', default: false } },
  });
  if (!values.out) throw new Error('usage: chorus backup --out FILE [--data DIR] [--force]');
  requireEmbedded(env, 'backup');
  const started = Date.now();
  const { file, manifest, fromRunningHub } = await backup({ dataDir: dataDirOf(env, values.data), out: values.out, force: values.force });
  const rows = Object.values(manifest.database.tables).reduce((s, n) => s + n, 0);
  const sha = crypto.createHash('sha256');
  for await (const chunk of fs.createReadStream(file)) sha.update(chunk as Buffer);
  console.log(
    [
      `Backup written to ${file} (${mib(fs.statSync(file).size)}, ${((Date.now() - started) / 1000).toFixed(1)} s)` +
        (fromRunningHub ? `, database dumped by the running hub (process ${fromRunningHub})` : ''),
      `  database: ${Object.keys(manifest.database.tables).length} tables, ${rows} rows, ${manifest.database.migrations.length} migrations`,
      `  objects:  ${manifest.objects.count} (${mib(manifest.objects.bytes)})`,
      manifest.secret
        ? '  secret:   included (the archive can sign sessions: keep it as safe as the hub)'
        : '  secret:   not in the data dir; the hub uses CHORUS_SECRET, keep that value with the backup',
      `  sha256:   ${sha.digest('hex')}`,
    ].join('\n'),
  );
  if (manifest.secret && env.CHORUS_SECRET)
    console.log('Note: CHORUS_SECRET is set and overrides the secret file; keep that value with the backup.');
  return 0;
}

/** `chorus restore FILE [--data DIR] [--force]`; the exit code. */
export async function restoreCommand(args: string[], env: Env = process.env): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { data: { type: 'string' }, force: { type: 'boolean', default: false } },
  });
  if (positionals.length !== 1) throw new Error('usage: chorus restore FILE [--data DIR] [--force]');
  requireEmbedded(env, 'restore');
  const dataDir = dataDirOf(env, values.data);
  const manifest = await restore({ dataDir, file: positionals[0], force: values.force });
  console.log(
    [
      `Restored the backup of ${manifest.created} (hub ${manifest.version}) into ${dataDir}`,
      `  database: ${Object.keys(manifest.database.tables).length} tables, row counts checked`,
      `  objects:  ${manifest.objects.count} (${mib(manifest.objects.bytes)})`,
      manifest.secret ? '  secret:   restored' : '  secret:   not in the backup; start the hub with the CHORUS_SECRET it had',
      'Start the hub on this data dir; it applies any newer migrations at start.',
    ].join('\n'),
  );
  return 0;
}
