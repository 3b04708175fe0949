// Runs every test file with node's test runner through tsx. Files are listed explicitly:
// Node 20 does not expand globs, and a bare `--test` would find nothing under tsx.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const only = process.argv.slice(2);
const files = fs
  .readdirSync(path.join(root, 'test'))
  .filter((f) => f.endsWith('.test.ts'))
  .filter((f) => only.length === 0 || only.some((o) => f.includes(o)))
  .sort()
  .map((f) => path.join('test', f));

if (files.length === 0) {
  console.error('no test files matched');
  process.exit(1);
}

const concurrency = process.env.TEST_CONCURRENCY ?? '2';
const res = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', `--test-concurrency=${concurrency}`, '--test-reporter=spec', ...files],
  { stdio: 'inherit', cwd: root, env: { ...process.env, NODE_ENV: 'test' } },
);
process.exit(res.status ?? 1);
