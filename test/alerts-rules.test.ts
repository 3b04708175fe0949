/**
 * Alert rules over time (issue 17): absence and trend rules on the scheduler with the injected
 * clock, satellite offline through the offline monitor, cooldowns, quiet hours, rules that wait
 * for verification, system rules, the chat and email channels end to end (a local SMTP server
 * and local servers playing Slack, Discord, Teams and Telegram).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { SMTPServer } from 'smtp-server';
import type { AddressInfo } from 'node:net';
import { startHub, type Hub } from './helpers/hub.ts';
import { factories, makeDetection, makeSatellite, type TestTeam, type TestUser } from './helpers/factories.ts';
import { client } from './helpers/http.ts';
import { startReceiver, type Receiver } from './helpers/receivers.ts';
import { ALERT_ENV } from './helpers/alerts.ts';
import { waitFor } from './helpers/wait.ts';
import type { AnnouncedDetection } from '../src/infra/bus/index.ts';

describe('alert rules over time', () => {
  let hub: Hub;
  let api: ReturnType<typeof client>;
  let f: ReturnType<typeof factories>;
  let smtp: SMTPServer;
  const mails: Array<{ to: string[]; data: string }> = [];
  const receivers: Receiver[] = [];

  before(async () => {
    smtp = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS', 'AUTH'],
      onData(stream, session, done) {
        let data = '';
        stream.on('data', (c: Buffer) => (data += c.toString()));
        stream.on('end', () => {
          mails.push({ to: session.envelope.rcptTo.map((r) => r.address), data });
          done();
        });
      },
    });
    await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
    const port = (smtp.server.address() as AddressInfo).port;
    const telegram = await startReceiver(() => ({ status: 200, body: '{"ok":true}' }));
    receivers.push(telegram);
    hub = await startHub({ env: { ...ALERT_ENV, SMTP_URL: `smtp://127.0.0.1:${port}`, TELEGRAM_API_URL: telegram.url } });
    api = client(hub.url);
    f = factories(hub);
  });
  after(async () => {
    for (const r of receivers) await r.close();
    await hub.close();
    await new Promise<void>((resolve) => smtp.close(() => resolve()));
  });

  async function world() {
    const owner = await f.user();
    const team = await f.team(owner);
    const r = await startReceiver();
    receivers.push(r);
    const ch = await api.post('/alert-rules/channels', { tenantId: team.id, type: 'webhook', name: 'hook', config: { url: r.url } }, owner);
    assert.equal(ch.status, 201, ch.text);
    return { owner, team, receiver: r, channelId: ch.body.id as string };
  }

  async function rule(owner: TestUser, team: TestTeam, body: Record<string, unknown>) {
    const res = await api.post('/alert-rules/rules', { tenantId: team.id, ...body }, owner);
    assert.equal(res.status, 201, res.text);
    return res.body as { id: string };
  }

  const alertsOf = async (team: TestTeam, as: TestUser) =>
    (await api.get(`/alerts?tenantId=${team.id}&limit=200`, as)).body.alerts as any[];

  /** A detection as the worker announces it, with its row (made here unless `over.id` names one). */
  async function announced(
    team: TestTeam,
    sat: { id: string; name: string },
    over: Partial<AnnouncedDetection> = {},
  ): Promise<AnnouncedDetection> {
    const id = over.id ?? (await makeDetection(hub, { satellite: { id: sat.id, tenantId: team.id }, code: over.speciesCode ?? 'eurwre' }));
    return {
      id,
      tenantId: team.id,
      satelliteId: sat.id,
      satelliteName: sat.name,
      speciesCode: 'eurwre',
      scientificName: 'Troglodytes troglodytes',
      commonName: 'Eurasian Wren',
      modelId: null,
      confidence: 0.8,
      isRare: false,
      isFirstOfDay: false,
      isFirstOfSeason: false,
      detectedAt: hub.clock.now().toISOString(),
      ...over,
    };
  }
  const engine = () => hub.services.alerting.engine;

  test('absence: silence past N minutes fires once per silence; a detection starts a new one', async () => {
    const { owner, team, receiver, channelId } = await world();
    const sat = await makeSatellite(hub, team, owner, 'Pond');
    const r = await rule(owner, team, {
      name: 'Pond quiet',
      type: 'absence',
      conditions: { minutes: 30, satelliteIds: [sat.id] },
      channelIds: [channelId],
    });
    hub.clock.advanceMinutes(20);
    assert.equal((await hub.services.alerting.scheduler.tick()).fired, 0, 'not silent long enough yet');
    hub.clock.advanceMinutes(11);
    assert.equal((await hub.services.alerting.scheduler.tick()).fired, 1);
    hub.clock.advanceMinutes(5);
    assert.equal((await hub.services.alerting.scheduler.tick()).fired, 0, 'the same silence fires once');
    let alerts = (await alertsOf(team, owner)).filter((a) => a.ruleId === r.id);
    assert.equal(alerts.length, 1);
    assert.equal(alerts[0].event, 'absence');
    assert.equal(alerts[0].satelliteId, sat.id);
    assert.match(alerts[0].message, /Pond/);
    const got = await waitFor('the absence webhook', async () => receiver.received.length > 0 && receiver.received);
    assert.equal(JSON.parse(got[0]!.body.toString()).event, 'absence');

    await makeDetection(hub, { satellite: sat });
    hub.clock.advanceMinutes(10);
    assert.equal((await hub.services.alerting.scheduler.tick()).fired, 0);
    hub.clock.advanceMinutes(25);
    assert.equal((await hub.services.alerting.scheduler.tick()).fired, 1, 'a new silence after the detection');
    alerts = (await alertsOf(team, owner)).filter((a) => a.ruleId === r.id);
    assert.equal(alerts.length, 2);
  });

  test('absence inside a daily window only, in the team time zone', async () => {
    const { owner, team } = await world();
    await makeSatellite(hub, team, owner, 'Meadow');
    // A window that excludes the present minute in UTC: never fires now.
    const now = hub.clock.now();
    const hh = (h: number) => String(((h % 24) + 24) % 24).padStart(2, '0');
    const r = await rule(owner, team, {
      name: 'Dawn chorus missing',
      type: 'absence',
      conditions: { minutes: 5, window: { start: `${hh(now.getUTCHours() + 2)}:00`, end: `${hh(now.getUTCHours() + 3)}:00` } },
    });
    hub.clock.advanceMinutes(10);
    await hub.services.alerting.scheduler.tick();
    assert.equal((await alertsOf(team, owner)).filter((a) => a.ruleId === r.id).length, 0);
  });

  test('trend: detections falling by at least X % against the preceding window fire once per window', async () => {
    const { owner, team } = await world();
    const sat = await makeSatellite(hub, team, owner);
    const hour = 3_600_000;
    // Start 90 s before an hour's edge: the first run falls before it, the second in the next hour of the clock.
    const toEdge = hour - (hub.clock.now().getTime() % hour) - 90_000;
    hub.clock.advance(toEdge > 0 ? toEdge : toEdge + hour);
    const now = hub.clock.now().getTime();
    for (let i = 0; i < 10; i++)
      await makeDetection(hub, { satellite: sat, at: new Date(now - 1.5 * hour + i * 1000), code: `sp${i % 4}` });
    for (let i = 0; i < 3; i++) await makeDetection(hub, { satellite: sat, at: new Date(now - 0.5 * hour + i * 1000), code: 'sp0' });
    const fall = await rule(owner, team, {
      name: 'Fewer birds',
      type: 'trend',
      conditions: { metric: 'detections', direction: 'fall', percent: 50, windowMinutes: 60 },
    });
    const rise = await rule(owner, team, {
      name: 'More birds',
      type: 'trend',
      conditions: { metric: 'detections', direction: 'rise', percent: 50, windowMinutes: 60 },
    });
    const diversity = await rule(owner, team, {
      name: 'Fewer species',
      type: 'trend',
      conditions: { metric: 'diversity', direction: 'fall', percent: 70, windowMinutes: 60 },
    });
    hub.clock.advance(60_000);
    await hub.services.alerting.scheduler.tick();
    hub.clock.advance(60_000);
    await hub.services.alerting.scheduler.tick();
    const alerts = await alertsOf(team, owner);
    const of = (id: string) => alerts.filter((a) => a.ruleId === id);
    assert.equal(of(fall.id).length, 1, 'fell 70 %: fires, once in the window');
    assert.equal(of(fall.id)[0].event, 'trend');
    assert.match(of(fall.id)[0].message, /10 → 3/);
    assert.equal(of(rise.id).length, 0);
    assert.equal(of(diversity.id).length, 1, 'species 4 → 1 is a 75 % fall');
  });

  test('satellite offline: the monitor marks it and the system rule alerts once', async () => {
    const { owner, team, receiver, channelId } = await world();
    const sat = await makeSatellite(hub, team, owner, 'Orchard');
    await hub.sql.query('UPDATE satellites SET last_seen_at = $2 WHERE id = $1', [sat.id, hub.clock.now()]);
    const r = await rule(owner, team, {
      name: 'Offline',
      type: 'absence',
      conditions: { system: 'satellite_offline' },
      channelIds: [channelId],
    });
    hub.clock.advanceMinutes(6);
    const marked = await hub.runtime.offlineMonitor!.tick();
    assert.ok(marked.some((m) => m.satelliteId === sat.id));
    const alerts = await waitFor('the offline alert', async () => {
      const a = (await alertsOf(team, owner)).filter((x) => x.ruleId === r.id);
      return a.length > 0 && a;
    });
    assert.equal(alerts.length, 1);
    assert.equal(alerts[0].event, 'satellite_offline');
    assert.equal(alerts[0].satelliteName, 'Orchard');
    const got = await waitFor('the webhook', async () => receiver.received.length > 0 && receiver.received);
    assert.equal(JSON.parse(got[0]!.body.toString()).event, 'satellite_offline');
    hub.clock.advanceMinutes(10);
    await hub.runtime.offlineMonitor!.tick();
    assert.equal((await alertsOf(team, owner)).filter((x) => x.ruleId === r.id).length, 1);
  });

  test('cooldown: one alert per rule and species per cooldown; another species or a later time alerts again', async () => {
    const { owner, team } = await world();
    const sat = await makeSatellite(hub, team, owner, 'Hedge');
    const r = await rule(owner, team, { name: 'Any', type: 'detection', cooldownMinutes: 15 });
    assert.equal((await engine().onDetection('announced', await announced(team, sat))).length, 1);
    assert.equal((await engine().onDetection('announced', await announced(team, sat))).length, 0, 'same species inside the cooldown');
    assert.equal((await engine().onDetection('announced', await announced(team, sat, { speciesCode: 'eurrob1' }))).length, 1);
    hub.clock.advanceMinutes(16);
    assert.equal((await engine().onDetection('announced', await announced(team, sat))).length, 1, 'after the cooldown');
    const d = await announced(team, sat, { speciesCode: 'comcha' });
    assert.equal((await engine().onDetection('announced', d)).length, 1);
    assert.equal((await engine().onDetection('announced', d)).length, 0, 'the same detection seen twice stores one alert');
    assert.equal((await alertsOf(team, owner)).filter((a) => a.ruleId === r.id).length, 4);
  });

  test('cooldown per satellite: a second species on the same satellite waits', async () => {
    const { owner, team } = await world();
    const a = await makeSatellite(hub, team, owner, 'A');
    const b = await makeSatellite(hub, team, owner, 'B');
    await rule(owner, team, { name: 'Per satellite', type: 'detection', cooldownMinutes: 10, cooldownScope: 'satellite' });
    assert.equal((await engine().onDetection('announced', await announced(team, a))).length, 1);
    assert.equal((await engine().onDetection('announced', await announced(team, a, { speciesCode: 'eurrob1' }))).length, 0);
    assert.equal((await engine().onDetection('announced', await announced(team, b))).length, 1);
  });

  test('conditions: species, confidence, satellites, rare and first-of-day system rules', async () => {
    const { owner, team } = await world();
    const a = await makeSatellite(hub, team, owner, 'A');
    const b = await makeSatellite(hub, team, owner, 'B');
    const wren = await rule(owner, team, {
      name: 'Wren at A',
      type: 'detection',
      conditions: { species: ['Troglodytes troglodytes'], minConfidence: 0.7, satelliteIds: [a.id] },
    });
    const rare = await rule(owner, team, { name: 'Rare', type: 'detection', conditions: { system: 'rare_species' } });
    const first = await rule(owner, team, { name: 'First', type: 'detection', conditions: { system: 'first_of_day' } });
    const ids = async (d: AnnouncedDetection) => (await engine().onDetection('announced', d)).map((x) => x.ruleId).sort();
    assert.deepEqual(await ids(await announced(team, a, { confidence: 0.6 })), []);
    assert.deepEqual(await ids(await announced(team, b)), []);
    assert.deepEqual(await ids(await announced(team, a)), [wren.id]);
    assert.deepEqual(await ids(await announced(team, b, { isRare: true, speciesCode: 'x1' })), [rare.id]);
    assert.deepEqual(await ids(await announced(team, b, { isFirstOfDay: true, speciesCode: 'x2' })), [first.id]);
    const listed = (await alertsOf(team, owner)).find((x) => x.ruleId === rare.id);
    assert.equal(listed.event, 'rare_species');
  });

  test('verified only: fires when the team votes a detection confirmed, not when it is announced', async () => {
    const { owner, team } = await world();
    const sat = await makeSatellite(hub, team, owner, 'Verified');
    const r = await rule(owner, team, { name: 'Confirmed', type: 'detection', conditions: { verifiedOnly: true } });
    const id = await makeDetection(hub, { satellite: sat });
    assert.equal((await engine().onDetection('announced', await announced(team, sat, { id }))).length, 0);
    const vote = await api.post(`/detections/${id}/verify`, { vote: 'confirm' }, owner);
    assert.equal(vote.status, 200, vote.text);
    assert.equal(vote.body.verificationStatus, 'confirmed');
    const alerts = await waitFor('the verified alert', async () => {
      const x = (await alertsOf(team, owner)).filter((a) => a.ruleId === r.id);
      return x.length > 0 && x;
    });
    assert.equal(alerts[0].detectionId, id);
  });

  test('quiet hours: the alert is stored and shown, nothing is delivered', async () => {
    const { owner, team, receiver, channelId } = await world();
    const sat = await makeSatellite(hub, team, owner);
    const r = await rule(owner, team, {
      name: 'Quiet',
      type: 'detection',
      channelIds: [channelId],
      quietHours: { start: '00:00', end: '23:59' },
    });
    const stored = await engine().onDetection('announced', await announced(team, sat));
    assert.equal(stored.length, 1);
    const rows = await hub.sql.query('SELECT id FROM alert_deliveries WHERE alert_id = $1', [stored[0]!.id]);
    assert.equal(rows.length, 0);
    assert.equal(receiver.received.length, 0);
    assert.equal((await alertsOf(team, owner)).filter((a) => a.ruleId === r.id).length, 1);
  });

  test('email through a local SMTP server, one message per address', async () => {
    const owner = await f.user();
    const team = await f.team(owner);
    const ch = await api.post(
      '/alert-rules/channels',
      { tenantId: team.id, type: 'email', name: 'Birders', config: { addresses: ['ana@example.org', 'ben@example.org'] } },
      owner,
    );
    assert.equal(ch.status, 201, ch.text);
    const res = await api.post(`/alert-rules/channels/${ch.body.id}/test`, {}, owner);
    assert.equal(res.body.delivered, true, res.text);
    const got = await waitFor('two mails', async () => mails.length >= 2 && mails);
    assert.deepEqual(got.flatMap((m) => m.to).sort(), ['ana@example.org', 'ben@example.org']);
    assert.match(got[0]!.data, /Subject: .*Eurasian Wren/i);
  });

  test('chat channels: Slack, Discord and Teams bodies reach their webhooks; Telegram through the Bot API', async () => {
    const owner = await f.user();
    const team = await f.team(owner);
    const r = await startReceiver(() => ({ status: 200, body: 'ok' }));
    receivers.push(r);
    const cases: Array<[string, Record<string, string>, (body: any) => void]> = [
      [
        'chat_blocks',
        { webhookUrl: `${r.url}/slack/T000/B000/XXXX` },
        (b) => assert.ok(Array.isArray(b.blocks) && typeof b.text === 'string'),
      ],
      [
        'chat_embeds',
        { webhookUrl: `${r.url}/discord/api/webhooks/1/tok` },
        (b) => assert.ok(Array.isArray(b.embeds) && Number.isInteger(b.embeds[0].color)),
      ],
      [
        'chat_cards',
        { webhookUrl: `${r.url}/teams/hook` },
        (b) => assert.equal(b.attachments[0].contentType, 'application/vnd.microsoft.card.adaptive'),
      ],
    ];
    for (const [type, config, check] of cases) {
      const ch = await api.post('/alert-rules/channels', { tenantId: team.id, type, name: type, config }, owner);
      assert.equal(ch.status, 201, ch.text);
      assert.ok(!JSON.stringify(ch.body).includes('XXXX') && !JSON.stringify(ch.body).includes('/tok'), 'the webhook URL is not shown');
      const res = await api.post(`/alert-rules/channels/${ch.body.id}/test`, {}, owner);
      assert.deepEqual([res.body.delivered, res.body.status], [true, 200], res.text);
      check(JSON.parse(r.received.at(-1)!.body.toString()));
    }
    const tg = await api.post(
      '/alert-rules/channels',
      { tenantId: team.id, type: 'chat_bot', name: 'tg', config: { botToken: '123456:ABCdef_ghiJKL', chatId: '42' } },
      owner,
    );
    const res = await api.post(`/alert-rules/channels/${tg.body.id}/test`, {}, owner);
    assert.deepEqual([res.body.delivered, res.body.status], [true, 200], res.text);
  });
});
