/**
 * `npm run bench -- ingest-sql` (issue 37, "per-dispatcher ingest fell"): what the database does
 * per chunk on the ingest path and after it, measured without the broker, the hub or the model —
 * the chunk row insert as the dispatcher batches it (storeMany, 8 at a time) and the worker's
 * "classified" mark — with the pieces added since the 92 % figure switched on and off in turn:
 * the storage-usage triggers (migration 0024) and the unclassified index (0029).
 * Embedded PGlite by default (in the hub's process: its cost is the dispatcher's CPU), PostgreSQL
 * with DATABASE_URL (a fresh schema). BENCH_CHUNKS (4000 per phase), BENCH_ROUNDS (3).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Count, createDb } from '../src/infra/db/index.ts';
import { migrate } from '../src/infra/db/migrate.ts';
import { createAudioRepo } from '../src/modules/audio/repo.ts';

const CHUNKS = Number(process.env.BENCH_CHUNKS ?? 4000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const BATCH = 8;

export async function run(): Promise<void> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'chorus-ingest-sql-'));
  const schema = process.env.DATABASE_URL ? `bench_${crypto.randomBytes(4).toString('hex')}` : null;
  if (schema) {
    const pg = await import('pg');
    const c = new pg.default.Client({ connectionString: process.env.DATABASE_URL });
    await c.connect();
    await c.query(`CREATE SCHEMA ${schema}`);
    await c.end();
  }
  const db = await createDb({ databaseUrl: process.env.DATABASE_URL ?? null, dataDir, databaseSchema: schema });
  try {
    await migrate(db);
    const repo = createAudioRepo(db);
    const tenant = crypto.randomUUID();
    const now = new Date();
    await db.run('INSERT INTO tenants (id, name, slug, created_at) VALUES ($1, $2, $3, $4)', [tenant, 'Bench', `bench-${tenant}`, now]);
    const phases: Array<{ name: string; setup: string[]; teardown: string[] }> = [
      { name: 'as shipped', setup: [], teardown: [] },
      {
        name: 'without the storage triggers (0024)',
        setup: [
          'ALTER TABLE chunks DISABLE TRIGGER chunks_audio_storage_insert',
          'ALTER TABLE chunks DISABLE TRIGGER chunks_audio_storage_update',
        ],
        teardown: [
          'ALTER TABLE chunks ENABLE TRIGGER chunks_audio_storage_insert',
          'ALTER TABLE chunks ENABLE TRIGGER chunks_audio_storage_update',
        ],
      },
      {
        name: 'without the unclassified index (0029)',
        setup: ['DROP INDEX chunks_unclassified'],
        teardown: ['CREATE INDEX chunks_unclassified ON chunks (received_at, id) WHERE classified_at IS NULL'],
      },
    ];
    const figures = new Map<string, { insert: number[]; mark: number[]; marks: number[] }>();
    for (let round = 0; round < ROUNDS; round++) {
      for (const phase of phases) {
        for (const s of phase.setup) await db.run(s);
        const sat = crypto.randomUUID();
        await db.run('INSERT INTO satellites (id, tenant_id, name, created_at, updated_at) VALUES ($1, $2, $3, $4, $4)', [
          sat,
          tenant,
          sat,
          now,
        ]);
        const ids: string[] = [];
        const t0 = performance.now();
        for (let i = 0; i < CHUNKS; i += BATCH) {
          const batch = Array.from({ length: Math.min(BATCH, CHUNKS - i) }, (_, k) => {
            const id = crypto.randomUUID();
            ids.push(id);
            const at = new Date(now.getTime() + (i + k) * 3000);
            return {
              id,
              tenantId: tenant,
              satelliteId: sat,
              recordedAt: at,
              durationMs: 3000,
              sampleRate: 48000,
              storageKey: `audio/${tenant}/${sat}/${id}.wav`,
              bytes: 288_044,
              latitude: null,
              longitude: null,
              receivedAt: at,
            };
          });
          await repo.storeMany(batch);
        }
        const t1 = performance.now();
        // Half marked one at a time (as the worker did), half eight to a statement (as marks that wait for each other go now).
        const half = Math.floor(ids.length / 2);
        for (const id of ids.slice(0, half)) await repo.markClassified([{ tenantId: tenant, chunkId: id, at: now }]);
        const t2 = performance.now();
        for (let i = half; i < ids.length; i += BATCH)
          await repo.markClassified(ids.slice(i, i + BATCH).map((id) => ({ tenantId: tenant, chunkId: id, at: now })));
        const t3 = performance.now();
        for (const s of phase.teardown) await db.run(s);
        const f = figures.get(phase.name) ?? { insert: [], mark: [], marks: [] };
        f.insert.push(((t1 - t0) * 1000) / CHUNKS);
        f.mark.push(((t2 - t1) * 1000) / half);
        f.marks.push(((t3 - t2) * 1000) / (ids.length - half));
        figures.set(phase.name, f);
      }
    }
    console.log(
      `${process.env.DATABASE_URL ? 'PostgreSQL' : 'PGlite'}: ${CHUNKS} chunks per phase, batches of ${BATCH}, ${ROUNDS} rounds (median of rounds), µs per chunk`,
    );
    const med = (a: number[]) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
    for (const [name, f] of figures)
      console.log(
        `  ${name.padEnd(40)} row insert ${med(f.insert).toFixed(0).padStart(5)}   classified mark ${med(f.mark).toFixed(0).padStart(5)}   marks by ${BATCH} ${med(f.marks).toFixed(0).padStart(5)}`,
      );
    if (schema) {
      // The capacity model's database bytes per chunk: the table with its indexes and TOAST.
      const size = await db.query(Count, `SELECT (pg_total_relation_size('chunks') / greatest(count(*), 1))::int AS n FROM chunks`);
      console.log(`  chunks: ${size[0].n} bytes per row with its indexes`);
    }
  } finally {
    await db.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
    if (schema) {
      const pg = await import('pg');
      const c = new pg.default.Client({ connectionString: process.env.DATABASE_URL });
      await c.connect();
      await c.query(`DROP SCHEMA ${schema} CASCADE`);
      await c.end();
    }
  }
}
