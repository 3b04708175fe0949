import pg from 'pg';
import copy from 'pg-copy-streams';
const schema = process.env.S;
const c = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/test', options: `-c search_path=${schema}` });
await c.connect();
const team = (await c.query(`select id from tenants where name='Export bench'`)).rows[0].id;
const iso = (x) => `to_char(${x} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
const G = `(61,43,45,64,9,13)`;
const txt = (x) => `CASE WHEN ${x} ~ '[",\\r\\n]' THEN '"' || replace(CASE WHEN ascii(${x}) IN ${G} THEN '''' || ${x} ELSE ${x} END, '"', '""') || '"' WHEN ascii(${x}) IN ${G} THEN '''' || ${x} ELSE coalesce(${x}, '') END`;
const txt2 = (x) => `CASE WHEN strpos(${x}, '"') > 0 OR strpos(${x}, ',') > 0 OR strpos(${x}, E'\\n') > 0 OR strpos(${x}, E'\\r') > 0 THEN '"' || replace(CASE WHEN ascii(${x}) IN ${G} THEN '''' || ${x} ELSE ${x} END, '"', '""') || '"' WHEN ascii(${x}) IN ${G} THEN '''' || ${x} ELSE coalesce(${x}, '') END`;
const WHERE = `d.tenant_id = '${team}' AND NOT d.tentative AND d.call_id IS NULL AND d.category = ANY('{bird,amphibian,insect,mammal,other}'::text[])`;
const FROM = `detections d JOIN satellites s ON s.id = d.satellite_id`;
const V = {
  idonly: `d.id::text`,
  iso1: iso('d.detected_at'),
  local: `to_char(d.detected_at AT TIME ZONE 'Europe/Berlin', 'YYYY-MM-DD HH24:MI:SS')`,
  txt5: [1,2,3,4,5].map(()=>txt('d.common_name')).join('||'),
  txt5b: [1,2,3,4,5].map(()=>txt2('d.common_name')).join('||'),
  raw5: [1,2,3,4,5].map(()=>'d.common_name').join('||'),
  num3: `d.confidence::text || s.latitude::text || s.longitude::text`,
  concat20: Array.from({length:20},()=>"'a'").join(' || ') + " || d.id",
  epoch: `(extract(epoch from d.detected_at)*1000)::bigint::text`,
};
for (const [k, e] of Object.entries(V)) {
  if (process.env.ONLY && !process.env.ONLY.split(',').includes(k)) continue;
  const t0 = performance.now(); let bytes = 0;
  await new Promise((res, rej) => { const s = c.query(copy.to(`COPY (SELECT ${e} FROM ${FROM} WHERE ${WHERE} ORDER BY d.detected_at, d.id) TO STDOUT (FORMAT binary)`)); s.on('data', (b) => bytes += b.length); s.on('end', res); s.on('error', rej); });
  console.log(k.padEnd(10), (performance.now() - t0).toFixed(0), 'ms', bytes);
}
await c.end();
