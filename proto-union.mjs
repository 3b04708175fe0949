import pg from 'pg';
import copy from 'pg-copy-streams';
const schema = process.env.S;
const c = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/test', options: `-c search_path=${schema}` });
await c.connect();
const team = (await c.query(`select id from tenants where name='Export bench'`)).rows[0].id;
const codes = (await c.query(`select array_agg(distinct lower(species_code)) a from (select species_code from detections limit 100000) x`)).rows[0].a.slice(0, 10);
const W = `d.tenant_id = '${team}' AND NOT d.tentative AND d.call_id IS NULL AND d.category = ANY('{bird,amphibian,insect,mammal,other}'::text[])`;
const F = `detections d JOIN satellites s ON s.id = d.satellite_id`;
const C = `lower(d.species_code) = ANY('{${codes.join(',')}}'::text[])`;
const L = `d.id::text || d.common_name || s.name || to_char(d.detected_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
const Q = {
  plain: `SELECT ${L} FROM ${F} WHERE ${W} ORDER BY d.detected_at, d.id`,
  union: `SELECT line FROM (SELECT ${L} AS line, d.detected_at AS k1, 1 AS k2, d.id AS k3 FROM ${F} WHERE ${W} AND NOT ${C} UNION ALL SELECT ${L}, date_trunc('hour', d.detected_at, 'UTC') + interval '1 hour', 0, d.id FROM ${F} WHERE ${W} AND ${C}) q ORDER BY k1, k2, k3`,
  sortexpr: `SELECT ${L} FROM ${F} WHERE ${W} ORDER BY CASE WHEN ${C} THEN date_trunc('hour', d.detected_at, 'UTC') + interval '1 hour' ELSE d.detected_at END, ${C} DESC, d.id`,
};
console.log('codes', codes.length, (await c.query(`select count(*) from detections d where ${C}`)).rows[0]);
for (const k of (process.env.W ?? 'plain,union,sortexpr,plain').split(',')) {
  const t0 = performance.now(); let bytes = 0;
  await new Promise((res, rej) => { const s = c.query(copy.to(`COPY (${Q[k]}) TO STDOUT (FORMAT binary)`)); s.on('data', (b) => bytes += b.length); s.on('end', res); s.on('error', rej); });
  console.log(k, (performance.now() - t0).toFixed(0), 'ms', bytes);
}
await c.end();
