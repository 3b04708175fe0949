// A second test reporter (test/run.mjs adds it beside spec): sums the top-level tests' time per
// file and prints the slowest files when the run ends, so the suite's cost stays visible in CI logs.
// With CHORUS_TEST_TIMES_FILE set (npm test -- --record-times) it also writes each file's seconds
// there, merged into what the file holds: test/run.mjs balances its groups of files by them.
import fs from 'node:fs';
import path from 'node:path';

export default async function* fileTimes(source) {
  const perFile = new Map();
  for await (const event of source) {
    if ((event.type === 'test:pass' || event.type === 'test:fail') && event.data.nesting === 0 && event.data.file) {
      const file = path.relative(process.cwd(), event.data.file);
      perFile.set(file, (perFile.get(file) ?? 0) + (event.data.details?.duration_ms ?? 0));
    }
  }
  const rows = [...perFile].sort((a, b) => b[1] - a[1]);
  const total = rows.reduce((s, [, ms]) => s + ms, 0);
  yield `\nslowest test files (sum of their top-level tests; ${rows.length} files, ${(total / 1000).toFixed(0)} s in all):\n`;
  for (const [file, ms] of rows.slice(0, 15)) yield `${(ms / 1000).toFixed(1).padStart(8)} s  ${file}\n`;
  const out = process.env.CHORUS_TEST_TIMES_FILE;
  if (out && rows.length > 0) {
    const known = fs.existsSync(out) ? JSON.parse(fs.readFileSync(out, 'utf8')) : {};
    // Keyed as test/run.mjs names files: relative to test/ (e2e/x.e2e.test.ts for browser files).
    for (const [file, ms] of rows) if (file.endsWith('.test.ts')) known[path.relative('test', file)] = Math.round(ms / 100) / 10;
    const sorted = Object.fromEntries(Object.entries(known).sort(([a], [b]) => a.localeCompare(b)));
    fs.writeFileSync(out, `${JSON.stringify(sorted, null, 2)}\n`);
  }
}
