/**
 * Review of detections (issue 5, part "review"): verification votes and their consensus,
 * the caller's votes, comments with their delete rules, annotations with their ranges, pins,
 * the detail's review fields, and the per-species summary and timeline with their windows.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startHub, type Hub } from './helpers/hub.ts';
import { factories, makeChunk, makeDetection, makeSatellite, type TestTeam } from './helpers/factories.ts';
import { assertError, client, type Credential } from './helpers/http.ts';
import { newId } from '../src/core/crypto.ts';
import { consensus } from '../src/modules/detections/review-service.ts';
import { bucketFor } from '../src/modules/detections/summary-service.ts';
import type { Vote } from '../src/modules/detections/review-repo.ts';

type World = Awaited<ReturnType<ReturnType<typeof factories>['world']>>;

describe('consensus rule (table)', () => {
  const m = (vote: Vote) => ({ vote, decisive: false });
  const a = (vote: Vote) => ({ vote, decisive: true });
  const rows: Array<[string, Array<{ vote: Vote; decisive: boolean }>, number, string]> = [
    ['no votes', [], 1, 'unverified'],
    ['one confirm, quorum 1', [m('confirm')], 1, 'confirmed'],
    ['one reject, quorum 1', [m('reject')], 1, 'rejected'],
    ['only unsure', [m('unsure'), m('unsure')], 1, 'pending_review'],
    ['tie', [m('confirm'), m('reject')], 1, 'pending_review'],
    ['two confirms against one reject', [m('confirm'), m('confirm'), m('reject')], 1, 'confirmed'],
    ['unsure does not count against', [m('confirm'), m('unsure'), m('unsure')], 1, 'confirmed'],
    ['lead 1 under quorum 2', [m('confirm')], 2, 'pending_review'],
    ['lead 2 at quorum 2', [m('confirm'), m('confirm')], 2, 'confirmed'],
    ['reject lead 2 at quorum 2', [m('reject'), m('reject'), m('unsure')], 2, 'rejected'],
    ['lead 2 with a reject, quorum 2', [m('confirm'), m('confirm'), m('confirm'), m('reject')], 2, 'confirmed'],
    ['admin confirm outweighs member rejects', [a('confirm'), m('reject'), m('reject')], 3, 'confirmed'],
    ['admin reject outweighs member confirms', [a('reject'), m('confirm'), m('confirm')], 1, 'rejected'],
    ['admins disagree: counted like everyone', [a('confirm'), a('reject')], 1, 'pending_review'],
    ['admins disagree, members tip it', [a('confirm'), a('reject'), m('confirm')], 1, 'confirmed'],
    ['admin unsure is not decisive', [a('unsure'), m('reject')], 1, 'rejected'],
    ['admin unsure alone', [a('unsure')], 1, 'pending_review'],
  ];
  for (const [name, votes, quorum, want] of rows) {
    test(`${name} → ${want}`, () => assert.equal(consensus(votes, quorum), want));
  }

  test('timeline bucket size follows the window', () => {
    const t0 = new Date('2026-05-01T00:00:00Z');
    const at = (h: number) => new Date(t0.getTime() + h * 3_600_000);
    assert.equal(bucketFor(t0, at(1)), 'hour');
    assert.equal(bucketFor(t0, at(48)), 'hour');
    assert.equal(bucketFor(t0, at(49)), 'day');
    assert.equal(bucketFor(t0, at(92 * 24)), 'day');
    assert.equal(bucketFor(t0, at(92 * 24 + 1)), 'week');
  });
});

describe('detection review over HTTP', () => {
  let hub: Hub;
  let api: ReturnType<typeof client>;
  let f: ReturnType<typeof factories>;
  let w: World;
  let member2: Awaited<ReturnType<ReturnType<typeof factories>['member']>>;
  let sat: { id: string };

  before(async () => {
    hub = await startHub();
    // Frozen, so answers that carry the time can be compared with the clock.
    hub.clock.freeze();
    api = client(hub.url);
    f = factories(hub);
    w = await f.world();
    member2 = await f.member(w.team, 'member');
    sat = await makeSatellite(hub, w.team, null, 'Garden');
  });
  after(() => hub.close());

  interface Seed {
    team?: TestTeam;
    satelliteId?: string;
    code?: string;
    common?: string;
    conf?: number;
    at?: Date;
    tentative?: boolean;
    withChunk?: boolean;
  }
  /** A detection row (and optionally its chunk row) of known values. */
  async function seed(s: Seed = {}): Promise<string> {
    const chunkId = newId();
    const satellite = { id: s.satelliteId ?? sat.id, tenantId: (s.team ?? w.team).id };
    const at = s.at ?? hub.clock.now();
    if (s.withChunk) await makeChunk(hub, { satellite, id: chunkId, at, key: `t/${chunkId}.wav` });
    return makeDetection(hub, {
      satellite,
      chunkId,
      at,
      code: s.code,
      scientificName: `${s.common ?? 'European Robin'} sci`,
      commonName: s.common,
      confidence: s.conf ?? 0.8,
      tentative: s.tentative ?? false,
      promoted: !(s.tentative ?? false),
    });
  }

  const statusOf = async (id: string) =>
    (await hub.sql.one<{ s: string }>('SELECT verification_status AS s FROM detections WHERE id = $1', [id])).s;
  const auditOf = (action: string, targetId: string) =>
    hub.sql.query<any>('SELECT * FROM audit_log WHERE action = $1 AND target_id = $2 ORDER BY at, id', [action, targetId]);
  const verify = (id: string, vote: string, as: Credential) => api.post(`/detections/${id}/verify`, { vote }, as);

  describe('verify', () => {
    test('a member confirms: confirmed, counts and own vote returned, audited', async () => {
      const id = await seed();
      const res = await verify(id, 'confirm', w.member);
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.body, { id, verificationStatus: 'confirmed', votes: { confirm: 1, reject: 0, unsure: 0 }, myVote: 'confirm' });
      assert.equal(await statusOf(id), 'confirmed');
      const entries = await auditOf('detection.voted', id);
      assert.equal(entries.length, 1);
      assert.equal(entries[0].actor_user_id, w.member.id);
      assert.equal(entries[0].tenant_id, w.team.id);
      assert.deepEqual(entries[0].details, { vote: 'confirm', status: 'confirmed', previousStatus: 'unverified' });
    });

    test('re-voting replaces the vote; a disagreeing member makes it pending_review; an admin settles it', async () => {
      const id = await seed();
      await verify(id, 'confirm', w.member);
      const again = await verify(id, 'reject', w.member);
      assert.deepEqual(again.body.votes, { confirm: 0, reject: 1, unsure: 0 }, 'one vote per person');
      assert.equal(again.body.verificationStatus, 'rejected');
      const n = await hub.sql.one<{ n: number }>('SELECT count(*)::int AS n FROM detection_votes WHERE detection_id = $1', [id]);
      assert.equal(n.n, 1);
      const other = await verify(id, 'confirm', member2);
      assert.equal(other.body.verificationStatus, 'pending_review');
      assert.deepEqual(other.body.votes, { confirm: 1, reject: 1, unsure: 0 });
      const admin = await verify(id, 'reject', w.admin);
      assert.equal(admin.body.verificationStatus, 'rejected', 'an admin vote is decisive');
      assert.equal(await statusOf(id), 'rejected');
      const hubAdmin = await verify(id, 'confirm', w.hubAdmin);
      assert.equal(hubAdmin.body.verificationStatus, 'pending_review', 'decisive votes that disagree fall back to counting');
    });

    test('votes at the same time are all counted and the status matches them', async () => {
      const id = await seed();
      const people = [w.member, member2, ...(await Promise.all([1, 2, 3, 4].map(() => f.member(w.team, 'member'))))];
      const votes: Vote[] = ['confirm', 'reject', 'confirm', 'confirm', 'unsure', 'reject'];
      const answers = await Promise.all(people.map((p, i) => verify(id, votes[i], p)));
      assert.deepEqual(
        answers.map((r) => r.status),
        [200, 200, 200, 200, 200, 200],
      );
      const d = await api.get(`/detections/${id}`, w.viewer);
      assert.deepEqual(d.body.votes, { confirm: 3, reject: 2, unsure: 1 });
      assert.equal(d.body.verificationStatus, 'confirmed', 'lead 1 at quorum 1');
      assert.equal(await statusOf(id), 'confirmed');
    });

    test('only unsure votes: pending_review', async () => {
      const id = await seed();
      const res = await verify(id, 'unsure', w.owner);
      assert.equal(res.body.verificationStatus, 'pending_review');
    });

    test('the team quorum: two confirms needed at quorum 2', async () => {
      const t = await f.team(w.owner);
      const m1 = await f.member(t, 'member');
      const m2 = await f.member(t, 'member');
      const s = await makeSatellite(hub, t, null);
      const put = await api.put(`/settings/tenant?tenantId=${t.id}`, { verification_quorum: 2 }, w.owner);
      assert.equal(put.status, 200, put.text);
      assert.equal(put.body.verification_quorum, 2);
      const id = await seed({ team: t, satelliteId: s.id });
      assert.equal((await verify(id, 'confirm', m1)).body.verificationStatus, 'pending_review');
      assert.equal((await verify(id, 'confirm', m2)).body.verificationStatus, 'confirmed');
      assertError(await api.put(`/settings/tenant?tenantId=${t.id}`, { verification_quorum: 0 }, w.owner), 400, 'VALIDATION_FAILED');
    });

    test('errors: bad vote 400, viewer 403, key 403, unknown 404, other team 404', async () => {
      const id = await seed();
      assertError(await verify(id, 'yes', w.member), 400, 'VALIDATION_FAILED');
      assertError(await api.post(`/detections/${id}/verify`, {}, w.member), 400, 'VALIDATION_FAILED');
      assertError(await api.post(`/detections/${id}/verify`, { vote: 'confirm', extra: 1 }, w.member), 400, 'VALIDATION_FAILED');
      assertError(await verify(id, 'confirm', w.viewer), 403, 'FORBIDDEN');
      assertError(await verify(id, 'confirm', { token: w.key.token }), 403, 'FORBIDDEN');
      assertError(await verify(id, 'confirm', f.internal), 403, 'PERSON_REQUIRED');
      assertError(await verify(newId(), 'confirm', w.member), 404, 'NOT_FOUND');
      assertError(await verify('not-a-uuid', 'confirm', w.member), 404, 'NOT_FOUND');
      assertError(await verify(id, 'confirm', w.otherOwner), 404, 'NOT_FOUND');
      assert.equal(await statusOf(id), 'unverified');
    });
  });

  describe('GET /detections/votes', () => {
    test("the caller's own votes for the ids; others' and unvoted ids left out", async () => {
      const a = await seed();
      const b = await seed();
      const c = await seed();
      await verify(a, 'confirm', w.member);
      await verify(b, 'unsure', w.member);
      await verify(c, 'reject', member2);
      const res = await api.get(`/detections/votes?ids=${a},${b},${c},${a}`, w.member);
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.body, { votes: { [a]: 'confirm', [b]: 'unsure' } });
      const scoped = await api.get(`/detections/votes?tenantId=${w.team.id}&ids=${c}`, member2);
      assert.deepEqual(scoped.body, { votes: { [c]: 'reject' } });
      const viewer = await api.get(`/detections/votes?ids=${a}`, w.viewer);
      assert.deepEqual(viewer.body, { votes: {} });
      const key = await api.get(`/detections/votes?ids=${a}`, { token: w.key.token });
      assert.deepEqual(key.body, { votes: {} }, 'a key has no votes');
    });

    test('errors: missing, malformed or too many ids 400; another team 404', async () => {
      assertError(await api.get('/detections/votes', w.member), 400, 'VALIDATION_FAILED');
      assertError(await api.get('/detections/votes?ids=,,', w.member), 400, 'BAD_REQUEST');
      assertError(await api.get(`/detections/votes?ids=${newId()},nope`, w.member), 400, 'BAD_REQUEST');
      const ids = Array.from({ length: 201 }, () => newId()).join(',');
      assertError(await api.get(`/detections/votes?ids=${ids}`, w.member), 400, 'BAD_REQUEST');
      const ok = Array.from({ length: 200 }, () => newId()).join(',');
      assert.equal((await api.get(`/detections/votes?ids=${ok}`, w.member)).status, 200);
      assertError(await api.get(`/detections/votes?tenantId=${w.team.id}&ids=${newId()}`, w.otherOwner), 404, 'NOT_FOUND');
    });
  });

  describe('comments', () => {
    test('add, list, delete own; text trimmed; audited on delete', async () => {
      const id = await seed();
      const add = await api.post(`/detections/${id}/comments`, { text: '  Clear song at 1.2 s  ' }, w.member);
      assert.equal(add.status, 201, add.text);
      assert.match(add.body.id, /^[0-9a-f-]{36}$/);
      assert.equal(add.body.text, 'Clear song at 1.2 s');
      assert.equal(add.body.detectionId, id);
      assert.equal(add.body.authorId, w.member.id);
      assert.equal(add.body.authorName, 'Mel Member');
      assert.equal(add.body.createdAt, hub.clock.now().toISOString());
      hub.clock.advance(1000);
      const second = await api.post(`/detections/${id}/comments`, { text: 'Agreed' }, w.admin);
      const list = await api.get(`/detections/${id}/comments`, w.viewer);
      assert.equal(list.status, 200);
      assert.deepEqual(
        list.body.comments.map((c: any) => c.id),
        [add.body.id, second.body.id],
        'oldest first',
      );
      const del = await api.del(`/detections/${id}/comments/${add.body.id}`, w.member);
      assert.equal(del.status, 200, del.text);
      assert.deepEqual(del.body, { deleted: true, id: add.body.id });
      assert.deepEqual(
        (await api.get(`/detections/${id}/comments`, w.viewer)).body.comments.map((c: any) => c.id),
        [second.body.id],
      );
      const entries = await auditOf('detection.comment_deleted', id);
      assert.equal(entries.length, 1);
      assert.deepEqual(entries[0].details, { commentId: add.body.id, authorId: w.member.id, own: true });
      assertError(await api.del(`/detections/${id}/comments/${add.body.id}`, w.member), 404, 'NOT_FOUND');
    });

    test("a member may not delete another's comment; admin, owner and hub admin may", async () => {
      const id = await seed();
      const mk = async () => (await api.post(`/detections/${id}/comments`, { text: 'x' }, member2)).body.id as string;
      const c1 = await mk();
      assertError(await api.del(`/detections/${id}/comments/${c1}`, w.member), 403, 'FORBIDDEN');
      assert.equal((await api.del(`/detections/${id}/comments/${c1}`, w.admin)).status, 200);
      const entry = (await auditOf('detection.comment_deleted', id))[0];
      assert.equal(entry.actor_user_id, w.admin.id);
      assert.deepEqual(entry.details, { commentId: c1, authorId: member2.id, own: false });
      assert.equal((await api.del(`/detections/${id}/comments/${await mk()}`, w.owner)).status, 200);
      assert.equal((await api.del(`/detections/${id}/comments/${await mk()}`, w.hubAdmin)).status, 200);
      assert.equal((await auditOf('detection.comment_deleted', id)).length, 3);
    });

    test('errors: empty or too long 400, viewer and key 403, unknown detection or comment 404, comment of another detection 404', async () => {
      const id = await seed();
      const other = await seed();
      assertError(await api.post(`/detections/${id}/comments`, { text: '   ' }, w.member), 400, 'BAD_REQUEST');
      assertError(await api.post(`/detections/${id}/comments`, { text: 'x'.repeat(2001) }, w.member), 400, 'BAD_REQUEST');
      assert.equal((await api.post(`/detections/${id}/comments`, { text: 'x'.repeat(2000) }, w.member)).status, 201);
      assertError(await api.post(`/detections/${id}/comments`, {}, w.member), 400, 'VALIDATION_FAILED');
      assertError(await api.post(`/detections/${id}/comments`, { text: 'hi' }, w.viewer), 403, 'FORBIDDEN');
      assertError(await api.post(`/detections/${id}/comments`, { text: 'hi' }, { token: w.key.token }), 403, 'FORBIDDEN');
      assertError(await api.post(`/detections/${newId()}/comments`, { text: 'hi' }, w.member), 404, 'NOT_FOUND');
      assertError(await api.get(`/detections/${id}/comments`, w.otherOwner), 404, 'NOT_FOUND');
      const c = (await api.post(`/detections/${other}/comments`, { text: 'elsewhere' }, w.member)).body.id;
      assertError(await api.del(`/detections/${id}/comments/${c}`, w.member), 404, 'NOT_FOUND');
      assertError(await api.del(`/detections/${id}/comments/${newId()}`, w.admin), 404, 'NOT_FOUND');
      assertError(await api.del(`/detections/${id}/comments/not-a-uuid`, w.admin), 400, 'VALIDATION_FAILED');
      assertError(await api.del(`/detections/${other}/comments/${c}`, w.otherOwner), 404, 'NOT_FOUND');
      assertError(await api.del(`/detections/${other}/comments/${c}`, w.viewer), 403, 'FORBIDDEN');
    });
  });

  describe('annotations', () => {
    test('annotate records the annotation and the vote; the list shows it', async () => {
      const id = await seed();
      const body = { vote: 'confirm', timeStartMs: 200, timeEndMs: 1800, freqLowHz: 2500, freqHighHz: 7800.5, notes: 'two phrases' };
      const res = await api.post(`/detections/${id}/annotate`, body, w.member);
      assert.equal(res.status, 201, res.text);
      assert.equal(res.body.verificationStatus, 'confirmed');
      assert.deepEqual(res.body.votes, { confirm: 1, reject: 0, unsure: 0 });
      assert.equal(res.body.myVote, 'confirm');
      assert.deepEqual(
        { ...res.body.annotation, id: undefined },
        {
          ...body,
          id: undefined,
          detectionId: id,
          authorId: w.member.id,
          authorName: 'Mel Member',
          createdAt: hub.clock.now().toISOString(),
        },
      );
      const list = await api.get(`/detections/${id}/annotations`, w.viewer);
      assert.equal(list.status, 200);
      assert.deepEqual(list.body.annotations, [res.body.annotation]);
      const entries = await auditOf('detection.annotated', id);
      assert.equal(entries.length, 1);
      assert.equal(entries[0].details.annotationId, res.body.annotation.id);
      assert.equal((await auditOf('detection.voted', id)).length, 0, 'annotate writes its own action');
      // The annotation's vote is the person's vote: a verify replaces it, a second annotation too.
      assert.equal((await verify(id, 'reject', w.member)).body.verificationStatus, 'rejected');
      const second = await api.post(`/detections/${id}/annotate`, { vote: 'unsure', timeStartMs: 0, timeEndMs: 3000 }, w.member);
      assert.equal(second.body.verificationStatus, 'pending_review');
      assert.deepEqual(second.body.votes, { confirm: 0, reject: 0, unsure: 1 });
      assert.equal(second.body.annotation.freqLowHz, null);
      assert.equal(second.body.annotation.notes, null);
      assert.equal((await api.get(`/detections/${id}/annotations`, w.viewer)).body.annotations.length, 2);
    });

    test('ranges: each out-of-range value answers 400', async () => {
      const id = await seed();
      const base = { vote: 'confirm', timeStartMs: 0, timeEndMs: 1000 };
      const bad: Array<Record<string, unknown>> = [
        { timeStartMs: -1 },
        { timeStartMs: 1000 },
        { timeStartMs: 1200 },
        { timeEndMs: 3001 },
        { freqLowHz: -5 },
        { freqLowHz: 24_000 },
        { freqHighHz: 0 },
        { freqHighHz: 24_001 },
        { freqLowHz: 5000, freqHighHz: 5000 },
        { freqLowHz: 6000, freqHighHz: 5000 },
        { notes: 'n'.repeat(2001) },
      ];
      for (const b of bad) {
        const res = await api.post(`/detections/${id}/annotate`, { ...base, ...b }, w.member);
        assertError(res, 400, 'VALIDATION_FAILED');
      }
      for (const b of [{ timeStartMs: 1.5 }, { vote: 'maybe' }, { timeEndMs: '900' }, { color: 'red' }]) {
        assertError(await api.post(`/detections/${id}/annotate`, { ...base, ...b }, w.member), 400, 'VALIDATION_FAILED');
      }
      assert.equal((await api.get(`/detections/${id}/annotations`, w.member)).body.annotations.length, 0);
      assert.equal(await statusOf(id), 'unverified', 'a refused annotation casts no vote');
      const edges = { vote: 'reject', timeStartMs: 0, timeEndMs: 3000, freqLowHz: 0, freqHighHz: 24_000, notes: 'n'.repeat(2000) };
      assert.equal((await api.post(`/detections/${id}/annotate`, edges, w.member)).status, 201);
    });

    test('errors: viewer and key 403, unknown 404, other team 404', async () => {
      const id = await seed();
      const body = { vote: 'confirm', timeStartMs: 0, timeEndMs: 1000 };
      assertError(await api.post(`/detections/${id}/annotate`, body, w.viewer), 403, 'FORBIDDEN');
      assertError(await api.post(`/detections/${id}/annotate`, body, { token: w.key.token }), 403, 'FORBIDDEN');
      assertError(await api.post(`/detections/${newId()}/annotate`, body, w.member), 404, 'NOT_FOUND');
      assertError(await api.post(`/detections/${id}/annotate`, body, w.otherOwner), 404, 'NOT_FOUND');
      assertError(await api.get(`/detections/${id}/annotations`, w.otherOwner), 404, 'NOT_FOUND');
      assert.equal((await api.get(`/detections/${id}/annotations`, { token: w.key.token })).status, 200);
    });
  });

  describe('pins and the detail', () => {
    test('pin and unpin: the flag on detail and list rows; repeating changes nothing and is audited once', async () => {
      const id = await seed({ code: 'pinpin1', common: 'Pinned Warbler' });
      const pin = await api.post(`/detections/${id}/pin`, undefined, w.member);
      assert.equal(pin.status, 200, pin.text);
      assert.deepEqual(pin.body, { id, pinned: true, pinnedAt: hub.clock.now().toISOString() });
      hub.clock.advance(5000);
      const again = await api.post(`/detections/${id}/pin`, undefined, { token: w.key.token });
      assert.equal(again.body.pinnedAt, pin.body.pinnedAt, 'pinning twice keeps the first pin');
      assert.equal((await auditOf('detection.pinned', id)).length, 1);
      assert.equal((await api.get(`/detections/${id}`, w.viewer)).body.pinned, true);
      const row = (await api.get(`/detections?tenantId=${w.team.id}&species=pinpin1`, w.viewer)).body.detections[0];
      assert.equal(row.pinned, true);
      const unpin = await api.del(`/detections/${id}/pin`, w.member);
      assert.deepEqual(unpin.body, { id, pinned: false, pinnedAt: null });
      assert.equal((await api.del(`/detections/${id}/pin`, w.member)).status, 200);
      assert.equal((await auditOf('detection.unpinned', id)).length, 1);
      assert.equal((await api.get(`/detections/${id}`, w.viewer)).body.pinned, false);
      assertError(await api.post(`/detections/${id}/pin`, undefined, w.viewer), 403, 'FORBIDDEN');
      assertError(await api.post(`/detections/${id}/pin`, undefined, w.otherOwner), 404, 'NOT_FOUND');
      assertError(await api.del(`/detections/${newId()}/pin`, w.member), 404, 'NOT_FOUND');
    });

    test("detail: storage key, votes per value, the caller's own vote, annotation and comment counts", async () => {
      const id = await seed({ withChunk: true });
      await verify(id, 'confirm', w.member);
      await verify(id, 'reject', member2);
      await api.post(`/detections/${id}/annotate`, { vote: 'unsure', timeStartMs: 0, timeEndMs: 500 }, w.admin);
      await api.post(`/detections/${id}/comments`, { text: 'a' }, w.member);
      await api.post(`/detections/${id}/comments`, { text: 'b' }, w.member);
      const d = await api.get(`/detections/${id}`, w.member);
      assert.equal(d.status, 200, d.text);
      assert.match(d.body.storageKey, /^t\/.+\.wav$/);
      assert.deepEqual(d.body.votes, { confirm: 1, reject: 1, unsure: 1 });
      assert.equal(d.body.myVote, 'confirm');
      assert.equal(d.body.annotationCount, 1);
      assert.equal(d.body.commentCount, 2);
      assert.equal(d.body.verificationStatus, 'pending_review');
      assert.equal((await api.get(`/detections/${id}`, member2)).body.myVote, 'reject');
      assert.equal((await api.get(`/detections/${id}`, w.viewer)).body.myVote, null);
      assert.equal((await api.get(`/detections/${id}`, { token: w.key.token })).body.myVote, null);
    });
  });

  describe('summary and species timeline', () => {
    let t: TestTeam;
    let owner: Credential;
    const day = Date.UTC(2026, 5, 1); // 2026-06-01T00:00Z
    const at = (h: number, m = 0) => new Date(day + h * 3_600_000 + m * 60_000);
    const iso = (h: number) => at(h).toISOString();

    before(async () => {
      const o = await f.user();
      owner = o;
      t = await f.team(o);
      const s = await makeSatellite(hub, t, null);
      const rob = { team: t, satelliteId: s.id, code: 'eurrob1', common: 'European Robin' };
      const tit = { team: t, satelliteId: s.id, code: 'gretit1', common: 'Great Tit' };
      const cuc = { team: t, satelliteId: s.id, code: 'comcuc', common: 'Common Cuckoo' };
      await seed({ ...rob, at: at(1, 10), conf: 0.5 });
      await seed({ ...rob, at: at(1, 40), conf: 0.75 });
      await seed({ ...rob, at: at(3, 5), conf: 0.625 });
      await seed({ ...tit, at: at(2), conf: 0.875 });
      await seed({ ...tit, at: at(2, 30), conf: 0.25, tentative: true });
      await seed({ ...cuc, at: at(4), conf: 0.5, tentative: true });
      await seed({ ...cuc, at: at(4, 20), conf: 0.5, tentative: true });
      await seed({ ...rob, at: at(30), conf: 0.5 }); // next day
      await seed({ ...rob, at: at(0, -1), conf: 0.5 }); // before the window
      await seed({ ...rob, at: at(24), conf: 0.5 }); // at the end: excluded
      // Another team's detection in the same window is never counted.
      await seed({ code: 'eurrob1', at: at(2) });
    });

    test('summary: promoted detections per species, tentative counts, the aggregation rule', async () => {
      const res = await api.get(`/detections/summary?tenantId=${t.id}&start=${iso(0)}&end=${iso(24)}`, owner);
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.body.species, [
        {
          speciesCode: 'eurrob1',
          commonName: 'European Robin',
          scientificName: 'European Robin sci',
          count: 3,
          maxConfidence: 0.75,
          firstDetectedAt: at(1, 10).toISOString(),
          lastDetectedAt: at(3, 5).toISOString(),
        },
        {
          speciesCode: 'gretit1',
          commonName: 'Great Tit',
          scientificName: 'Great Tit sci',
          count: 1,
          maxConfidence: 0.875,
          firstDetectedAt: iso(2),
          lastDetectedAt: iso(2),
        },
      ]);
      assert.equal(res.body.total_detections, 4);
      assert.equal(res.body.tentative_detections, 3);
      assert.equal(res.body.tentative_species, 2);
      const rule = (await api.get(`/settings/tenant?tenantId=${t.id}`, owner)).body.aggregation;
      assert.deepEqual(Object.keys(rule).sort(), ['confidenceHigh', 'count', 'enabled', 'retentionHours', 'windowMinutes']);
      assert.deepEqual(res.body.aggregation, { [t.id]: rule }, "the team's rule as the settings show it");
      assert.equal(res.body.start, iso(0));
      assert.equal(res.body.end, iso(24));
    });

    test('timeline: hourly buckets for a day, tentative kept apart', async () => {
      const res = await api.get(`/detections/species-timeline?tenantId=${t.id}&start=${iso(0)}&end=${iso(24)}`, owner);
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.bucket, 'hour');
      assert.deepEqual(res.body.species, [
        {
          speciesCode: 'eurrob1',
          commonName: 'European Robin',
          scientificName: 'European Robin sci',
          count: 3,
          buckets: [
            { start: iso(1), count: 2, maxConfidence: 0.75 },
            { start: iso(3), count: 1, maxConfidence: 0.625 },
          ],
        },
        {
          speciesCode: 'gretit1',
          commonName: 'Great Tit',
          scientificName: 'Great Tit sci',
          count: 1,
          buckets: [{ start: iso(2), count: 1, maxConfidence: 0.875 }],
          tentative: true,
          tentative_count: 1,
          tentative_buckets: [{ start: iso(2), count: 1, maxConfidence: 0.25 }],
        },
        {
          speciesCode: 'comcuc',
          commonName: 'Common Cuckoo',
          scientificName: 'Common Cuckoo sci',
          count: 0,
          buckets: [],
          tentative: true,
          tentative_count: 2,
          tentative_buckets: [{ start: iso(4), count: 2, maxConfidence: 0.5 }],
        },
      ]);
      assert.deepEqual(Object.keys(res.body.aggregation), [t.id]);
      const put = await api.put(`/settings/tenant?tenantId=${t.id}`, { aggregation: { enabled: true, count: 4 } }, owner);
      assert.equal(put.status, 200, put.text);
      const after = await api.get(`/detections/species-timeline?tenantId=${t.id}&start=${iso(0)}&end=${iso(24)}`, owner);
      assert.deepEqual(after.body.aggregation[t.id], put.body.aggregation);
      assert.equal(after.body.aggregation[t.id].count, 4);
      assert.equal(after.body.aggregation[t.id].enabled, true);
    });

    test('timeline: daily buckets for a week, weekly beyond 92 days', async () => {
      const res = await api.get(`/detections/species-timeline?tenantId=${t.id}&start=${iso(0)}&end=${iso(7 * 24)}`, owner);
      assert.equal(res.body.bucket, 'day');
      const rob = res.body.species.find((s: any) => s.speciesCode === 'eurrob1');
      assert.deepEqual(
        rob.buckets.map((b: any) => [b.start, b.count]),
        [
          [iso(0), 3],
          [iso(24), 2],
        ],
      );
      const long = await api.get(`/detections/species-timeline?tenantId=${t.id}&start=${iso(0)}&end=${iso(100 * 24)}`, owner);
      assert.equal(long.body.bucket, 'week');
      const weekly = long.body.species.find((s: any) => s.speciesCode === 'eurrob1');
      // 2026-06-01 is a Monday: every robin of the window falls in that week.
      assert.deepEqual(
        weekly.buckets.map((b: any) => [b.start, b.count]),
        [[iso(0), 5]],
      );
    });

    test('window and team errors: 400 without or with a bad window, 400 without a team, 404 for another team, viewer allowed', async () => {
      for (const path of ['/detections/summary', '/detections/species-timeline']) {
        assertError(await api.get(`${path}?tenantId=${t.id}`, owner), 400, 'WINDOW_REQUIRED');
        assertError(await api.get(`${path}?tenantId=${t.id}&start=${iso(0)}`, owner), 400, 'WINDOW_REQUIRED');
        assertError(await api.get(`${path}?tenantId=${t.id}&start=yesterday&end=${iso(1)}`, owner), 400, 'VALIDATION_FAILED');
        assertError(await api.get(`${path}?tenantId=${t.id}&start=${iso(2)}&end=${iso(2)}`, owner), 400, 'INVALID_WINDOW');
        assertError(await api.get(`${path}?tenantId=${t.id}&start=${iso(3)}&end=${iso(2)}`, owner), 400, 'INVALID_WINDOW');
        assertError(await api.get(`${path}?tenantId=${t.id}&start=${iso(0)}&end=${iso(367 * 24)}`, owner), 400, 'INVALID_WINDOW');
        assertError(await api.get(`${path}?start=${iso(0)}&end=${iso(1)}`, owner), 400, 'TENANT_REQUIRED');
        assertError(await api.get(`${path}?tenantId=${t.id}&start=${iso(0)}&end=${iso(1)}`, w.otherOwner), 404, 'NOT_FOUND');
        assert.equal((await api.get(`${path}?tenantId=${w.team.id}&start=${iso(0)}&end=${iso(1)}`, w.viewer)).status, 200);
        assert.equal((await api.get(`${path}?start=${iso(0)}&end=${iso(1)}`, { token: w.key.token })).status, 200, "a key's own team");
      }
    });

    test('the literal paths are not taken for /detections/:id', async () => {
      assert.equal((await api.get(`/detections/summary?tenantId=${t.id}&start=${iso(0)}&end=${iso(2)}`, owner)).body.species.length, 1);
      assert.ok('bucket' in (await api.get(`/detections/species-timeline?tenantId=${t.id}&start=${iso(0)}&end=${iso(1)}`, owner)).body);
      assert.deepEqual((await api.get(`/detections/votes?ids=${newId()}`, owner)).body, { votes: {} });
    });
  });
});
