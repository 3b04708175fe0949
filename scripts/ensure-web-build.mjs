// Builds the web dashboard (web/ → web/dist) when the build is missing or older than its
// sources, so `npm start` always serves the current dashboard without a separate step.
// `--force` rebuilds regardless.
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';

const root = path.resolve(import.meta.dirname, '..');
const web = path.join(root, 'web');
const built = path.join(web, 'dist', 'index.html');
const SOURCES = ['src', 'index.html', 'vite.config.ts', 'tsconfig.json', 'public'];

function newest(p) {
  let st;
  try {
    st = fs.statSync(p);
  } catch {
    return 0;
  }
  if (!st.isDirectory()) return st.mtimeMs;
  let max = st.mtimeMs;
  for (const e of fs.readdirSync(p)) max = Math.max(max, newest(path.join(p, e)));
  return max;
}

const force = process.argv.includes('--force');
const builtAt = fs.existsSync(built) ? fs.statSync(built).mtimeMs : 0;
const sourcesAt = Math.max(...SOURCES.map((s) => newest(path.join(web, s))));
if (!force && builtAt > 0 && builtAt >= sourcesAt) process.exit(0);

console.log(builtAt === 0 ? 'Building the web dashboard (web/dist is missing)…' : 'Rebuilding the web dashboard (sources changed)…');
const vite = path.join(root, 'node_modules', 'vite', 'bin', 'vite.js');
const res = spawnSync(process.execPath, [vite, 'build', '--config', path.join(web, 'vite.config.ts'), '--logLevel', 'warn'], {
  cwd: root,
  stdio: 'inherit',
  // A test runner's NODE_ENV=test would otherwise bundle React's development build.
  env: { ...process.env, NODE_ENV: 'production' },
});
if (res.status !== 0) {
  console.error('The web dashboard failed to build; the hub would serve no dashboard.');
  process.exit(res.status ?? 1);
}
