/**
 * `npm run bench -- similarity`: search by sound (issue 35 point 4), "Find similar calls" at N
 * embeddings of 1,024 values (BirdNET's length) in one team.
 *
 * Seeds one team with N detections and their embeddings (300 species; each embedding is its
 * species' centre plus noise, so neighbours are meaningful), then measures:
 * - on pgvector (PGlite here; PostgreSQL with the extension elsewhere): the model's HNSW index
 *   build time and size, p50/p99 of the nearest-10 query alone (the repository's statement) and
 *   of the whole answer (the service: index query, then the neighbours' rows and votes), and
 *   recall@10 against an exact ranking;
 * - on a PostgreSQL without pgvector: the exact scan's p50/p99 (the service).
 *
 * BENCH_ENGINE=pglite (default; a data dir under the OS temp dir, removed after) or postgres
 * (DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test; a schema of its own, dropped
 * after). BENCH_ROWS (default 20,000), BENCH_ITERATIONS (default 200 on the index, 20 on the
 * exact scan), BENCH_RECALL_QUERIES (default 20). docs/model.md "Search by sound" has the figures (20,000 here).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createPgliteDb } from '../src/infra/db/pglite.ts';
import { createPostgresDb } from '../src/infra/db/postgres.ts';
import { migrate } from '../src/infra/db/migrate.ts';
import type { Db } from '../src/infra/db/types.ts';
import { col, shape } from '../src/infra/db/shape.ts';
import { createSimilarityRepo, indexName } from '../src/modules/similarity/repo.ts';
import { createSimilarityService } from '../src/modules/similarity/service.ts';
import { pct } from './detections.ts';

const ENGINE = process.env.BENCH_ENGINE ?? 'pglite';
const ROWS = Number(process.env.BENCH_ROWS ?? 20_000);
const DIMS = 1024;
const SPECIES = 300;
const MODEL = 'bench-birdnet';
const BATCH = 250;
const RECALL_QUERIES = Number(process.env.BENCH_RECALL_QUERIES ?? 20);

/** Row i's embedding, made again on demand from i alone (the exact ranking re-derives every row instead of holding 400 MB). */
const centres = Array.from({ length: SPECIES }, (_, s) => unitRandom(1_000_003 + s, 1));
function unitRandom(seed: number, scale: number): Float32Array {
  let x = seed >>> 0 || 1;
  const v = new Float32Array(DIMS);
  for (let i = 0; i < DIMS; i++) {
    // xorshift32: fast, and the same on every run
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    v[i] = ((x >>> 0) / 2 ** 32 - 0.5) * scale;
  }
  return v;
}
const speciesOf = (i: number) => Math.floor((SPECIES * ((i * 2654435761) % 2 ** 32) ** 2) / 2 ** 64);
function embeddingOf(i: number): Float32Array {
  const c = centres[speciesOf(i)];
  const noise = unitRandom(i + 7, 0.8);
  return c.map((v, k) => v + noise[k]);
}
const cosine = (a: Float32Array, b: Float32Array) => {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let k = 0; k < a.length; k++) {
    dot += a[k] * b[k];
    na += a[k] * a[k];
    nb += b[k] * b[k];
  }
  return dot / Math.sqrt(na * nb);
};

const Size = shape({ bytes: col.num() });

async function openDb(): Promise<{ db: Db; close: () => Promise<void> }> {
  if (ENGINE === 'postgres') {
    const url = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
    const schema = `bench_similarity_${crypto.randomBytes(4).toString('hex')}`;
    const admin = createPostgresDb({ url });
    await admin.run(`CREATE SCHEMA ${schema}`);
    const db = createPostgresDb({ url, schema, poolSize: 4 });
    return {
      db,
      close: async () => {
        await db.close();
        await admin.run(`DROP SCHEMA ${schema} CASCADE`);
        await admin.close();
      },
    };
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'chorus-bench-similarity-'));
  const { db } = await createPgliteDb({ dataDir: dir });
  return {
    db,
    close: async () => {
      await db.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function time<T>(fn: () => Promise<T>): Promise<[number, T]> {
  const t = performance.now();
  const out = await fn();
  return [performance.now() - t, out];
}

export async function run(): Promise<void> {
  const { db, close } = await openDb();
  try {
    await migrate(db);
    const repo = createSimilarityRepo(db);
    const hnsw = await repo.hasVectorColumn();
    console.log(`engine ${db.kind}, index ${hnsw ? 'hnsw' : 'exact'}, ${ROWS.toLocaleString('en')} embeddings of ${DIMS}`);

    const tenantId = crypto.randomUUID();
    const satelliteId = crypto.randomUUID();
    await db.run(`INSERT INTO tenants (id, name, slug, created_at) VALUES ($1, 'Bench', $2, now())`, [tenantId, `bench-${tenantId}`]);
    await db.run(`INSERT INTO satellites (id, tenant_id, name, created_at, updated_at) VALUES ($1, $2, 'Bench sat', now(), now())`, [
      satelliteId,
      tenantId,
    ]);
    const ids: string[] = [];
    const [seedMs] = await time(async () => {
      for (let start = 0; start < ROWS; start += BATCH) {
        const n = Math.min(BATCH, ROWS - start);
        const batch = Array.from({ length: n }, (_, k) => ({ id: crypto.randomUUID(), i: start + k }));
        ids.push(...batch.map((b) => b.id));
        await db.run(
          `INSERT INTO detections (id, tenant_id, satellite_id, chunk_id, species_code, scientific_name, common_name, category, confidence,
             detected_at, start_ms, end_ms, model_id, is_first_of_season, is_first_of_day, is_rare, created_at)
           SELECT id, $1, $2, gen_random_uuid(), 'sp' || k, 'Species ' || k, 'Species ' || k, 'bird', 0.5,
             now() - (i || ' minutes')::interval, 0, 3000, $5, false, false, false, now()
           FROM unnest($3::uuid[], $4::int[]) WITH ORDINALITY AS b(id, k, i)`,
          [tenantId, satelliteId, batch.map((b) => b.id), batch.map((b) => speciesOf(b.i)), MODEL],
        );
        // The bytes as the worker writes them; on pgvector the vector too (the trigger would decode the bytes, 18 ms a row on PGlite).
        const params: unknown[] = [];
        const values = batch.map((b) => {
          const v = embeddingOf(b.i);
          params.push(b.id, Buffer.from(v.buffer));
          if (hnsw) params.push(`[${Array.from(v).join(',')}]`);
          const at = params.length;
          return hnsw ? `($${at - 2}, $T, $M, ${DIMS}, $${at - 1}, $${at}::vector)` : `($${at - 1}, $T, $M, ${DIMS}, $${at})`;
        });
        params.push(tenantId, MODEL);
        const t = params.length - 1;
        await db.run(
          `INSERT INTO detection_embeddings (detection_id, tenant_id, model_id, dims, vector${hnsw ? ', embedding' : ''})
           VALUES ${values
             .join(', ')
             .replaceAll('$T', `$${t}`)
             .replaceAll('$M', `$${t + 1}`)}`,
          params,
        );
        if ((start / BATCH) % 40 === 0) process.stdout.write(`\rseeded ${start + n}`);
      }
    });
    console.log(`\rseeded ${ROWS} in ${(seedMs / 1000).toFixed(1)} s`);
    const tableBytes = (await db.one(Size, `SELECT pg_total_relation_size('detection_embeddings')::float8 AS bytes`)).bytes;
    console.log(`detection_embeddings: ${(tableBytes / 2 ** 20).toFixed(0)} MiB`);

    if (hnsw) {
      // The build as the hub runs it (repo.ensureIndex), with room for the graph in memory.
      await db.run(`SET maintenance_work_mem = '1GB'`);
      const [buildMs] = await time(() => repo.ensureIndex(MODEL, DIMS));
      const size = (await db.one(Size, `SELECT pg_relation_size($1::regclass)::float8 AS bytes`, [indexName(MODEL, DIMS)])).bytes;
      console.log(`HNSW index build: ${(buildMs / 1000).toFixed(1)} s, size ${(size / 2 ** 20).toFixed(0)} MiB`);
    }

    const service = createSimilarityService({ db, visibleCategories: async () => ['bird'], verify: async () => null });
    const asker = { teamId: tenantId, userId: null };
    const iterations = Number(process.env.BENCH_ITERATIONS ?? (hnsw ? 200 : 20));
    const pick = (k: number) => ids[(k * 7919) % ids.length];
    for (let k = 0; k < Math.min(10, iterations); k++) await service.similarCalls(asker, pick(k), 10);
    const whole: number[] = [];
    const knn: number[] = [];
    for (let k = 0; k < iterations; k++) {
      const id = pick(k + 100);
      whole.push((await time(() => service.similarCalls(asker, id, 10)))[0]);
      if (hnsw) {
        const src = (await repo.source(tenantId, id, true))!;
        knn.push(
          (
            await time(() =>
              repo.nearestByIndex({ tenantId, modelId: MODEL, dims: DIMS, embedding: src.embedding!, exclude: [id], limit: 10 }),
            )
          )[0],
        );
      }
    }
    const fmt = (xs: number[]) => `p50 ${pct(xs, 50).toFixed(1)} ms, p99 ${pct(xs, 99).toFixed(1)} ms (${xs.length} queries)`;
    if (hnsw) console.log(`nearest-10 query (index): ${fmt(knn)}`);
    console.log(`Find similar calls, whole answer (${hnsw ? 'index' : 'exact scan'}): ${fmt(whole)}`);

    if (hnsw && RECALL_QUERIES > 0) {
      // Recall@10 against the exact ranking (every row's embedding made again from its number).
      const index = new Map(ids.map((id, i) => [id, i]));
      let hit = 0;
      for (let q = 0; q < RECALL_QUERIES; q++) {
        const qi = (q * 104729) % ids.length;
        const qv = embeddingOf(qi);
        const best: Array<{ i: number; s: number }> = [];
        for (let i = 0; i < ids.length; i++) {
          if (i === qi) continue;
          const s = cosine(qv, embeddingOf(i));
          if (best.length < 10 || s > best[9].s) {
            best.push({ i, s });
            best.sort((a, b) => b.s - a.s);
            if (best.length > 10) best.pop();
          }
        }
        const got = (await service.similarCalls(asker, ids[qi], 10)).similar.map((c) => index.get(c.id));
        hit += best.filter((b) => got.includes(b.i)).length;
      }
      console.log(`recall@10 over ${RECALL_QUERIES} queries: ${((hit / (RECALL_QUERIES * 10)) * 100).toFixed(1)} %`);
    }
  } finally {
    await close();
  }
}
