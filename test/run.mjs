// Runs every test file with node's test runner through tsx. Files are listed explicitly:
// Node 20 does not expand globs, and a bare `--test` would find nothing under tsx.
// Files that drive child processes, proxies and reconnect timing run after the others, one at
// a time, so the CPU contention of the parallel batch cannot starve their timers.
//
// Several files share one process (a group, .tmp/test-groups/): starting node, tsx and the hub's
// modules costs 2–3 s of CPU per process, which across ~170 files was a fifth of the suite's
// time. Every file's suites are describe() blocks with their own hooks, so a group runs them one
// after another as separate processes would. Groups are balanced by each file's last measured
// time (test/file-times.json, rewritten by `npm test -- --record-times`).
//
// Flags (CI runs the suite twice, .ci/run):
//   --no-browser     skip the browser tests (test/e2e)
//   --list           print the files and whether they depend on the parts, run nothing
//   --adapters-only  run only the files whose outcome depends on DATABASE_URL / REDIS_URL, and the
//                    browser tests; a file that starts no hub runs the same on any parts, so one run
//                    of it is enough
//   --stage=S[,S]    run only these stages: parallel (the files run two at a time), serial (the
//                    files run one at a time), browser; .ci/run runs the serial files of both runs
//                    beside the browser tests
//   --isolated       one process per file, as before groups (to tell a leak between files from a bug)
//   --record-times   write each file's time of this run into test/file-times.json
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const root = path.resolve(import.meta.dirname, '..');
const args = process.argv.slice(2);
const stageArg = args.find((a) => a.startsWith('--stage='));
const stages = new Set(stageArg ? stageArg.slice('--stage='.length).split(',') : ['parallel', 'serial', 'browser']);
for (const s of stages) {
  if (!['parallel', 'serial', 'browser'].includes(s)) {
    console.error(`unknown stage "${s}" (parallel, serial, browser)`);
    process.exit(1);
  }
}
const noBrowser = args.includes('--no-browser') || !stages.has('browser');
const adaptersOnly = args.includes('--adapters-only');
const isolated = args.includes('--isolated');
const recordTimes = args.includes('--record-times');
const only = args.filter((a) => !a.startsWith('--'));

/**
 * Whether a test file's outcome depends on the parts the environment picks: it, or a test
 * helper it imports (transitively), reads DATABASE_URL or REDIS_URL, or builds a hub's parts.
 */
const ADAPTER_MARK = /DATABASE_URL|REDIS_URL|createInfra|createDb\(/;
/** A file whose hubs are embedded whatever the environment says declares it, and runs once. */
const SAME_ON_ANY_PARTS = /^\/\/ test\/run\.mjs: the same on any parts\b/m;
const helperCache = new Map();
function touchesAdapters(file, seen = new Set()) {
  if (seen.has(file)) return false;
  seen.add(file);
  if (helperCache.has(file)) return helperCache.get(file);
  const text = fs.readFileSync(file, 'utf8');
  if (SAME_ON_ANY_PARTS.test(text)) return false;
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
// test/chaos.test.ts kills and restarts processes too, but only its own (its Redis, Mosquitto,
// proxy and schema), and its satellites wait on their injected clock, not on timers: it runs in
// the parallel batch, where it does not lengthen the serial stream (the last phase's longest).

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
if (adaptersOnly || noBrowser || stageArg) {
  console.log(
    `${adaptersOnly ? 'files that depend on the parts only' : 'all files'}${noBrowser ? ', no browser tests' : ''}` +
      (stageArg ? `; stages: ${[...stages].join(', ')}` : ''),
  );
}
if (process.env.DATABASE_URL) {
  // Test databases a crashed run left behind (test/helpers/pg-template.ts); live runs' are younger.
  spawnSync(process.execPath, ['--import', 'tsx', path.join('test', 'helpers', 'pg-cleanup.ts')], { stdio: 'inherit', cwd: root });
}
if (files.length === 0 && e2e.length === 0) {
  console.error('no test files matched');
  process.exit(1);
}

const TIMES_FILE = path.join(root, 'test', 'file-times.json');
/** Seconds each file took when last recorded; a new file counts as a middling one. */
const knownTimes = fs.existsSync(TIMES_FILE) ? JSON.parse(fs.readFileSync(TIMES_FILE, 'utf8')) : {};
const timeOf = (f) => knownTimes[f] ?? 8;

/**
 * Splits `list` into groups of about `seconds` each, longest files first, each into the group with
 * the least so far: the groups then finish close together whichever order the runner takes them.
 */
function groupsOf(label, list, seconds) {
  if (isolated || list.length <= 1) return list.map((f) => path.join('test', f));
  const total = list.reduce((s, f) => s + timeOf(f), 0);
  const count = Math.max(1, Math.min(list.length, Math.round(total / seconds)));
  const groups = Array.from({ length: count }, () => ({ files: [], seconds: 0 }));
  for (const f of [...list].sort((a, b) => timeOf(b) - timeOf(a))) {
    const g = groups.reduce((a, b) => (b.seconds < a.seconds ? b : a));
    g.files.push(f);
    g.seconds += timeOf(f);
  }
  const dir = path.join(root, '.tmp', 'test-groups');
  fs.mkdirSync(dir, { recursive: true });
  return groups.map((g, i) => {
    const file = path.join(dir, `${label}-${process.pid}-${i + 1}.test.mjs`);
    const lines = g.files.sort().map((f) => `import ${JSON.stringify(pathToFileURL(path.join(root, 'test', f)).href)};`);
    fs.writeFileSync(file, `// ${g.files.length} files, about ${g.seconds.toFixed(0)} s (test/run.mjs)\n${lines.join('\n')}\n`);
    return path.relative(root, file);
  });
}

function argsOf(entries, concurrency) {
  return [
    '--import',
    'tsx',
    '--test',
    `--test-concurrency=${concurrency}`,
    '--test-reporter=spec',
    '--test-reporter-destination=stdout',
    `--test-reporter=${path.join(root, 'test', 'file-times-reporter.mjs')}`,
    '--test-reporter-destination=stdout',
    ...entries,
  ];
}
const childOptions = {
  cwd: root,
  env: { ...process.env, NODE_ENV: 'test', ...(recordTimes ? { CHORUS_TEST_TIMES_FILE: TIMES_FILE } : {}) },
};

/** Runs a batch to its end, its output shown as it comes; resolves with its exit status. */
function run(label, list, concurrency, groupSeconds) {
  if (list.length === 0) return Promise.resolve(0);
  const started = Date.now();
  const entries = groupsOf(label.split(' ')[0], list, groupSeconds);
  return new Promise((resolve) => {
    const child = spawn(process.execPath, argsOf(entries, concurrency), { ...childOptions, stdio: 'inherit' });
    child.on('close', (code) => {
      console.log(`${label}: ${list.length} files in ${entries.length} processes, ${((Date.now() - started) / 1000).toFixed(0)} s`);
      resolve(code ?? 1);
    });
  });
}

/** The same, its output held back and shown whole at its end (a batch running beside another). */
function runQuietly(label, list, concurrency, groupSeconds) {
  if (list.length === 0) return Promise.resolve(0);
  const started = Date.now();
  const entries = groupsOf(label.split(' ')[0], list, groupSeconds);
  const out = [];
  return new Promise((resolve) => {
    const child = spawn(process.execPath, argsOf(entries, concurrency), { ...childOptions, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.on('data', (c) => out.push(c));
    child.stderr.on('data', (c) => out.push(c));
    child.on('close', (code) => {
      process.stdout.write(Buffer.concat(out));
      console.log(
        `${label}: ${list.length} files in ${entries.length} processes, ${((Date.now() - started) / 1000).toFixed(0)} s (beside the browser tests)`,
      );
      resolve(code ?? 1);
    });
  });
}

const parallel = await run(
  'parallel batch',
  stages.has('parallel') ? files.filter((f) => !SERIAL.has(f)) : [],
  process.env.TEST_CONCURRENCY ?? '2',
  60,
);
// The serial files and the browser files each run one at a time, so each leaves a core mostly
// idle: when both are to run, they run side by side (two streams on two cores, as the parallel
// batch has), the serial batch's output shown whole when it ends.
const serialFiles = stages.has('serial') ? files.filter((f) => SERIAL.has(f)) : [];
const [serial, browser] =
  serialFiles.length > 0 && e2e.length > 0
    ? await Promise.all([runQuietly('serial batch', serialFiles, '1', Infinity), run('browser tests', e2e, '1', Infinity)])
    : [await run('serial batch', serialFiles, '1', Infinity), await run('browser tests', e2e, '1', Infinity)];
process.exit(parallel || serial || browser);
