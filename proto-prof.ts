import pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import { exportScanStatement } from './src/modules/detections/export-repo.ts';
import { exportListFilter } from './src/modules/detections/service.ts';
import { defaultVisibility } from './src/modules/detections/category-sql.ts';
import { inlineParams } from './src/infra/db/postgres.ts';
import { dwcOccurrenceLineSql, inaturalistLineSql } from './src/modules/exports/formats/submission-lines.ts';
import { csvLineSql } from './src/modules/exports/formats/detection-lines.ts';
const schema = process.env.S!;
const c = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/test', options: `-c search_path=${schema}` });
await c.connect();
const team = (await c.query(`select id from tenants where name='Export bench'`)).rows[0].id;
const sensitive = (await c.query(`select value from settings where key='sensitive_species' limit 1`)).rows[0]?.value ?? [];
const seed = (await import('./src/modules/settings/registry.ts')).findSetting('sensitive_species')!.default as string[];
const o = { timeZone: 'Europe/Berlin', detectionUrlPrefix: 'http://x/detections/', audioUrlPrefix: 'http://x/api/audio/', curves: [], sensitive: (process.env.NOSENS ? [] : seed.map((s) => s.toLowerCase())), withheld: 'withheld', recordist: 'Team', license: 'http://cc', geoprivacy: 'open' as const, latin1: new Map<string, string>() };
const f = exportListFilter({ tenantIds: [team], includeTentative: false } as any, defaultVisibility());
const lines: Record<string, any> = { csv: csvLineSql(o), dwc: dwcOccurrenceLineSql(o), inat: inaturalistLineSql(o) };
console.log('sensitive codes', o.sensitive.length);
for (const k of (process.env.W ?? 'csv,dwc,inat').split(',')) {
  const q = exportScanStatement(f, null, null, (add) => { const l = lines[k](add); return process.env.NOORDER ? l.line : { columns: l.line, order: l.coarsened === 'false' ? 'd.detected_at, d.id' : `CASE WHEN ${l.coarsened} THEN date_trunc('hour', d.detected_at, 'UTC') + interval '1 hour' ELSE d.detected_at END, ${l.coarsened} DESC, d.id` }; });
  const sql = inlineParams(q.sql, q.params);
  const t0 = performance.now(); let bytes = 0;
  await new Promise((res, rej) => { const s = c.query(copyTo(`COPY (${sql}) TO STDOUT (FORMAT binary)`)); s.on('data', (b: Buffer) => (bytes += b.length)); s.on('end', res); s.on('error', rej); });
  console.log(k, (performance.now() - t0).toFixed(0), 'ms', bytes);
}
await c.end();
