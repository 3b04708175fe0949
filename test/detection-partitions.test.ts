/**
 * Detections at the scale of years (issue 37, migration 0039). On PostgreSQL (DATABASE_URL)
 * detections is partitioned by UTC month: a row lands in its month's partition, one older than
 * every partition waits in the default partition until the partition job gives its month one, ids
 * stay unique across partitions, and what points at a detection (votes, annotations, comments,
 * embeddings) follows it through detection_ids. Embedded, detections is one table. On both, a
 * list across a month boundary is complete and in order page by page, and deleting, review,
 * search by sound and observations work on rows of either month. On PostgreSQL the migration
 * is also run on a populated database: every row and count is kept.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import pg from 'pg';
import { startHub, type Hub } from './helpers/hub.ts';
import { factories, makeDetection, makeSatellite } from './helpers/factories.ts';
import { client } from './helpers/http.ts';
import { createDetectionsRepo } from '../src/modules/detections/repo.ts';
import { ensureDetectionPartitions } from '../src/modules/detections/partitions.ts';
import { migrate } from '../src/infra/db/migrate.ts';
import { createPostgresDb } from '../src/infra/db/postgres.ts';
import { TEST_DB_PREFIX, withDatabase } from './helpers/pg-template.ts';
import { sqlOf } from './helpers/sql.ts';
import { newId } from '../src/core/crypto.ts';

type World = Awaited<ReturnType<ReturnType<typeof factories>['world']>>;

const PG = Boolean(process.env.DATABASE_URL);
const MINUTE = 60_000;

/** The first instant of the UTC month after `d`'s. */
const nextMonth = (d: Date) => new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1));
const partitionOf = (d: Date) => `detections_${d.getUTCFullYear()}_${String(d.getUTCMonth() + 1).padStart(2, '0')}`;

describe('detection partitions', () => {
  let hub: Hub;
  let api: ReturnType<typeof client>;
  let w: World;
  let sat: { id: string; tenantId: string; name: string };
  let boundary: Date;
  /** Five rows before the boundary and five after, newest first (the list's default order). */
  let rows: Array<{ id: string; at: Date }>;

  const where = async (id: string) =>
    (await hub.sql.one<{ part: string }>('SELECT tableoid::regclass::text AS part FROM detections WHERE id = $1', [id])).part;

  before(async () => {
    hub = await startHub();
    api = client(hub.url);
    w = await factories(hub).world();
    sat = await makeSatellite(hub, w.team, w.owner, 'Boundary Mic');
    boundary = nextMonth(hub.clock.now());
    rows = [];
    for (let k = 1; k <= 5; k++) {
      for (const at of [new Date(boundary.getTime() - k * MINUTE), new Date(boundary.getTime() + (k - 1) * MINUTE)]) {
        rows.push({ id: await makeDetection(hub, { satellite: sat, at }), at });
      }
    }
    rows.sort((a, b) => b.at.getTime() - a.at.getTime());
  });
  after(async () => {
    await hub.close();
  });

  test('the table: partitioned by month on PostgreSQL, one table embedded', async () => {
    const { kind } = await hub.sql.one<{ kind: string }>(`SELECT relkind::text AS kind FROM pg_class WHERE oid = 'detections'::regclass`);
    const ids = await hub.sql.one<{ t: string | null }>(`SELECT to_regclass('detection_ids')::text AS t`);
    if (PG) {
      assert.equal(kind, 'p');
      assert.equal(ids.t, 'detection_ids');
      const parts = (
        await hub.sql.query<{ name: string }>(
          `SELECT c.relname::text AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'detections'::regclass`,
        )
      ).map((p) => p.name);
      // The hub's month and the three after it, made at start by the partition job, and the default.
      let m = hub.clock.now();
      for (let i = 0; i <= 3; i++, m = nextMonth(m)) assert.ok(parts.includes(partitionOf(m)), `${partitionOf(m)} in ${parts.join(', ')}`);
      assert.ok(parts.includes('detections_default'));
    } else {
      assert.equal(kind, 'r');
      assert.equal(ids.t, null);
    }
  });

  test('a detection lands in the partition of its month', { skip: !PG && 'embedded: one table' }, async () => {
    for (const r of rows) assert.equal(await where(r.id), partitionOf(r.at), r.at.toISOString());
    assert.notEqual(partitionOf(rows[0].at), partitionOf(rows[9].at));
  });

  test('a list across the month boundary is complete and ordered, page by page, both ways', async () => {
    const list = async (q: string) => {
      const res = await api.get(`/detections?tenantId=${w.team.id}&satelliteId=${sat.id}&${q}`, w.viewer);
      assert.equal(res.status, 200, res.text);
      return res.body as { detections: Array<{ id: string; detectedAt: string }>; total: number };
    };
    const seen: string[] = [];
    for (let offset = 0; offset < 12; offset += 3) {
      const page = await list(`limit=3&offset=${offset}`);
      assert.equal(page.total, 10);
      seen.push(...page.detections.map((d) => d.id));
    }
    assert.deepEqual(
      seen,
      rows.map((r) => r.id),
    );
    const asc = await list('sortDir=asc&limit=50');
    assert.deepEqual(
      asc.detections.map((d) => d.id),
      rows.map((r) => r.id).reverse(),
    );
    // A window across the boundary: two minutes either side.
    const start = new Date(boundary.getTime() - 2 * MINUTE).toISOString();
    const end = new Date(boundary.getTime() + 2 * MINUTE).toISOString();
    const win = await list(`start=${start}&end=${end}`);
    assert.deepEqual(
      win.detections.map((d) => d.id),
      rows.filter((r) => r.at >= new Date(start) && r.at < new Date(end)).map((r) => r.id),
    );
    assert.equal(win.total, 4);
    assert.equal((await api.get(`/detections/${rows[0].id}`, w.viewer)).status, 200);
  });

  test('a detection older than every partition waits in the default one, then moves to its month with what points at it', async () => {
    const old = new Date('2019-03-15T10:00:00Z');
    const id = await makeDetection(hub, { satellite: sat, at: old });
    assert.equal((await api.post(`/detections/${id}/verify`, { vote: 'confirm' }, w.member)).status, 200);
    if (PG) {
      assert.equal(await where(id), 'detections_default');
      assert.equal(await ensureDetectionPartitions(hub.infra.db, hub.clock.now()), 1);
      assert.equal(await where(id), 'detections_2019_03');
      assert.equal(await ensureDetectionPartitions(hub.infra.db, hub.clock.now()), 0, 'nothing left to create');
    }
    const res = await api.get(`/detections?tenantId=${w.team.id}&satelliteId=${sat.id}&sortDir=asc&limit=1`, w.viewer);
    assert.equal(res.body.detections[0].id, id);
    assert.equal(res.body.detections[0].verificationStatus, 'confirmed');
    assert.equal(res.body.total, 11);
    // The vote carries its detection's facts (0040: the leaderboard reads a window's votes alone).
    const votes = await hub.sql.query<{ at: Date; listed: boolean; satellite: string; category: string }>(
      'SELECT detected_at AS at, listed, satellite_id AS satellite, category FROM detection_votes WHERE detection_id = $1',
      [id],
    );
    assert.deepEqual(
      votes.map((v) => [new Date(v.at).toISOString(), v.listed, v.satellite, v.category]),
      [[old.toISOString(), true, sat.id, 'bird']],
    );
  });

  test('an id is unique across partitions', { skip: !PG && 'embedded: the primary key of one table' }, async () => {
    await assert.rejects(
      makeDetection(hub, { satellite: sat, id: rows[0].id, at: new Date('2020-06-01T00:00:00Z') }),
      /duplicate key|detection_ids_pkey/,
    );
    await assert.rejects(hub.sql.run('UPDATE detections SET id = $2 WHERE id = $1', [rows[0].id, newId()]), /id does not change/);
  });

  describe('what points at a detection, on rows of two months', () => {
    let other: { id: string; tenantId: string; name: string };
    let early: string;
    let late: string;
    let continuation: string;

    before(async () => {
      other = await makeSatellite(hub, w.team, w.owner, 'Doomed');
      early = await makeDetection(hub, { satellite: other, at: new Date(boundary.getTime() - 10 * MINUTE) });
      late = await makeDetection(hub, { satellite: other, at: new Date(boundary.getTime() + 10 * MINUTE) });
      // A stitched call / observation across the boundary: its continuation points at the leader.
      continuation = await makeDetection(hub, { satellite: other, at: new Date(boundary.getTime() - 9 * MINUTE), callId: early });
    });

    test('review: votes, annotations and comments', async () => {
      for (const id of [early, late]) {
        assert.equal((await api.post(`/detections/${id}/verify`, { vote: 'reject' }, w.member)).status, 200);
        const ann = await api.post(`/detections/${id}/annotate`, { vote: 'reject', timeStartMs: 0, timeEndMs: 1000 }, w.member);
        assert.equal(ann.status, 201, ann.text);
        assert.equal((await api.post(`/detections/${id}/comments`, { text: 'wind' }, w.member)).status, 201);
        const anns = await api.get(`/detections/${id}/annotations`, w.viewer);
        assert.equal(anns.body.annotations.length, 1);
      }
    });

    test('search by sound finds the call of the other month', async () => {
      const repo = createDetectionsRepo(hub.infra.db);
      await hub.infra.db.tx((tx) =>
        repo.insertEmbeddings(tx, [
          { detectionId: early, tenantId: w.team.id, modelId: 'builtin', vector: Float32Array.from([1, 0, 0, 0]) },
          { detectionId: late, tenantId: w.team.id, modelId: 'builtin', vector: Float32Array.from([0.9, 0.1, 0, 0]) },
        ]),
      );
      const res = await api.get(`/detections/${early}/similar`, w.viewer);
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(
        res.body.similar.map((s: { id: string }) => s.id),
        [late],
      );
    });

    test('an observation across the boundary is listed once, by its leader', async () => {
      const res = await api.get(`/detections?tenantId=${w.team.id}&satelliteId=${other.id}`, w.viewer);
      assert.deepEqual(
        res.body.detections.map((d: { id: string }) => d.id),
        [late, early],
      );
      assert.equal(res.body.total, 2);
      assert.equal((await api.get(`/detections/${continuation}`, w.viewer)).status, 200);
    });

    test('deleting the satellite deletes its rows of both months and all that pointed at them', async () => {
      const ids = [early, late, continuation];
      assert.equal((await api.del(`/satellites/${other.id}`, w.owner, { confirmName: 'Doomed' })).status, 204);
      assert.equal((await hub.sql.query('SELECT 1 FROM detections WHERE id = ANY($1::uuid[])', [ids])).length, 0);
      for (const t of ['detection_votes', 'detection_annotations', 'detection_comments', 'detection_embeddings']) {
        assert.equal((await hub.sql.query(`SELECT 1 FROM ${t} WHERE detection_id = ANY($1::uuid[])`, [ids])).length, 0, t);
      }
      if (PG) assert.equal((await hub.sql.query('SELECT 1 FROM detection_ids WHERE id = ANY($1::uuid[])', [ids])).length, 0);
      // The other satellite's rows are untouched.
      const res = await api.get(`/detections?tenantId=${w.team.id}&satelliteId=${sat.id}&limit=1`, w.viewer);
      assert.equal(res.body.total, 11);
    });
  });
});

describe('migration 0039 on a populated database', { skip: !PG && 'PostgreSQL only' }, () => {
  const base = process.env.DATABASE_URL ?? '';
  const name = `${TEST_DB_PREFIX}${Math.floor(Date.now() / 1000)}_${crypto.randomBytes(5).toString('hex')}`;
  const admin = async (sql: string) => {
    const c = new pg.Client({ connectionString: base });
    await c.connect();
    try {
      await c.query(sql);
    } finally {
      await c.end();
    }
  };
  before(() => admin(`CREATE DATABASE ${name}`));
  after(() => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));

  test('every row, count and reference is kept; rows go to their months', async () => {
    const db = createPostgresDb({ url: withDatabase(base, name), poolSize: 2 });
    const sql = sqlOf(db);
    try {
      await migrate(db, { upTo: '0036' });
      const at = new Date('2025-05-01T00:00:00Z');
      const [user, team, sat] = [newId(), newId(), newId()];
      await sql.run(
        `INSERT INTO users (id, email, name, password_hash, created_at, updated_at) VALUES ($1, 'm@x.test', 'M', 'x', $2, $2)`,
        [user, at],
      );
      await sql.run(`INSERT INTO tenants (id, name, slug, created_at) VALUES ($1, 'T', 't', $2)`, [team, at]);
      await sql.run(`INSERT INTO satellites (id, tenant_id, name, created_at, updated_at) VALUES ($1, $2, 'S', $3, $3)`, [sat, team, at]);
      // 3,000 rows over three months (March to May 2025), every fifth a continuation of the row before it.
      await sql.run(
        `INSERT INTO detections (id, tenant_id, satellite_id, chunk_id, species_code, scientific_name, common_name, category, confidence,
           detected_at, start_ms, end_ms, model_id, tentative, created_at)
         SELECT gen_random_uuid(), $1, $2, gen_random_uuid(), 'sp' || (g % 7), 'S', 'C', 'bird', 0.5 + (g % 50) / 100.0,
           '2025-03-01T00:00:00Z'::timestamptz + g * interval '43 minutes', 0, 3000, 'builtin', g % 11 = 0, $3
         FROM generate_series(0, 2999) AS g`,
        [team, sat, at],
      );
      await sql.run(
        `UPDATE detections d SET call_id = p.prev
         FROM (SELECT id, lag(id) OVER (ORDER BY detected_at) AS prev, row_number() OVER (ORDER BY detected_at) AS n FROM detections) p
         WHERE d.id = p.id AND p.n % 5 = 0`,
      );
      const some = (await sql.query<{ id: string }>('SELECT id FROM detections ORDER BY detected_at LIMIT 3')).map((r) => r.id);
      await sql.run(
        `INSERT INTO detection_votes (detection_id, user_id, tenant_id, vote, decisive, created_at, updated_at) VALUES ($1, $2, $3, 'confirm', true, $4, $4)`,
        [some[0], user, team, at],
      );
      await sql.run(
        `INSERT INTO detection_comments (id, detection_id, tenant_id, author_id, text, created_at) VALUES ($1, $2, $3, $4, 'x', $5)`,
        [newId(), some[1], team, user, at],
      );
      await sql.run(
        `INSERT INTO detection_embeddings (detection_id, tenant_id, model_id, dims, vector) VALUES ($1, $2, 'm', 1, '\\x0000803f')`,
        [some[2], team],
      );
      const snapshot = async () => ({
        rows: await sql.one(`SELECT count(*)::int AS n, md5(string_agg(d::text, ',' ORDER BY id)) AS h FROM detections d`),
        days: await sql.one(`SELECT md5(string_agg(c::text, ',' ORDER BY c::text)) AS h FROM detection_day_counts c`),
        periods: await sql.one(`SELECT md5(string_agg(c::text, ',' ORDER BY c::text)) AS h FROM detection_period_counts c`),
        hours: await sql.one(`SELECT md5(string_agg(c::text, ',' ORDER BY c::text)) AS h FROM detection_hour_counts c`),
        pointing: await sql.one(
          `SELECT (SELECT count(*) FROM detection_votes)::int AS v, (SELECT count(*) FROM detection_comments)::int AS c,
             (SELECT count(*) FROM detection_embeddings)::int AS e`,
        ),
      });
      const kept = await snapshot();
      assert.equal(kept.rows.n, 3000);

      const applied = await migrate(db, { upTo: '0039' });
      assert.ok(applied.includes('0039_detection_partitions'), applied.join(', '));
      assert.deepEqual(await snapshot(), kept);
      // The migrations after it (votes' facts 0040, the confidence day counts 0042) on the moved rows.
      await migrate(db);
      const byPart = await sql.query<{ part: string; n: number }>(
        `SELECT tableoid::regclass::text AS part, count(*)::int AS n FROM detections GROUP BY 1 ORDER BY 1`,
      );
      assert.deepEqual(
        byPart.map((p) => p.part),
        ['detections_2025_03', 'detections_2025_04', 'detections_2025_05'],
      );
      assert.equal((await sql.one('SELECT count(*)::int AS n FROM detection_ids')).n, 3000);

      // The counts keep following the table, and a deletion still reaches what pointed at a row.
      await sql.run(`DELETE FROM detections WHERE id = ANY($1::uuid[])`, [some]);
      assert.deepEqual(
        await sql.one(`SELECT (SELECT count(*) FROM detection_votes)::int AS v, (SELECT count(*) FROM detection_comments)::int AS c,
             (SELECT count(*) FROM detection_embeddings)::int AS e`),
        { v: 0, c: 0, e: 0 },
      );
      const listed = await sql.one(
        `SELECT (SELECT coalesce(sum(listed), 0)::int FROM detection_day_counts WHERE dim = 'all') AS counted,
           (SELECT count(*)::int FROM detections WHERE call_id IS NULL AND NOT tentative) AS actual`,
      );
      assert.equal(listed.counted, listed.actual);
      // Deleting the team deletes its rows in every partition and their ids.
      await sql.run('DELETE FROM tenants WHERE id = $1', [team]);
      assert.equal((await sql.one('SELECT count(*)::int AS n FROM detections')).n, 0);
      assert.equal((await sql.one('SELECT count(*)::int AS n FROM detection_ids')).n, 0);
    } finally {
      await db.close();
    }
  });
});
