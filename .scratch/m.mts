import pg from 'pg';
import { createPostgresDb } from '../src/infra/db/postgres.ts';
import { prepareDatabase } from '../src/database.ts';
const url = 'postgres://postgres@127.0.0.1:5432/test';
const admin = new pg.Client({ connectionString: url }); await admin.connect();
let t = Date.now();
await admin.query('CREATE SCHEMA zz_measure');
const db = createPostgresDb({ url, schema: 'zz_measure', poolSize: 2 });
await prepareDatabase(db, new Date()); await db.close();
console.log('schema+migrate', Date.now() - t, 'ms');
await admin.query('DROP SCHEMA zz_measure CASCADE');
t = Date.now();
await admin.query('DROP DATABASE IF EXISTS zz_tmpl'); await admin.query('CREATE DATABASE zz_tmpl');
const db2 = createPostgresDb({ url: url.replace('/test', '/zz_tmpl'), poolSize: 2 });
await prepareDatabase(db2, new Date()); await db2.close();
console.log('template build', Date.now() - t, 'ms');
for (const strat of ['WAL_LOG', 'FILE_COPY']) {
  t = Date.now();
  await admin.query(`CREATE DATABASE zz_copy TEMPLATE zz_tmpl STRATEGY ${strat}`);
  console.log('copy', strat, Date.now() - t, 'ms');
  const d = createPostgresDb({ url: url.replace('/test', '/zz_copy'), poolSize: 2 });
  t = Date.now(); await prepareDatabase(d, new Date()); console.log('prepare on copy (no-op)', Date.now() - t); await d.close();
  t = Date.now(); await admin.query('DROP DATABASE zz_copy WITH (FORCE)'); console.log('drop', Date.now() - t);
}
await admin.query('DROP DATABASE zz_tmpl');
await admin.end();
