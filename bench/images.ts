/**
 * Species photo figures (issue 20): square crops per second, cold (made from the stored display
 * copy) and cached (from the in-memory crop cache), for each size; and the p99 latency of a
 * cached square at 100 concurrent requests (target < 20 ms). The hub runs as its own process
 * and downloads its photos from local servers playing Wikimedia Commons (1600×1067 JPEGs).
 */
import zlib from 'node:zlib';
import fs from 'node:fs';
import path from 'node:path';
import os from 'node:os';
import { spawn } from 'node:child_process';
import autocannon from 'autocannon';
import { adminAuth, api, startHubProcess } from './hub-process.ts';
import { birdJpeg, startFakeProviders } from '../test/helpers/photo-providers.ts';

const SPECIES = Number(process.env.BENCH_SPECIES ?? 24);
const DURATION = Number(process.env.BENCH_SECONDS ?? 5);
const SIZES = [64, 128, 256, 512] as const;

/** The first catalog species with scientific names: the hub knows them, so it asks the providers. */
function catalogSpecies(n: number): Array<{ code: string; name: string }> {
  const file = path.resolve(import.meta.dirname, '../assets/species/catalog.json.gz');
  const c = JSON.parse(zlib.gunzipSync(fs.readFileSync(file)).toString('utf8')) as { code: string[]; scientificName: string[] };
  return c.code.slice(0, n).map((code, i) => ({ code, name: c.scientificName[i] }));
}

export async function run() {
  const fake = await startFakeProviders();
  const species = catalogSpecies(SPECIES);
  for (const [i, s] of species.entries()) {
    const file = `bird-${i}.jpg`;
    fake.files.set(file, {
      body: await birdJpeg({ width: 1600, height: 1067, x: 0.15 + (0.7 * i) / SPECIES, y: 0.3 + (i % 4) * 0.1, noisy: true }),
      type: 'image/jpeg',
    });
    fake.commonsPhotos.set(s.name, [{ id: i + 1, file, licence: 'CC BY 4.0', author: `Photographer ${i}` }]);
  }
  const hub = await startHubProcess({ ...fake.env, IMAGES_PROVIDERS: 'wikimedia', IMAGES_PER_SPECIES: '1' });
  try {
    const auth = await adminAuth(hub);
    const codes = species.map((s) => s.code);
    await api(`${hub.url}/api/species/images`, { headers: auth, body: { codes } });
    const t0 = Date.now();
    for (;;) {
      const stats = await api(`${hub.url}/api/species/image-cache/stats`, { headers: auth });
      if (stats.species.pending === 0 && stats.awaitingAnalysis === 0 && stats.photos > 0) {
        console.log(`${stats.photos} photos downloaded, checked, stored and analysed in ${Date.now() - t0} ms`);
        break;
      }
      if (Date.now() - t0 > 120_000) throw new Error(`photos not ready: ${JSON.stringify(stats)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    const statuses = (await api(`${hub.url}/api/species/images`, { headers: auth, body: { codes } })).images as Array<{ key?: string }>;
    const keys = statuses.map((s) => s.key).filter((k): k is string => Boolean(k));

    console.log('size  cold crops/s  cached req/s  cached p50 ms  cached p99 ms (50 connections)');
    for (const size of SIZES) {
      // Cold: each photo's first square of this size, four at a time (the crop is made from the stored display copy).
      const start = performance.now();
      let next = 0;
      await Promise.all(
        Array.from({ length: 4 }, async () => {
          while (next < keys.length) {
            const key = keys[next++];
            const res = await fetch(`${hub.url}/api/species/image/by-key?key=${key}&square=${size}`, { headers: auth });
            if (res.status !== 200) throw new Error(`square ${size}: ${res.status}`);
            await res.arrayBuffer();
          }
        }),
      );
      const cold = keys.length / ((performance.now() - start) / 1000);
      const url = `${hub.url}/api/species/image/by-key?key=${keys[0]}&square=${size}`;
      const r = await autocannon({ url, headers: auth, connections: 50, duration: DURATION });
      if (r.non2xx > 0 || r.errors > 0) throw new Error(`${url}: ${r.non2xx} non-2xx, ${r.errors} errors`);
      console.log(
        `${String(size).padEnd(6)}${cold.toFixed(1).padStart(12)}  ${r.requests.average.toFixed(0).padStart(12)}  ${String(r.latency.p50).padStart(13)}  ${String(r.latency.p99).padStart(13)}`,
      );
    }

    // The target: a cached square (the 128 px one the dashboard lists use) at 100 concurrent requests.
    const url = `${hub.url}/api/species/image/by-key?key=${keys[0]}&square=128`;
    await autocannon({ url, headers: auth, connections: 100, duration: 2 });
    const r = await autocannon({ url, headers: auth, connections: 100, duration: DURATION * 2 });
    if (r.non2xx > 0 || r.errors > 0) throw new Error(`${url}: ${r.non2xx} non-2xx, ${r.errors} errors`);
    console.log(
      `cached square 128 at 100 connections: ${r.requests.average.toFixed(0)} req/s, p50 ${r.latency.p50} ms, p99 ${r.latency.p99} ms (target < 20 ms)`,
    );
    // The same load on a route that does almost nothing: on a shared machine, the floor the figures above stand on.
    const floor = await autocannon({ url: `${hub.url}/api/species/languages`, connections: 100, duration: DURATION });
    console.log(
      `baseline GET /api/species/languages at 100 connections: ${floor.requests.average.toFixed(0)} req/s, p99 ${floor.latency.p99} ms`,
    );
    const me = await autocannon({ url: `${hub.url}/api/auth/me`, headers: auth, connections: 100, duration: DURATION });
    console.log(
      `baseline GET /api/auth/me (the same sign-in check) at 100 connections: ${me.requests.average.toFixed(0)} req/s, p99 ${me.latency.p99} ms`,
    );
    const pub = `${hub.url}/api/species/showcase/image?code=${codes[0]}&square=256`;
    const rp = await autocannon({ url: pub, connections: 100, duration: DURATION });
    console.log(`public showcase square 256 at 100 connections: ${rp.requests.average.toFixed(0)} req/s, p99 ${rp.latency.p99} ms`);
    // The framework's floor: bare Fastify in its own process sending the same squares with the same
    // headers. autocannon decodes every body as UTF-8 text (its issue #485), which costs it dearly on
    // large binary bodies: the 512 px floor shows how much of the 512 row is the load generator's.
    for (const size of [128, 512]) {
      const squareUrl = `${hub.url}/api/species/image/by-key?key=${keys[0]}&square=${size}`;
      const square = Buffer.from(await (await fetch(squareUrl, { headers: auth })).arrayBuffer());
      const bare = await bareFastify(square);
      try {
        const connections = size === 128 ? 100 : 50;
        await autocannon({ url: bare.url, connections, duration: 2 });
        const rb = await autocannon({ url: bare.url, connections, duration: DURATION * 2 });
        console.log(
          `floor: bare Fastify (own process, the ${size} px square's ${square.length} bytes and headers) at ${connections} connections: ${rb.requests.average.toFixed(0)} req/s, p50 ${rb.latency.p50} ms, p99 ${rb.latency.p99} ms`,
        );
      } finally {
        bare.stop();
      }
    }
  } finally {
    await hub.stop();
    await fake.close();
  }
}

/** bench/bare-fastify.ts in its own process, answering every GET with `body`. */
async function bareFastify(body: Buffer): Promise<{ url: string; stop: () => void }> {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'chorus-bare-')), 'square.jpg');
  fs.writeFileSync(file, body);
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(import.meta.dirname, 'bare-fastify.ts'), file], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout.once('data', (d: Buffer) => resolve(Number(String(d).trim())));
    child.once('exit', (code) => reject(new Error(`bare Fastify exited with ${code}`)));
  });
  return {
    url: `http://127.0.0.1:${port}/`,
    stop: () => {
      child.kill();
      fs.rmSync(path.dirname(file), { recursive: true, force: true });
    },
  };
}
