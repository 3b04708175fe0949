/**
 * `chorus models install` (issue 31) as an operator runs it: child processes of
 * `node --import tsx src/main.ts` on a temporary data dir with embedded PGlite (or a fresh
 * PostgreSQL schema when DATABASE_URL is set). The built-in ONNX file and its labels are the
 * model; a good --sha256 installs it (audited), a bad one installs nothing.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { BUILTIN_LABELS_PATH, BUILTIN_MODEL_PATH } from '../src/infra/classifier/onnx.ts';
import { runChorus } from './helpers/chorus-cli.ts';

const DATABASE_URL = process.env.DATABASE_URL;
const SHA = crypto.createHash('sha256').update(fs.readFileSync(BUILTIN_MODEL_PATH)).digest('hex');
const LABEL_COUNT = fs.readFileSync(BUILTIN_LABELS_PATH, 'utf8').trim().split('\n').length;

describe('chorus models install', { timeout: 300_000 }, () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'chorus-models-cli-'));
  const env: Record<string, string> = { CHORUS_DATA_DIR: dataDir, LOG_LEVEL: 'warn' };
  const schema = `models_cli_${crypto.randomBytes(6).toString('hex')}`;

  const sql = async (text: string) => {
    const c = new pg.Client({ connectionString: DATABASE_URL });
    await c.connect();
    try {
      return (await c.query(text)).rows;
    } finally {
      await c.end();
    }
  };

  after(async () => {
    if (DATABASE_URL) await sql(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const run = (args: string[]) => runChorus(args, env);

  const install = (sha256: string, extra: string[] = []) =>
    run(['models', 'install', BUILTIN_MODEL_PATH, '--labels', BUILTIN_LABELS_PATH, '--sha256', sha256, ...extra]);

  test('a local file with the right --sha256 is installed, made the default and listed; a wrong one installs nothing', async () => {
    if (DATABASE_URL) {
      await sql(`CREATE SCHEMA ${schema}`);
      Object.assign(env, { DATABASE_URL, DATABASE_SCHEMA: schema });
    }
    const good = await install(SHA, ['--name', 'Demo from a file', '--version', '7', '--family', 'birdnet-v2.4', '--default']);
    assert.equal(good.code, 0, `stdout: ${good.stdout}\nstderr: ${good.stderr}`);
    const id = /^Installed model ([0-9a-f-]{36}) "Demo from a file" version 7, the hub default$/m.exec(good.stdout)?.[1];
    assert.ok(id, good.stdout);
    assert.match(good.stdout, new RegExp(`^Labels: ${LABEL_COUNT}$`, 'm'));
    assert.match(good.stdout, /^Unknown labels: none/m);
    assert.match(good.stdout, new RegExp(`^SHA-256: ${SHA} \\(matches --sha256\\)$`, 'm'));
    assert.match(good.stdout, /^Attribution shown with its detections: Powered by BirdNET/m);
    assert.match(good.stderr, /^verifying$/m, 'progress goes to stderr');

    const bad = await install('f'.repeat(64), ['--name', 'Wrong sum']);
    assert.equal(bad.code, 1);
    assert.match(
      bad.stderr,
      new RegExp(`CHECKSUM_MISMATCH: The model file's SHA-256 is ${SHA}, not the f{64} given; nothing was installed`),
    );
    assert.doesNotMatch(bad.stdout, /Installed model/);

    // The list reads the store: the good install is there and the default, the refused one is not.
    const list = await run(['models', 'list']);
    assert.equal(list.code, 0, list.stderr);
    const rows = list.stdout.trim().split('\n');
    assert.deepEqual(
      rows.map((r) => r.split('\t')[0]),
      [id, 'builtin'],
      list.stdout,
    );
    assert.match(
      rows[0],
      new RegExp(`^${id}\tDemo from a file\t7\t${LABEL_COUNT} labels\t3s-48k\tbirdnet-v2.4\t${SHA.slice(0, 12)}\tdefault$`),
    );
    assert.doesNotMatch(list.stdout, /Wrong sum/);
    if (DATABASE_URL) {
      const audit = await sql(
        `SELECT action, target_id, actor_type FROM ${schema}.audit_log WHERE action LIKE 'admin.birdnet_model_%' ORDER BY id`,
      );
      assert.deepEqual(
        audit.map((a) => [a.action, a.target_id]),
        [
          ['admin.birdnet_model_uploaded', id],
          ['admin.birdnet_model_set_default', id],
        ],
      );
    }
  });

  test(
    'on embedded PGlite the command refuses a data dir a running hub holds',
    { skip: !!DATABASE_URL && 'holds no lock on PostgreSQL' },
    async () => {
      // A lock note naming this (live) test process stands for the running hub.
      const lock = path.join(dataDir, 'chorus.lock');
      fs.writeFileSync(
        lock,
        JSON.stringify({ pid: process.pid, hostname: os.hostname(), purpose: 'serve', since: new Date().toISOString() }),
      );
      try {
        const refused = await install(SHA);
        assert.equal(refused.code, 1);
        assert.match(refused.stderr, /is in use: chorus serve runs as process/);
        assert.match(refused.stderr, /install from its dashboard \(Admin → Install a model\) or with POST \/api\/admin\/models\/install/);
      } finally {
        fs.rmSync(lock, { force: true });
      }
    },
  );
});
