// test/run.mjs: the same on any parts — backup covers embedded parts only; the hub process here gets no DATABASE_URL or REDIS_URL.
/**
 * `chorus backup` while the hub runs and ingests (issue 21, "consistent while the hub runs"), on
 * embedded parts (PGlite and files; the command covers nothing else): the running hub dumps its
 * own database on the command's request, the objects are copied after. Then things change (a team
 * created, more chunks), the hub stops, the archive is restored into a fresh dir: every chunk acked
 * before the backup began is there with its object byte for byte, every restored chunk row has its
 * object and equals the hub's own row, and what changed after the backup is not there.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import mqtt from 'mqtt';
import { createPgliteDb } from '../src/infra/db/pglite.ts';
import { audioBody } from './helpers/raw-satellite.ts';
import { logLines } from './helpers/log-lines.ts';
import { call, freePort, startHubProcess, type HubProcess } from './helpers/hub-process.ts';
import { sqlOf } from './helpers/sql.ts';
import { waitFor } from './helpers/wait.ts';

const root = path.resolve(import.meta.dirname, '..');
const ADMIN = { email: 'backup@example.org', password: 'online-backup-password-1' };

function chorus(args: string[], env: Record<string, string>) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', ...args], {
    cwd: root,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, TMPDIR: process.env.TMPDIR, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c) => (stdout += c));
  child.stderr.on('data', (c) => (stderr += c));
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.on('exit', (code) => resolve({ code, stdout, stderr })),
  );
}

/** Object files by key. */
function objects(dataDir: string): Map<string, Buffer> {
  const base = path.join(dataDir, 'objects');
  const out = new Map<string, Buffer>();
  if (!fs.existsSync(base)) return out;
  for (const rel of fs.readdirSync(base, { recursive: true }) as string[]) {
    const file = path.join(base, rel);
    if (fs.statSync(file).isFile() && !path.basename(file).startsWith('.')) out.set(rel.split(path.sep).join('/'), fs.readFileSync(file));
  }
  return out;
}

describe('chorus backup while the hub runs', { timeout: 900_000 }, () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'chorus-online-backup-'));
  const dirA = path.join(tmp, 'a');
  const dirB = path.join(tmp, 'b');
  const archive = path.join(tmp, 'online.tar.gz');
  let hub: HubProcess | null = null;
  after(() => {
    if (hub && hub.child.exitCode === null && hub.child.signalCode === null) hub.child.kill('SIGKILL');
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  test('back up while ingesting, change things, restore: the rows and objects of the backup', async () => {
    const mqttPort = await freePort();
    const env = {
      CHORUS_DATA_DIR: dirA,
      HOST: '127.0.0.1',
      MQTT_HOST: '127.0.0.1',
      PORT: String(await freePort()),
      MQTT_PORT: String(mqttPort),
      MQTT_WS_PORT: '0',
      LOG_LEVEL: 'info',
      CHORUS_ADMIN_EMAIL: ADMIN.email,
      CHORUS_ADMIN_PASSWORD: ADMIN.password,
    };
    hub = startHubProcess(env);
    await hub.waitFor(/^start-up complete/);
    const token = (await call(hub.url, '/auth/login?returnToken=true', null, ADMIN)).body.token as string;
    const team = (await call(hub.url, '/auth/create-tenant', token, { name: 'Backed up' })).body;
    const reg = await call(hub.url, '/satellites', token, { tenantId: team.id, name: 'Steady' });
    assert.equal(reg.status, 201, reg.text);
    const sat = { ...reg.body, tenantId: team.id };
    const c = await mqtt.connectAsync(
      `mqtt://127.0.0.1:${mqttPort}`,
      { clientId: `satellite-${sat.id}`, username: sat.mqtt.username, password: sat.mqtt.password, reconnectPeriod: 0 },
      false,
    );
    const acked = new Set<string>();
    c.on('message', (_t, m) => {
      const a = JSON.parse(m.toString()) as { chunkId: string; status: string };
      if (a.status === 'stored') acked.add(a.chunkId);
    });
    await c.subscribeAsync(`chorus/${team.id}/${sat.id}/ack`, { qos: 1 });
    const send = () => {
      const b = audioBody(sat);
      c.publish(`chorus/${team.id}/${sat.id}/audio`, JSON.stringify(b), { qos: 1 });
      return b.chunkId;
    };
    const acks = (what: string, ids: string[]) => waitFor(what, () => ids.every((id) => acked.has(id)), { timeoutMs: 120_000 });
    const before = Array.from({ length: 5 }, send);
    await acks('the first chunks acked', before);

    // Ingest keeps flowing while the backup runs.
    let flowing = true;
    const during: string[] = [];
    const flow = (async () => {
      while (flowing) {
        during.push(send());
        // Paces the stream (about ten chunks a second) while the backup runs; nothing is concluded from it.
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    const b = await chorus(['backup', '--out', archive], { CHORUS_DATA_DIR: dirA });
    flowing = false;
    await flow;
    assert.equal(b.code, 0, b.stderr);
    assert.match(b.stdout, /database dumped by the running hub \(process \d+\)/);
    assert.ok(during.length > 0, 'chunks arrived during the backup');
    await acks('the chunks sent during the backup acked', during);

    // Changes after the backup: another team, more chunks.
    const later = (await call(hub.url, '/auth/create-tenant', token, { name: 'After the backup' })).body;
    const after_ = Array.from({ length: 3 }, send);
    await acks('the later chunks acked', after_);
    c.end(true);
    hub.child.kill('SIGTERM');
    assert.deepEqual(await hub.exited, { code: 0, signal: null });
    assert.ok(
      logLines(hub.stdout()).some((l) => /^online backup: database dumped for chorus backup/.test(l.msg)),
      'the hub logged the dump',
    );
    assert.equal(fs.readdirSync(path.join(dirA, 'backup-requests')).length, 0, 'no request or dump left behind');

    const r = await chorus(['restore', archive, '--data', dirB], {});
    assert.equal(r.code, 0, r.stderr);
    const objA = objects(dirA);
    const objB = objects(dirB);
    const a = await createPgliteDb({ dataDir: path.join(dirA, 'db') });
    const restored = await createPgliteDb({ dataDir: path.join(dirB, 'db') });
    try {
      const chunksOf = async (db: typeof a.db) =>
        new Map(
          (await sqlOf(db).query<{ id: string; storage_key: string }>('SELECT * FROM chunks ORDER BY id')).map((row) => [row.id, row]),
        );
      const inA = await chunksOf(a.db);
      const inB = await chunksOf(restored.db);
      for (const id of before) assert.ok(inB.has(id), `chunk ${id} acked before the backup is restored`);
      for (const id of after_) assert.equal(inB.has(id), false, `chunk ${id} stored after the backup is not`);
      // The worker marks a chunk classified when it is done with it, which may be after the backup.
      const asIngested = (row: Record<string, unknown> | undefined) => row && { ...row, classified_at: undefined };
      for (const [id, row] of inB) {
        assert.deepEqual(asIngested(row), asIngested(inA.get(id)), `chunk ${id} as the hub stored it`);
        const key = row.storage_key;
        assert.ok(objB.get(key)?.equals(objA.get(key)!), `the object of chunk ${id} restored byte for byte`);
      }
      const teams = await sqlOf(restored.db).query<{ id: string }>('SELECT id FROM tenants');
      assert.ok(teams.some((t) => t.id === team.id));
      assert.equal(
        teams.some((t) => t.id === later.id),
        false,
        'the team created after the backup is not restored',
      );
    } finally {
      await a.db.close();
      await restored.db.close();
    }
  });
});
