/**
 * Category visibility in lists and counts (spec §4 Stats note, 0.78; issue 5): detections in
 * categories a team does not show (team setting `visible_categories`; by default anthropogenic
 * and human_voice are hidden) are neither listed nor counted by GET /detections (rows and
 * `total`, from rows and from the day counts), the summary, the species timeline and sessions.
 * With several teams in one list each team's own visibility applies. A hidden detection stays
 * readable by its id (docs/decisions.md).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startHub, type Hub } from './helpers/hub.ts';
import { factories, makeChunk, makeDetection, makeSatellite, type TestTeam, type TestUser } from './helpers/factories.ts';
import { client } from './helpers/http.ts';

const S = 1000;
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const DEFAULT = ['bird', 'amphibian', 'insect', 'other_animal'];

describe('category visibility in lists and counts', () => {
  let hub: Hub;
  let api: ReturnType<typeof client>;
  let owner: TestUser;
  let admin: TestUser;
  let teamA: TestTeam;
  let teamB: TestTeam;
  let satA: { id: string };
  let satB: { id: string };
  const day = Date.UTC(2026, 4, 10);
  const iso = (ms: number) => new Date(ms).toISOString();
  const ids: Record<string, string> = {};

  async function chunk(team: TestTeam, sat: { id: string }, at: number) {
    return (await makeChunk(hub, { satellite: { id: sat.id, tenantId: team.id }, at: new Date(at) })).id;
  }

  async function detection(
    name: string,
    team: TestTeam,
    sat: { id: string },
    chunkId: string,
    at: number,
    code: string,
    common: string,
    category: string,
    tentative = false,
  ) {
    ids[name] = await makeDetection(hub, {
      satellite: { id: sat.id, tenantId: team.id },
      chunkId,
      at: new Date(at),
      code,
      scientificName: common,
      commonName: common,
      category,
      confidence: 0.8,
      tentative,
      promoted: !tentative,
    });
  }

  const show = async (team: TestTeam, categories: string[] | null) => {
    const res = await api.put(`/settings/tenant?tenantId=${team.id}`, { visible_categories: categories }, owner);
    assert.equal(res.status, 200, res.text);
  };

  async function list(q: string, as: TestUser = owner) {
    const res = await api.get(`/detections?limit=200${q ? '&' + q : ''}`, as);
    assert.equal(res.status, 200, res.text);
    return { names: names(res.body.detections.map((d: any) => d.id)), total: res.body.total as number };
  }
  /** Test names of detection ids, sorted. */
  const names = (list: string[]) => list.map((id) => Object.keys(ids).find((k) => ids[k] === id) ?? id).sort();

  before(async () => {
    hub = await startHub();
    api = client(hub.url);
    const f = factories(hub);
    owner = await f.user();
    admin = await f.user({ admin: true });
    teamA = await f.team(owner);
    teamB = await f.team(owner);
    satA = await makeSatellite(hub, teamA, null, 'A');
    satB = await makeSatellite(hub, teamB, null, 'B');
    // Team A: one session of three adjacent chunks with a robin, a human voice, an engine and a
    // tentative human voice.
    const t = day + 6 * HOUR;
    const [a1, a2, a3] = [await chunk(teamA, satA, t), await chunk(teamA, satA, t + 3 * S), await chunk(teamA, satA, t + 6 * S)];
    await detection('robinA', teamA, satA, a1, t, 'eurrob1', 'European Robin', 'bird');
    await detection('voiceA', teamA, satA, a2, t + 3 * S, 'human', 'Human voice', 'human_voice');
    await detection('engineA', teamA, satA, a3, t + 6 * S, 'engine', 'Engine', 'anthropogenic');
    await detection('voiceTentA', teamA, satA, a3, t + 7 * S, 'human', 'Human voice', 'human_voice', true);
    // Team B: a tit and a human voice in one chunk; team B shows human voices.
    const b1 = await chunk(teamB, satB, day + 7 * HOUR);
    await detection('titB', teamB, satB, b1, day + 7 * HOUR, 'gretit1', 'Great Tit', 'bird');
    await detection('voiceB', teamB, satB, b1, day + 7 * HOUR + S, 'human', 'Human voice', 'human_voice');
    await show(teamB, ['bird', 'human_voice']);
  });
  after(() => hub.close());

  test('by default human voices and anthropogenic sounds are neither listed nor counted', async () => {
    const whole = `start=${iso(day)}&end=${iso(day + DAY)}`; // whole days: the day counts
    const part = `start=${iso(day + 5 * HOUR)}&end=${iso(day + 12 * HOUR)}`; // partial days: rows
    for (const q of ['', whole, part, `satelliteId=${satA.id}&${whole}`]) {
      assert.deepEqual(await list(`tenantId=${teamA.id}&${q}`), { names: ['robinA'], total: 1 }, q);
      assert.deepEqual(await list(`tenantId=${teamA.id}&includeTentative=true&${q}`), { names: ['robinA'], total: 1 }, `tentative ${q}`);
    }
    for (const q of ['', whole, part]) {
      assert.deepEqual(await list(`tenantId=${teamA.id}&species=human&${q}`), { names: [], total: 0 }, `species ${q}`);
    }
    assert.deepEqual(await list(`tenantId=${teamA.id}&sortBy=species&sortDir=desc`), { names: ['robinA'], total: 1 });

    const summary = await api.get(`/detections/summary?tenantId=${teamA.id}&${whole}`, owner);
    assert.equal(summary.status, 200, summary.text);
    assert.deepEqual(
      summary.body.species.map((s: any) => s.speciesCode),
      ['eurrob1'],
    );
    assert.equal(summary.body.total_detections, 1);
    assert.equal(summary.body.tentative_detections, 0);
    assert.equal(summary.body.tentative_species, 0);
    const timeline = await api.get(`/detections/species-timeline?tenantId=${teamA.id}&${whole}`, owner);
    assert.equal(timeline.status, 200, timeline.text);
    assert.deepEqual(
      timeline.body.species.map((s: any) => s.speciesCode),
      ['eurrob1'],
    );

    const sessions = await api.get(`/sessions?tenantId=${teamA.id}`, owner);
    assert.equal(sessions.status, 200, sessions.text);
    assert.equal(sessions.body.total, 1);
    assert.equal(sessions.body.sessions[0].chunkCount, 3);
    assert.equal(sessions.body.sessions[0].detectionCount, 1);
    assert.equal(sessions.body.sessions[0].speciesCount, 1);
    assert.deepEqual(
      sessions.body.sessions[0].topSpecies.map((s: any) => s.speciesCode),
      ['eurrob1'],
    );
    const sessionTimeline = await api.get(
      `/sessions/timeline?tenantId=${teamA.id}&satelliteId=${satA.id}&from=${iso(day)}&to=${iso(day + DAY)}`,
      owner,
    );
    assert.equal(sessionTimeline.status, 200, sessionTimeline.text);
    assert.deepEqual(names(sessionTimeline.body.detections.map((d: any) => d.id)), ['robinA']);

    // Not listed, yet still readable by its id.
    const detail = await api.get(`/detections/${ids.voiceA}`, owner);
    assert.equal(detail.status, 200, detail.text);
    assert.equal(detail.body.category, 'human_voice');
  });

  test('several teams in one list: each team its own visibility', async () => {
    const both = { names: ['robinA', 'titB', 'voiceB'], total: 3 };
    const whole = `start=${iso(day)}&end=${iso(day + DAY)}`;
    // The owner's teams (A shows the default, B human voices too), rows and day counts.
    assert.deepEqual(await list(''), both);
    assert.deepEqual(await list(whole), both);
    assert.deepEqual(await list(`start=${iso(day + 5 * HOUR)}&end=${iso(day + 8 * HOUR)}`), both);
    assert.deepEqual(await list('species=human'), { names: ['voiceB'], total: 1 });
    assert.deepEqual(await list(`species=human&${whole}`), { names: ['voiceB'], total: 1 });
    assert.deepEqual(await list('includeTentative=true'), both);
    // A hub admin over every team: team B by its own value, team A by the hub's (the default).
    assert.deepEqual(await list('', admin), both);
    assert.deepEqual(await list(whole, admin), both);
    const sessions = await api.get('/sessions', owner);
    assert.equal(sessions.status, 200, sessions.text);
    const count = Object.fromEntries(sessions.body.sessions.map((s: any) => [s.tenantId, s.detectionCount]));
    assert.deepEqual(count, { [teamA.id]: 1, [teamB.id]: 2 });
    const adminSessions = await api.get('/sessions', admin);
    assert.deepEqual(Object.fromEntries(adminSessions.body.sessions.map((s: any) => [s.tenantId, s.detectionCount])), count);
  });

  test('once the team shows human voices they are listed and counted (engines stay hidden)', async () => {
    await show(teamA, [...DEFAULT, 'human_voice']);
    try {
      const whole = `start=${iso(day)}&end=${iso(day + DAY)}`;
      for (const q of ['', whole, `start=${iso(day + 5 * HOUR)}&end=${iso(day + 12 * HOUR)}`]) {
        assert.deepEqual(await list(`tenantId=${teamA.id}&${q}`), { names: ['robinA', 'voiceA'], total: 2 }, q);
        assert.deepEqual(
          await list(`tenantId=${teamA.id}&includeTentative=true&${q}`),
          { names: ['robinA', 'voiceA', 'voiceTentA'], total: 3 },
          q,
        );
        assert.deepEqual(await list(`tenantId=${teamA.id}&species=human&${q}`), { names: ['voiceA'], total: 1 }, q);
      }
      const summary = await api.get(`/detections/summary?tenantId=${teamA.id}&${whole}`, owner);
      assert.deepEqual(summary.body.species.map((s: any) => s.speciesCode).sort(), ['eurrob1', 'human']);
      assert.equal(summary.body.total_detections, 2);
      assert.equal(summary.body.tentative_detections, 1);
      assert.equal(summary.body.tentative_species, 1);
      const timeline = await api.get(`/detections/species-timeline?tenantId=${teamA.id}&${whole}`, owner);
      const human = timeline.body.species.find((s: any) => s.speciesCode === 'human');
      assert.equal(human.count, 1);
      assert.equal(human.tentative_count, 1);
      const sessions = await api.get(`/sessions?tenantId=${teamA.id}`, owner);
      assert.equal(sessions.body.sessions[0].detectionCount, 2);
      assert.equal(sessions.body.sessions[0].speciesCount, 2);
      const sessionTimeline = await api.get(
        `/sessions/timeline?tenantId=${teamA.id}&satelliteId=${satA.id}&from=${iso(day)}&to=${iso(day + DAY)}`,
        owner,
      );
      assert.deepEqual(names(sessionTimeline.body.detections.map((d: any) => d.id)), ['robinA', 'voiceA']);
      assert.deepEqual(await list(''), { names: ['robinA', 'titB', 'voiceA', 'voiceB'], total: 4 });
    } finally {
      await show(teamA, null);
    }
    assert.deepEqual(
      await list(`tenantId=${teamA.id}`),
      { names: ['robinA'], total: 1 },
      'the hub default again once the team value is cleared',
    );
  });
});
