import pg from 'pg';
import copy from 'pg-copy-streams';
const schema = process.env.S;
const c = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/test', options: `-c search_path=${schema}` });
await c.connect();
const team = (await c.query(`select id from tenants where name='Export bench'`)).rows[0].id;
const iso = (x) => `to_char(${x} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
const END = "coalesce(d.call_end_at, d.detected_at + (d.end_ms - d.start_ms) * interval '1 millisecond')";
const G = `(61,43,45,64,9,13)`;
const txt = (x) => `CASE WHEN ${x} ~ '[",\\r\\n]' THEN '"' || replace(CASE WHEN ascii(${x}) IN ${G} THEN '''' || ${x} ELSE ${x} END, '"', '""') || '"' WHEN ascii(${x}) IN ${G} THEN '''' || ${x} ELSE coalesce(${x}, '') END`;
const num = (x) => `CASE WHEN ${x} IS NULL OR ${x} IN ('NaN', 'Infinity', '-Infinity') THEN '' ELSE ${x}::text END`;
const LINE = `${iso('d.detected_at')} || ',' || ${iso('d.detected_at')} || ',' || to_char(d.detected_at AT TIME ZONE 'Europe/Berlin', 'YYYY-MM-DD HH24:MI:SS') || ',Europe/Berlin,' || ${iso(END)} || ',' ||
 ${txt('d.species_code')} || ',' || ${txt('d.common_name')} || ',' || ${txt('d.scientific_name')} || ',' || ${txt('d.category')} || ',' ||
 ${num('d.confidence')} || ',' || ${num('d.confidence')} || ',' || d.satellite_id || ',' || ${txt('s.name')} || ',' || ${num('s.latitude')} || ',' || ${num('s.longitude')} || ',' ||
 d.verification_status || ',' || CASE WHEN d.is_rare THEN 'true' ELSE 'false' END || ',' || d.call_chunks || ',' || ${txt('d.model_id')} || ',' || d.chunk_id || ',https://hub.example/detections/' || d.id || ',https://hub.example/api/audio/' || d.chunk_id || E'\\r\\n'`;
const WHERE = `d.tenant_id = '${team}' AND NOT d.tentative AND d.call_id IS NULL AND d.category = ANY('{bird,amphibian,insect,mammal,other}'::text[])`;
const FROM = `detections d JOIN satellites s ON s.id = d.satellite_id`;
const B = Number(process.env.B ?? 1000);
async function agg() {
  let after = null, n = 0, bytes = 0;
  const t0 = performance.now();
  for (;;) {
    const ks = after ? `AND (d.detected_at, d.id) > ($1::timestamptz, $2::uuid)` : '';
    const r = await c.query(`SELECT string_agg(q.line, '' ORDER BY q.detected_at, q.id) AS text, count(*)::int AS n,
      to_char(max(q.detected_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS at, (array_agg(q.id ORDER BY q.detected_at DESC, q.id DESC))[1] AS id
      FROM (SELECT d.id || ',' || ${LINE} AS line, d.detected_at, d.id FROM ${FROM} WHERE ${WHERE} ${ks} ORDER BY d.detected_at, d.id LIMIT ${B}) q`, after ? [after.at, after.id] : []);
    const row = r.rows[0];
    if (!row.n) break;
    n += row.n; bytes += row.text.length;
    if (row.n < B) break;
    after = row;
  }
  return { n, bytes, ms: performance.now() - t0 };
}
async function floor() {
  const t0 = performance.now(); let bytes = 0;
  await new Promise((res, rej) => { const s = c.query(copy.to(`COPY (SELECT d.id, ${iso('d.detected_at')}, ${iso(END)}, d.species_code, d.common_name, d.scientific_name, d.category, d.confidence, d.satellite_id, s.name, s.latitude, s.longitude, d.verification_status, d.chunk_id, d.call_chunks, d.model_id, d.is_rare FROM ${FROM} WHERE ${WHERE} ORDER BY d.detected_at, d.id) TO STDOUT WITH CSV`)); s.on('data', (b) => bytes += b.length); s.on('end', res); s.on('error', rej); });
  return { bytes, ms: performance.now() - t0 };
}
async function copyLines() {
  const t0 = performance.now(); let bytes = 0;
  await new Promise((res, rej) => { const s = c.query(copy.to(`COPY (SELECT d.id || ',' || ${LINE} FROM ${FROM} WHERE ${WHERE} ORDER BY d.detected_at, d.id) TO STDOUT (FORMAT binary)`)); s.on('data', (b) => bytes += b.length); s.on('end', res); s.on('error', rej); });
  return { bytes, ms: performance.now() - t0 };
}
for (const what of (process.env.W ?? 'floor,agg,floor,agg').split(',')) {
  const r = await ({ floor, agg, copyLines })[what]();
  console.log(what, JSON.stringify(r), r.n ? (r.n / r.ms * 1000 / 1000).toFixed(1) + 'k rows/s' : (1e6 / r.ms).toFixed(1) + 'k rows/s (1M)');
}
await c.end();
