// Compiles the server (src/ → dist/) to plain JavaScript for `npm run start:prod`: no TypeScript
// loader at run time. tsc rewrites the `.ts` import specifiers to `.js`
// (rewriteRelativeImportExtensions); the files the compiled code finds beside itself through
// import.meta.url (migrations, the worker threads' .mjs files) are copied into the same layout.
// assets/, models/ and web/dist/ are found one level above src/ or dist/ alike, so they stay put.
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';

const root = path.resolve(import.meta.dirname, '..');
const src = path.join(root, 'src');
const dist = path.join(root, 'dist');

fs.rmSync(dist, { recursive: true, force: true });
const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');
const res = spawnSync(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.build.json')], { cwd: root, stdio: 'inherit' });
if (res.status !== 0) {
  console.error('The server failed to compile.');
  process.exit(res.status ?? 1);
}

let copied = 0;
function copyAssets(dir) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const from = path.join(dir, entry.name);
    if (entry.isDirectory()) copyAssets(from);
    else if (!entry.name.endsWith('.ts')) {
      const to = path.join(dist, path.relative(src, from));
      fs.mkdirSync(path.dirname(to), { recursive: true });
      fs.copyFileSync(from, to);
      copied++;
    }
  }
}
copyAssets(src);
console.log(`Compiled the server to dist/ (${copied} run-time files copied beside it).`);
