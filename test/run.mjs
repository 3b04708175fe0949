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
import { spawnSync } from 'node:child_process';
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
