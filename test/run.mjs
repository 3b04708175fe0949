// Runs every test file with node's test runner through tsx. Files are listed explicitly:
// Node 20 does not expand globs, and a bare `--test` would find nothing under tsx.
// Files that drive child processes, proxies and reconnect timing run after the others, one at
// a time, so the CPU contention of the parallel batch cannot starve their timers.
//
// Flags (CI runs the suite twice, .ci/run):
//   --no-browser     skip the browser tests (test/e2e)
//   --list           print the files and whether they depend on the parts, run nothing
//   --adapters-only  run only the files whose outcome depends on DATABASE_URL / REDIS_URL, and the
//                    browser tests; a file that starts no hub runs the same on any parts, so one run
//                    of it is enough
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const args = process.argv.slice(2);
const noBrowser = args.includes('--no-browser');
const adaptersOnly = args.includes('--adapters-only');
const only = args.filter((a) => !a.startsWith('--'));

/**
 * Whether a test file's outcome depends on the parts the environment picks: it, or a test
 * helper it imports (transitively), reads DATABASE_URL or REDIS_URL, or builds a hub's parts.
 */
const ADAPTER_MARK = /DATABASE_URL|REDIS_URL|createInfra|createDb\(/;
const helperCache = new Map();
function touchesAdapters(file, seen = new Set()) {
  if (seen.has(file)) return false;
  seen.add(file);
  if (helperCache.has(file)) return helperCache.get(file);
  const text = fs.readFileSync(file, 'utf8');
  let result = ADAPTER_MARK.test(text);
  if (!result) {
    for (const m of text.matchAll(/from '(\.{1,2}\/[^']*helpers\/[^']+|\.\/[^']+)'/g)) {
      const target = path.resolve(path.dirname(file), m[1]);
      if (target.startsWith(path.join(root, 'test')) && fs.existsSync(target) && touchesAdapters(target, seen)) {
        result = true;
        break;
      }
    }
  }
  helperCache.set(file, result);
  return result;
}
// cli.test.ts runs in the parallel batch: its commands are one child process at a time, each
// given 90 s, so the other core does other files meanwhile instead of idling for two minutes.
const SERIAL = new Set([
  'backup.test.ts',
  'broker-recovery.test.ts',
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
  .filter((f) => !adaptersOnly || touchesAdapters(path.join(root, 'test', f)))
  .sort();
// Browser tests (test/e2e/) run last, one at a time: Chromium and a hub share two cores.
const e2e = (noBrowser ? [] : fs.readdirSync(path.join(root, 'test', 'e2e')))
  .filter((f) => f.endsWith('.test.ts'))
  .filter((f) => only.length === 0 || only.some((o) => f.includes(o)))
  .sort()
  .map((f) => `e2e/${f}`);

if (args.includes('--list')) {
  for (const f of files) console.log(`${touchesAdapters(path.join(root, 'test', f)) ? 'parts ' : 'once  '} ${f}`);
  process.exit(0);
}
if (adaptersOnly || noBrowser) {
  console.log(`${adaptersOnly ? 'files that depend on the parts only' : 'all files'}${noBrowser ? ', no browser tests' : ''}`);
}
if (process.env.DATABASE_URL) {
  // Test databases a crashed run left behind (test/helpers/pg-template.ts); live runs' are younger.
  spawnSync(process.execPath, ['--import', 'tsx', path.join('test', 'helpers', 'pg-cleanup.ts')], { stdio: 'inherit', cwd: root });
}
if (files.length === 0 && e2e.length === 0) {
  console.error('no test files matched');
  process.exit(1);
}

function argsOf(list, concurrency) {
  return [
    '--import',
    'tsx',
    '--test',
    `--test-concurrency=${concurrency}`,
    '--test-reporter=spec',
    '--test-reporter-destination=stdout',
    `--test-reporter=${path.join(root, 'test', 'file-times-reporter.mjs')}`,
    '--test-reporter-destination=stdout',
    ...list.map((f) => path.join('test', f)),
  ];
}
const childOptions = { cwd: root, env: { ...process.env, NODE_ENV: 'test' } };

/** Runs a batch to its end, its output shown as it comes; resolves with its exit status. */
function run(label, list, concurrency) {
  if (list.length === 0) return Promise.resolve(0);
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, argsOf(list, concurrency), { ...childOptions, stdio: 'inherit' });
    child.on('close', (code) => {
      console.log(`${label}: ${list.length} files in ${((Date.now() - started) / 1000).toFixed(0)} s`);
      resolve(code ?? 1);
    });
  });
}

/** The same, its output held back and shown whole at its end (a batch running beside another). */
function runQuietly(label, list, concurrency) {
  if (list.length === 0) return Promise.resolve(0);
  const started = Date.now();
  const out = [];
  return new Promise((resolve) => {
    const child = spawn(process.execPath, argsOf(list, concurrency), { ...childOptions, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.on('data', (c) => out.push(c));
    child.stderr.on('data', (c) => out.push(c));
    child.on('close', (code) => {
      process.stdout.write(Buffer.concat(out));
      console.log(`${label}: ${list.length} files in ${((Date.now() - started) / 1000).toFixed(0)} s (beside the browser tests)`);
      resolve(code ?? 1);
    });
  });
}

const parallel = await run(
  'parallel batch',
  files.filter((f) => !SERIAL.has(f)),
  process.env.TEST_CONCURRENCY ?? '2',
);
// The serial files and the browser files each run one at a time, so each leaves a core mostly
// idle: when both are to run, they run side by side (two streams on two cores, as the parallel
// batch has), the serial batch's output shown whole when it ends.
const serialFiles = files.filter((f) => SERIAL.has(f));
const [serial, browser] =
  serialFiles.length > 0 && e2e.length > 0
    ? await Promise.all([runQuietly('serial batch', serialFiles, '1'), run('browser tests', e2e, '1')])
    : [await run('serial batch', serialFiles, '1'), await run('browser tests', e2e, '1')];
process.exit(parallel || serial || browser);
