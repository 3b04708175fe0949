// Runs every test file with node's test runner through tsx. Files are listed explicitly:
// Node 20 does not expand globs, and a bare `--test` would find nothing under tsx.
// Files that drive child processes, proxies and reconnect timing run after the others, one at
// a time, so the CPU contention of the parallel batch cannot starve their timers.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const only = process.argv.slice(2);
const SERIAL = new Set([
  'backup.test.ts',
  'broker-recovery.test.ts',
  'cli.test.ts',
  'outbox.test.ts',
  'production-build.test.ts',
  'split-mode.test.ts',
  // Issue 21: hub processes signalled, killed and backed up while running.
  'hub-lifecycle.test.ts',
  'worker-kill.test.ts',
  'backup-online.test.ts',
]);
const files = fs
  .readdirSync(path.join(root, 'test'))
  .filter((f) => f.endsWith('.test.ts'))
  .filter((f) => only.length === 0 || only.some((o) => f.includes(o)))
  .sort();
// Browser tests (test/e2e/) run last, one at a time: Chromium and a hub share two cores.
const e2e = fs
  .readdirSync(path.join(root, 'test', 'e2e'))
  .filter((f) => f.endsWith('.test.ts'))
  .filter((f) => only.length === 0 || only.some((o) => f.includes(o)))
  .sort()
  .map((f) => `e2e/${f}`);

if (files.length === 0 && e2e.length === 0) {
  console.error('no test files matched');
  process.exit(1);
}

function run(label, list, concurrency) {
  if (list.length === 0) return 0;
  const started = Date.now();
  const res = spawnSync(
    process.execPath,
    [
      '--import',
      'tsx',
      '--test',
      `--test-concurrency=${concurrency}`,
      '--test-reporter=spec',
      '--test-reporter-destination=stdout',
      `--test-reporter=${path.join(root, 'test', 'file-times-reporter.mjs')}`,
      '--test-reporter-destination=stdout',
      ...list.map((f) => path.join('test', f)),
    ],
    { stdio: 'inherit', cwd: root, env: { ...process.env, NODE_ENV: 'test' } },
  );
  console.log(`${label}: ${list.length} files in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  return res.status ?? 1;
}

const parallel = run(
  'parallel batch',
  files.filter((f) => !SERIAL.has(f)),
  process.env.TEST_CONCURRENCY ?? '2',
);
const serial = run(
  'serial batch',
  files.filter((f) => SERIAL.has(f)),
  '1',
);
const browser = run('browser tests', e2e, '1');
process.exit(parallel || serial || browser);
