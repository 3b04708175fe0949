/**
 * The day at a glance (issue 36 point 1) and the row thumbnail (point 2) over HTTP: GET /stats/day
 * against a hand-made day in Europe/Berlin (29 March 2026 has 23 hours: 02:00 CET became
 * 03:00 CEST), counting what /stats/dashboard counts; the public page's grid under its rules
 * (rejected calls out, sensitive species hidden or a day total only); and GET
 * /audio/:chunkId/thumbnail.png, rendered once.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startHub, type Hub } from './helpers/hub.ts';
import { factories, makeChunk, makeDetection, makeSatellite, type TestTeam, type TestUser } from './helpers/factories.ts';
import { assertError, client } from './helpers/http.ts';
import { insertRows, type Row } from './helpers/stats.ts';
import { makeWav } from '../src/protocol/wav.ts';

const near = (a: number | null | undefined, b: number, msg = '') => assert.ok(a != null && Math.abs(a - b) < 1e-6, `${msg} ${a} ≉ ${b}`);

describe('the day at a glance', () => {
  let hub: Hub;
  let api: ReturnType<typeof client>;
  let f: ReturnType<typeof factories>;
  let owner: TestUser;
  let hubAdmin: TestUser;
  let team: TestTeam;
  let sat: { id: string };

  before(async () => {
    hub = await startHub({ env: { IMAGES_PROVIDERS: 'off' } });
    api = client(hub.url);
    f = factories(hub);
    hub.clock.freeze(new Date('2026-03-30T12:00:00Z')); // local 14:00 CEST on the 30th
    owner = await f.user();
    hubAdmin = await f.user({ admin: true });
    team = await f.team(owner);
    sat = await makeSatellite(hub, team, null, 'Alpha');
    const other = await f.team(await f.user());
    const otherSat = await makeSatellite(hub, other, null, 'Other');
    assert.equal((await api.put(`/settings/tenant?tenantId=${team.id}`, { time_zone: 'Europe/Berlin' }, owner)).status, 200);

    const rows: Row[] = [
      { sat, code: 'eurrob1', at: '2026-03-28T22:30:00Z' }, // local 28th 23:30: the day before
      { sat, code: 'eurrob1', at: '2026-03-29T00:30:00Z', confidence: 0.6 }, // 01:30 CET
      { sat, code: 'eurrob1', at: '2026-03-29T00:40:00Z', confidence: 0.8 }, // 01:40 CET
      { sat, code: 'gretit1', at: '2026-03-29T01:30:00Z', confidence: 0.7 }, // 03:30 CEST
      { sat, code: 'gretit1', at: '2026-03-29T19:00:00Z', confidence: 0.5 }, // 21:00
      { sat, code: 'comcha', at: '2026-03-29T21:30:00Z', confidence: 0.4 }, // 23:30: heard last
      { sat, code: 'eurrob1', at: '2026-03-29T10:00:00Z', tentative: true }, // not listed
      { sat, code: 'human', at: '2026-03-29T10:00:00Z', category: 'human_voice' }, // a hidden category
      { sat: otherSat, team: other, code: 'eurrob1', at: '2026-03-29T10:00:00Z' }, // another team
      // Today (the 30th): a rejected call (the dashboard counts it, the public page does not) and a sensitive species.
      { sat, code: 'eurrob1', at: '2026-03-30T06:00:00Z', confidence: 0.9 },
      { sat, code: 'eurrob1', at: '2026-03-30T07:00:00Z', status: 'rejected' },
      { sat, code: 'eurwre', at: '2026-03-30T09:00:00Z', confidence: 0.75 }, // 11:00, heard last today
    ];
    const ids = await insertRows(hub, team, rows);
    // A stitched call: a continuation of the 01:40 robin (same call) is not a call of its own.
    await insertRows(hub, team, [{ sat, code: 'eurrob1', at: '2026-03-29T00:41:00Z', confidence: 0.99, callId: ids[2] }]);
  });
  after(() => hub.close());

  test('species × local hour of a DST day: counts, best confidence, newest species first, the neighbouring days', async () => {
    const res = await api.get(`/stats/day?tenantId=${team.id}&date=2026-03-29`, owner);
    assert.equal(res.status, 200, res.text);
    const g = res.body;
    assert.equal(g.timeZone, 'Europe/Berlin');
    assert.equal(g.date, '2026-03-29');
    assert.equal(g.from, '2026-03-28T23:00:00.000Z');
    assert.equal(g.to, '2026-03-29T22:00:00.000Z');
    assert.deepEqual([g.previous, g.next, g.today], ['2026-03-28', '2026-03-30', '2026-03-30']);
    assert.equal(g.hours.length, 24);
    assert.deepEqual(g.hours[0], { hour: 0, from: '2026-03-28T23:00:00.000Z', to: '2026-03-29T00:00:00.000Z' });
    assert.deepEqual(g.hours[2], { hour: 2, from: null, to: null }, 'the day skips 02:00');
    assert.deepEqual(g.hours[3], { hour: 3, from: '2026-03-29T01:00:00.000Z', to: '2026-03-29T02:00:00.000Z' });

    assert.deepEqual(
      g.species.map((s: { code: string }) => s.code),
      ['comcha', 'gretit1', 'eurrob1'],
      'the species heard most recently first',
    );
    const by = new Map(g.species.map((s: { code: string }) => [s.code, s]));
    const robin = by.get('eurrob1') as any;
    assert.equal(robin.count, 2, 'a stitched call counts once; tentative rows and other teams not at all');
    assert.equal(robin.hours[1].count, 2);
    near(robin.hours[1].bestConfidence, 0.8, 'the continuation (0.99) is not the call');
    assert.equal(robin.lastDetectedAt, '2026-03-29T00:40:00.000Z');
    assert.equal(robin.coarse, false);
    const tit = by.get('gretit1') as any;
    assert.deepEqual(
      tit.hours.map((c: { count: number }) => c.count),
      Array.from({ length: 24 }, (_, h) => (h === 3 || h === 21 ? 1 : 0)),
    );
    near(tit.hours[3].bestConfidence, 0.7);
    near(tit.bestConfidence, 0.7);
    assert.equal(tit.hours[4].bestConfidence, null);
    assert.equal(g.total, 5);
    assert.ok(!g.species.some((s: { code: string }) => s.code === 'human'), 'hidden categories stay hidden');
  });

  test('today by default (no tomorrow), the same count as the dashboard, and a bad date refused', async () => {
    const res = await api.get(`/stats/day?tenantId=${team.id}`, owner);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.date, '2026-03-30');
    assert.equal(res.body.next, null, 'no tomorrow past today');
    const dash = await api.get(`/stats/dashboard?tenantId=${team.id}&days=1`, owner);
    assert.equal(res.body.total, dash.body.todayCount, 'counts what the dashboard counts');
    assert.equal(res.body.total, 3);
    assertError(await api.get(`/stats/day?tenantId=${team.id}&date=2026-02-30`, owner), 400, 'INVALID_WINDOW');
    assert.equal((await api.get(`/stats/day?tenantId=${team.id}&date=yesterday`, owner)).status, 400);
  });

  test('the public grid: the page switches, no rejected calls, sensitive species hidden or a day total only', async () => {
    assertError(await api.get(`/public/teams/${team.slug}/day`), 404, 'NOT_FOUND');
    assert.equal((await api.put('/settings/platform', { allow_public_pages: true }, hubAdmin)).status, 200);
    const put = await api.put(`/settings/tenant?tenantId=${team.id}`, { public_page: true, sensitive_species_extra: ['eurwre'] }, owner);
    assert.equal(put.status, 200, put.text);

    let res = await api.get(`/public/teams/${team.slug}/day`);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(
      res.body.species.map((s: { code: string; count: number }) => [s.code, s.count]),
      [['eurrob1', 1]],
      'the rejected robin and the sensitive wren are left out',
    );
    res = await api.get(`/public/teams/${team.slug}/day?date=2026-03-29`);
    assert.equal(res.body.total, 5, 'a stitched call counts once on the public page too');

    await api.put(`/settings/tenant?tenantId=${team.id}`, { public_page_show_sensitive: true }, owner);
    res = await api.get(`/public/teams/${team.slug}/day`);
    assert.deepEqual(
      res.body.species.map((s: { code: string }) => s.code),
      ['eurrob1', 'eurwre'],
      'a sensitive species comes last, not in time order, though heard last',
    );
    const wren = res.body.species[1];
    assert.equal(wren.coarse, true);
    assert.equal(wren.count, 1);
    assert.equal(wren.lastDetectedAt, null, 'no time finer than the day');
    assert.ok(
      wren.hours.every((c: { count: number; bestConfidence: number | null }) => c.count === 0 && c.bestConfidence === null),
      'no hour',
    );
    assert.ok(!JSON.stringify(res.body).includes(sat.id), 'no satellite');

    await api.put(`/settings/tenant?tenantId=${team.id}`, { public_page: false }, owner);
    assertError(await api.get(`/public/teams/${team.slug}/day`), 404, 'NOT_FOUND');
  });

  test('a row thumbnail: a small PNG rendered once and kept; gone with the audio', async () => {
    const samples = new Int16Array(48_000);
    for (let i = 0; i < samples.length; i++) samples[i] = Math.round(8000 * Math.sin((2 * Math.PI * 3000 * i) / 48_000));
    const chunk = await makeChunk(hub, { team, durationMs: 1000, audio: makeWav(samples) });
    await makeDetection(hub, { chunk });
    const url = `${hub.url}/api/audio/${chunk.id}/thumbnail.png`;
    const get = () => fetch(url, { headers: { authorization: `Bearer ${owner.token}` } });
    const first = await get();
    assert.equal(first.status, 200);
    assert.equal(first.headers.get('content-type'), 'image/png');
    assert.match(first.headers.get('cache-control') ?? '', /max-age=604800/);
    const png = Buffer.from(await first.arrayBuffer());
    assert.equal(png.readUInt32BE(16), 120, 'width');
    assert.equal(png.readUInt32BE(20), 40, 'height');

    // Rendered once: with the object gone from storage (the row says it is there) it still answers.
    await hub.infra.storage.delete(chunk.key);
    const again = await get();
    assert.equal(again.status, 200);
    assert.deepEqual(Buffer.from(await again.arrayBuffer()), png);

    // Audio removed (retention, a voice): the image goes with it, cached or not.
    await hub.sql.query('UPDATE chunks SET audio_deleted_at = $2 WHERE id = $1', [chunk.id, hub.clock.now()]);
    assert.equal((await get()).status, 404);
  });

  test('the audio a detail page loads: its length and byte ranges, so the duration is known before play', async () => {
    const chunk = await makeChunk(hub, { team, durationMs: 100, audio: makeWav(4800) });
    const whole = await fetch(`${hub.url}/api/audio/${chunk.id}`, { headers: { authorization: `Bearer ${owner.token}` } });
    assert.equal(whole.status, 200);
    assert.equal(whole.headers.get('accept-ranges'), 'bytes');
    assert.equal(Number(whole.headers.get('content-length')), makeWav(4800).length);
    const part = await fetch(`${hub.url}/api/audio/${chunk.id}`, {
      headers: { authorization: `Bearer ${owner.token}`, range: 'bytes=0-' },
    });
    assert.equal(part.status, 206);
    assert.equal(part.headers.get('content-range'), `bytes 0-${makeWav(4800).length - 1}/${makeWav(4800).length}`);
  });
});
