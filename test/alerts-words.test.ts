/**
 * Alert words (issue 36 point 5): the titles and messages the hub writes are in the team's
 * language (team setting team_language) with times in the team's zone as people read them,
 * never ISO; the webhook body's machine field `timestamp` stays ISO as the protocol says.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startHub, type Hub } from './helpers/hub.ts';
import { factories, makeDetection, makeSatellite, type TestTeam, type TestUser } from './helpers/factories.ts';
import { client } from './helpers/http.ts';
import { startReceiver, type Receiver } from './helpers/receivers.ts';
import { ALERT_ENV } from './helpers/alerts.ts';
import { waitFor } from './helpers/wait.ts';
import { emailMessage, slackBody, teamsBody } from '../src/modules/alerts/delivery/chat.ts';
import { SAMPLE_PAYLOAD } from '../src/modules/alerts/delivery/template.ts';
import { formatWhen } from '../src/modules/alerts/words.ts';

const ISO = /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/;

describe('alert words', () => {
  let hub: Hub;
  let api: ReturnType<typeof client>;
  let f: ReturnType<typeof factories>;
  const receivers: Receiver[] = [];

  before(async () => {
    hub = await startHub({ env: ALERT_ENV });
    api = client(hub.url);
    f = factories(hub);
  });
  after(async () => {
    for (const r of receivers) await r.close();
    await hub.close();
  });

  async function germanTeam(): Promise<{ owner: TestUser; team: TestTeam }> {
    const owner = await f.user();
    const team = await f.team(owner);
    const res = await api.put(`/settings/tenant?tenantId=${team.id}`, { team_language: 'de', time_zone: 'Europe/Berlin' }, owner);
    assert.equal(res.status, 200, res.text);
    return { owner, team };
  }

  async function channel(owner: TestUser, team: TestTeam, type: string, config: Record<string, unknown>) {
    const ch = await api.post('/alert-rules/channels', { tenantId: team.id, type, name: type, config }, owner);
    assert.equal(ch.status, 201, ch.text);
    return ch.body.id as string;
  }

  test("a German team's offline alert is German, its last-seen time in Berlin time, not ISO; the webhook keeps ISO", async () => {
    const { owner, team } = await germanTeam();
    const hook = await startReceiver();
    const slack = await startReceiver(() => ({ status: 200, body: 'ok' }));
    receivers.push(hook, slack);
    const hookId = await channel(owner, team, 'webhook', { url: hook.url });
    const slackId = await channel(owner, team, 'chat_blocks', { webhookUrl: `${slack.url}/slack/T0/B0/X` });
    const sat = await makeSatellite(hub, team, owner, 'Obstwiese');
    const lastSeen = new Date('2026-01-15T05:42:00.000Z');
    await hub.sql.query('UPDATE satellites SET last_seen_at = $2 WHERE id = $1', [sat.id, lastSeen]);
    const r = await api.post(
      '/alert-rules/rules',
      { tenantId: team.id, name: 'Offline', type: 'absence', conditions: { system: 'satellite_offline' }, channelIds: [hookId, slackId] },
      owner,
    );
    assert.equal(r.status, 201, r.text);
    // Long past the offline threshold: the next monitor run marks it.
    await hub.runtime.offlineMonitor!.tick();
    const alert = await waitFor('the offline alert', async () => {
      const list = (await api.get(`/alerts?tenantId=${team.id}`, owner)).body.alerts as any[];
      return list.find((a) => a.ruleId === r.body.id);
    });
    // 05:42 UTC in January is 06:42 in Berlin (CET, UTC+1).
    assert.equal(alert.message, 'Satellit offline: Obstwiese (zuletzt gesehen 15. Jan. 2026, 06:42 MEZ)');
    assert.doesNotMatch(alert.message, ISO);

    const body = JSON.parse((await waitFor('the webhook', async () => hook.received[0])).body.toString());
    assert.match(body.timestamp, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/, 'the machine field stays ISO');
    const blocks = JSON.parse((await waitFor('the Slack body', async () => slack.received[0])).body.toString());
    const text = JSON.stringify(blocks);
    assert.match(text, /Satellit offline: Offline/, 'the title in German');
    assert.match(text, /"\*Satellit\*\\nObstwiese"/, 'fact labels in German');
    assert.doesNotMatch(text, ISO, 'no ISO time in what people read');
    assert.match(text, /15\. Jan\. 2026, 06:4\d MEZ/);
  });

  test("a detection alert names the species with the team's decimals; an English team keeps English", async () => {
    for (const [language, expected] of [
      ['de', 'Seltene Art: Zaunkönig (0,83) bei Hecke'],
      ['en', 'Rare species: Zaunkönig (0.83) at Hecke'],
    ] as const) {
      const owner = await f.user();
      const team = await f.team(owner);
      await api.put(`/settings/tenant?tenantId=${team.id}`, { team_language: language }, owner);
      const sat = await makeSatellite(hub, team, owner, 'Hecke');
      const r = await api.post(
        '/alert-rules/rules',
        { tenantId: team.id, name: 'Rare', type: 'detection', conditions: { system: 'rare_species' } },
        owner,
      );
      assert.equal(r.status, 201, r.text);
      const stored = await hub.services.alerting.engine.onDetection('announced', {
        id: await makeDetection(hub, { satellite: { id: sat.id, tenantId: team.id }, code: 'eurwre' }),
        tenantId: team.id,
        satelliteId: sat.id,
        satelliteName: 'Hecke',
        speciesCode: 'eurwre',
        scientificName: 'Troglodytes troglodytes',
        commonName: 'Zaunkönig',
        modelId: null,
        confidence: 0.834,
        isRare: true,
        isFirstOfDay: false,
        isFirstOfSeason: false,
        detectedAt: hub.clock.now().toISOString(),
      });
      assert.equal(stored[0]?.message, expected);
    }
  });

  test('an absence message is German for a German team, its span in hours and minutes', async () => {
    const { owner, team } = await germanTeam();
    const sat = await makeSatellite(hub, team, owner, 'Teich');
    const r = await api.post(
      '/alert-rules/rules',
      { tenantId: team.id, name: 'Still', type: 'absence', conditions: { minutes: 120, satelliteIds: [sat.id] } },
      owner,
    );
    assert.equal(r.status, 201, r.text);
    hub.clock.advanceMinutes(150);
    await hub.services.alerting.scheduler.tick();
    const list = (await api.get(`/alerts?tenantId=${team.id}`, owner)).body.alerts as any[];
    const alert = list.find((a) => a.ruleId === r.body.id);
    assert.equal(alert?.message, 'Keine Erkennung von Teich seit 2 Std. 30 Min.');
  });

  test('the unacknowledged count follows the filter: one event, one state', async () => {
    const owner = await f.user();
    const team = await f.team(owner);
    const sat = await makeSatellite(hub, team, owner, 'Ufer');
    const make = async (name: string, system: string) => {
      const r = await api.post('/alert-rules/rules', { tenantId: team.id, name, type: 'detection', conditions: { system } }, owner);
      assert.equal(r.status, 201, r.text);
    };
    await make('Rare', 'rare_species');
    await make('First', 'first_of_day');
    const engine = hub.services.alerting.engine;
    for (const [i, rule] of (await engine.rulesOf(team.id)).entries()) {
      for (const n of [1, 2]) {
        await engine.fire(rule, {
          satelliteId: sat.id,
          satelliteName: 'Ufer',
          detectionId: null,
          speciesCode: `sp${i}${n}`,
          species: null,
          commonName: null,
          confidence: null,
          message: `${rule.name} ${n}`,
          eventKey: `count-${n}`,
        });
      }
    }
    const all = (await api.get(`/alerts?tenantId=${team.id}`, owner)).body;
    assert.deepEqual([all.total, all.unacknowledged], [4, 4]);
    const rareOne = all.alerts.find((a: any) => a.event === 'rare_species');
    assert.equal((await api.post(`/alerts/${rareOne.id}/acknowledge`, {}, owner)).status, 200);
    const rare = (await api.get(`/alerts?tenantId=${team.id}&event=rare_species`, owner)).body;
    assert.deepEqual([rare.total, rare.unacknowledged], [2, 1], 'rare alerts only');
    const acked = (await api.get(`/alerts?tenantId=${team.id}&acknowledged=true`, owner)).body;
    assert.deepEqual([acked.total, acked.unacknowledged], [1, 0], 'the acknowledged ones have none unacknowledged');
    const everything = (await api.get(`/alerts?tenantId=${team.id}`, owner)).body;
    assert.deepEqual([everything.total, everything.unacknowledged], [4, 3]);
  });

  test("chat cards and e-mails: labels, decimals and the time in the payload's language and zone; old payloads read English UTC", () => {
    const p = { ...SAMPLE_PAYLOAD, language: 'de', timeZone: 'Europe/Berlin' };
    const mail = emailMessage(p);
    assert.match(mail.text, /^Konfidenz: 0,91$/m);
    assert.match(mail.text, /^Zeit: 1\. Mai 2025, 07:42 MESZ$/m);
    assert.match(mail.text, /Alarmregel „Channel test“/);
    assert.doesNotMatch(mail.text, ISO);
    assert.match(JSON.stringify(teamsBody(p)), /In Chorus öffnen|1\. Mai 2025, 07:42 MESZ/);
    assert.doesNotMatch(JSON.stringify(slackBody(p)), ISO);
    const old = emailMessage(SAMPLE_PAYLOAD);
    assert.match(old.text, /^Time: 1 May 2025, 05:42 UTC$/m);
    assert.match(old.text, /^Confidence: 0\.91$/m);
    assert.equal(formatWhen('2025-05-01T05:42:10Z', { language: 'en', timeZone: 'No/Such_Zone' }), '1 May 2025, 05:42 UTC');
  });
});
