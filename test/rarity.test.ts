/**
 * The rare flag (spec §2 is_rare, protocol isRare/rareReason; rule in src/modules/detections/rarity.ts
 * and docs/decisions.md): rare for this team, once the team has a 30-day baseline — a species
 * never recorded, or recorded fewer than 3 times and not in the last 30 days. Driven through the
 * inference handler on stored chunks, so the flag is checked where detections are made.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startHub, type Hub } from './helpers/hub.ts';
import { factories, makeChunk, makeSatellite, type TestTeam, type TestUser } from './helpers/factories.ts';
import { client } from './helpers/http.ts';
import { makeWav } from '../src/protocol/wav.ts';
import { classifyChunk } from './helpers/inference.ts';
import { speciesCatalog } from '../src/modules/species/catalog.ts';
import { judgeRarity } from '../src/modules/detections/rarity.ts';

const DAY_MS = 86_400_000;
const ROBIN = 'Erithacus rubecula_European Robin';
const TIT = 'Parus major_Great Tit';
const VOICE = 'Human vocal_Human vocal';

describe('rare flag', () => {
  let hub: Hub;
  let api: ReturnType<typeof client>;
  let owner: TestUser;
  let team: TestTeam;
  let sat: { id: string };
  const catalog = speciesCatalog();
  const day0 = Date.UTC(2026, 0, 5, 6, 0);

  /** Stores a silent chunk recorded `days` after day 0 and runs inference on it with a model that hears `label`. */
  async function detect(days: number, label: string) {
    const chunk = await makeChunk(hub, {
      satellite: { id: sat.id, tenantId: team.id },
      at: new Date(day0 + days * DAY_MS),
      audio: makeWav(144_000),
    });
    const [scientificName, commonName] = label.split('_');
    const { announced: messages } = await classifyChunk(hub, chunk, {
      loadClassifier: async () => ({ classify: async () => [{ label, scientificName, commonName, index: 0, logit: 2, confidence: 0.9 }] }),
    });
    assert.equal(messages.length, 1, `one detection of ${label}`);
    const stored = await api.get(`/detections/${messages[0].id}`, owner);
    assert.equal(stored.status, 200);
    assert.equal(stored.body.isRare, messages[0].isRare, 'the stored row and the message agree');
    assert.equal(stored.body.rareReason, messages[0].rareReason);
    return messages[0];
  }

  before(async () => {
    hub = await startHub();
    api = client(hub.url);
    const f = factories(hub);
    owner = await f.user();
    team = await f.team(owner);
    sat = await makeSatellite(hub, team, null);
  });
  after(() => hub.close());

  test("the team's record decides, once it has a 30-day baseline", async () => {
    const first = await detect(0, ROBIN);
    assert.deepEqual([first.isRare, first.rareReason], [false, null], 'a new team has no baseline: its first robin is not rare');
    const early = await detect(10, TIT);
    assert.deepEqual([early.isRare, early.rareReason], [false, null], 'still inside the baseline');

    const newcomer = await detect(35, 'Turdus merula_Eurasian Blackbird');
    assert.deepEqual([newcomer.isRare, newcomer.rareReason], [true, 'Not seen before at this team']);
    const back = await detect(45, ROBIN);
    assert.deepEqual([back.isRare, back.rareReason], [true, 'Not seen at this team in the last 30 days (1 earlier record)']);
    const again = await detect(46, ROBIN);
    assert.deepEqual([again.isRare, again.rareReason], [false, null], 'seen yesterday');
    const blackbird = await detect(80, 'Turdus merula_Eurasian Blackbird');
    assert.deepEqual([blackbird.isRare, blackbird.rareReason], [true, 'Not seen at this team in the last 30 days (1 earlier record)']);
    const voice = await detect(81, VOICE);
    assert.deepEqual([voice.isRare, voice.rareReason], [false, null], 'human voices are not species');
  });

  test('a species the team records often is not rare after a pause', async () => {
    // Great tit: day 10 above, then two more inside 30 days → 3 records; a 40-day pause after.
    await detect(12, TIT);
    await detect(14, TIT);
    const returning = await detect(90, TIT);
    assert.deepEqual([returning.isRare, returning.rareReason], [false, null]);
  });

  test('the rule on its own: baseline, categories, counts', () => {
    const t = new Date(day0 + 100 * DAY_MS);
    const facts = (since: number | null, records: number, lastDaysAgo: number | null) => ({
      teamSince: since === null ? null : new Date(t.getTime() - since * DAY_MS),
      bySpecies: new Map([['x', { records, lastSeenAt: lastDaysAgo === null ? null : new Date(t.getTime() - lastDaysAgo * DAY_MS) }]]),
    });
    const bird = { speciesCode: 'x', category: 'bird', detectedAt: t };
    assert.equal(judgeRarity(bird, facts(null, 0, null)).isRare, false, 'no history at all');
    assert.equal(judgeRarity(bird, facts(29, 0, null)).isRare, false, 'a 29-day history is no baseline');
    assert.equal(judgeRarity(bird, facts(30, 0, null)).isRare, true);
    assert.equal(judgeRarity({ ...bird, category: 'anthropogenic' }, facts(300, 0, null)).isRare, false);
    assert.equal(judgeRarity({ ...bird, category: 'amphibian' }, facts(300, 0, null)).isRare, true);
    assert.equal(judgeRarity(bird, facts(300, 2, 31)).rareReason, 'Not seen at this team in the last 30 days (2 earlier records)');
    assert.equal(judgeRarity(bird, facts(300, 2, 30)).isRare, false, 'seen exactly 30 days ago is recent');
    assert.equal(judgeRarity(bird, facts(300, 3, 200)).isRare, false, 'three records are not few');
    assert.ok(catalog.byLabel(VOICE)?.category === 'human_voice');
  });
});
