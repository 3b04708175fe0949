import pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import { exportScanStatement } from './src/modules/detections/export-repo.ts';
import { exportListFilter } from './src/modules/detections/service.ts';
import { defaultVisibility } from './src/modules/detections/category-sql.ts';
import { inlineParams } from './src/infra/db/postgres.ts';
import { dwcOccurrenceLineSql } from './src/modules/exports/formats/submission-lines.ts';
import { findSetting } from './src/modules/settings/registry.ts';
const c = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/test', options: `-c search_path=${process.env.S}` });
await c.connect();
await c.query(`SET jit = off; SET TimeZone = 'Europe/Berlin'`);
const team = (await c.query(`select id from tenants where name='Export bench'`)).rows[0].id;
const seed = (findSetting('sensitive_species')!.default as string[]).map((x) => x.toLowerCase());
const o = { timeZone: 'Europe/Berlin', detectionUrlPrefix: 'http://x/detections/', audioUrlPrefix: 'http://x/api/audio/', curves: [], sensitive: seed, withheld: 'withheld', recordist: 'Team', license: 'http://cc' };
const f = exportListFilter({ tenantIds: [team], includeTentative: false } as never, defaultVisibility());
const q = exportScanStatement(f, null, null, (add) => { const l = dwcOccurrenceLineSql(o)(add); return { columns: l.line, order: `CASE WHEN ${l.coarsened} THEN date_trunc('hour', d.detected_at, 'UTC') + interval '1 hour' ELSE d.detected_at END, ${l.coarsened} DESC, d.id` }; });
const full = inlineParams(q.sql, q.params);
async function time(sql: string) {
  const t0 = performance.now();
  await new Promise((res, rej) => { const s = c.query(copyTo(`COPY (${sql}) TO STDOUT (FORMAT binary)`)); s.on('data', () => {}); s.on('end', res); s.on('error', rej); });
  return (performance.now() - t0).toFixed(0);
}
const variants: Record<string, (s: string) => string> = {
  full: (s) => s,
  noStamp: (s) => s.replace(/to_char\([^']*'YYYY-MM-DD"T"HH24:MI:SSTZH:TZM'\)/g, "'x'"),
  noRound: (s) => s.replace(/round\([^)]*\)::text/g, "'1'"),
  noRegex: (s) => s.replace(/CASE WHEN ([a-z_.]+) ~ '\[\\t\\r\\n\]' THEN/g, 'CASE WHEN false THEN'),
  positionTest: (s) => s.replace(/CASE WHEN ([a-z_.]+) ~ '\[\\t\\r\\n\]' THEN/g, (_m, x) => `CASE WHEN strpos(${x}, chr(9)) + strpos(${x}, chr(10)) + strpos(${x}, chr(13)) > 0 THEN`),
  likeTest: (s) => s.replace(/CASE WHEN ([a-z_.]+) ~ '\[\\t\\r\\n\]' THEN/g, (_m, x) => `CASE WHEN ${x} SIMILAR TO '%[\t\r\n]%' THEN`),
  noSubmitted: (s) => s.replace(/d\.scientific_name ~ '\^\[A-Z\]\[a-z-\]\+ \[a-z-\]\+'/g, 'true'),
};
for (const [k, v] of Object.entries(variants)) { const sql = v(full); console.log(k, sql === full && k !== 'full' ? '(no change)' : '', await time(sql)); }
console.log('full again', await time(full));
await c.end();
