/**
 * Alerts (issue 17): rules and channels over HTTP, secrets that never come back, the outbound
 * address policy at save, the channel test, and end to end: the reference satellite's
 * soundscape → a detection rule → one stored alert, one WebSocket `alert` frame and one signed
 * webhook delivery. Retries, time-outs and final failures against real local receivers.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startHub, type Hub } from './helpers/hub.ts';
import { factories, type TestTeam, type TestUser } from './helpers/factories.ts';
import { assertError, client, type Res } from './helpers/http.ts';
import { startReceiver, type Receiver } from './helpers/receivers.ts';
import { ALERT_ENV, signedReceiver, teamSocket } from './helpers/alerts.ts';
import { queueSettled, waitFor } from './helpers/wait.ts';
import { RawSatellite } from './helpers/raw-satellite.ts';
import { SPECIES } from '../src/satellite/soundscape.ts';
import { speciesCatalog } from '../src/modules/species/catalog.ts';
import { INFERENCE_QUEUE } from '../src/protocol/jobs.ts';
import { ALERT_DELIVERY_QUEUE } from '../src/modules/alerts/dispatch.ts';

const SECRET = 'whsec-0123456789-abcdefghij';
const BOT_TOKEN = '123456789:AAbbCCddEEffGGhhIIjjKKllMMnnOOppQQ';

describe('alerts', () => {
  let hub: Hub;
  let api: ReturnType<typeof client>;
  let f: ReturnType<typeof factories>;
  let owner: TestUser;
  let admin: TestUser;
  let member: TestUser;
  let viewer: TestUser;
  let team: TestTeam;
  let otherOwner: TestUser;
  let otherTeam: TestTeam;
  const receivers: Receiver[] = [];
  /** Every response body of every alert route this file sees, searched for secrets at the end. */
  const seen: string[] = [];

  const keep = (r: Res) => {
    seen.push(r.text ?? JSON.stringify(r.body ?? null));
    return r;
  };
  const post = async (url: string, body: unknown, as: TestUser) => keep(await api.post(url, body, as));
  const put = async (url: string, body: unknown, as: TestUser) => keep(await api.put(url, body, as));
  const get = async (url: string, as: TestUser) => keep(await api.get(url, as));

  async function receiver(...args: Parameters<typeof startReceiver>) {
    const r = await startReceiver(...args);
    receivers.push(r);
    return r;
  }

  async function webhook(url: string, extra: Record<string, unknown> = {}, as = admin, t = team) {
    const res = await post('/alert-rules/channels', { tenantId: t.id, type: 'webhook', name: 'Hook', config: { url, ...extra } }, as);
    assert.equal(res.status, 201, res.text);
    return res.body;
  }

  async function rule(body: Record<string, unknown>, t = team) {
    const res = await post('/alert-rules/rules', { tenantId: t.id, ...body }, admin);
    assert.equal(res.status, 201, res.text);
    return res.body;
  }

  before(async () => {
    hub = await startHub({ env: ALERT_ENV });
    api = client(hub.url);
    f = factories(hub);
    owner = await f.user();
    team = await f.team(owner);
    admin = await f.member(team, 'admin');
    member = await f.member(team, 'member');
    viewer = await f.member(team, 'viewer');
    otherOwner = await f.user();
    otherTeam = await f.team(otherOwner);
  });
  after(async () => {
    for (const r of receivers) await r.close();
    await hub.close();
  });

  describe('channels', () => {
    test('a webhook channel keeps its secret write-only: hasSecret, never the secret, the URL without its query', async () => {
      const ch = await webhook('http://127.0.0.1:9/hook?token=query-token-123', { secret: SECRET });
      assert.equal(ch.hasSecret, true);
      assert.equal(ch.type, 'webhook');
      assert.equal(ch.config.url, 'http://127.0.0.1:9/hook?…');
      assert.ok(!JSON.stringify(ch).includes(SECRET));
      assert.ok(!JSON.stringify(ch).includes('query-token-123'));
      const list = await get(`/alert-rules/channels?tenantId=${team.id}`, viewer);
      assert.equal(list.status, 200);
      const listed = list.body.channels.find((c: { id: string }) => c.id === ch.id);
      assert.equal(listed.hasSecret, true);
      const stored = await hub.sql.one<{ secrets: string; config: unknown }>('SELECT secrets, config FROM alert_channels WHERE id = $1', [
        ch.id,
      ]);
      assert.ok(!stored.secrets.includes(SECRET), 'sealed at rest');
      assert.ok(!JSON.stringify(stored.config).includes('query-token-123'));
      const audit = await hub.sql.query<{ action: string; details: unknown }>(
        'SELECT action, details FROM audit_log WHERE target_id = $1',
        [ch.id],
      );
      assert.deepEqual(
        audit.map((a) => a.action),
        ['admin.alert_channel_created'],
      );
      assert.ok(!JSON.stringify(audit).includes(SECRET));
    });

    test('only admins change channels; viewers read; another team sees nothing', async () => {
      const body = { tenantId: team.id, type: 'webhook', name: 'x', config: { url: 'http://127.0.0.1:9/' } };
      assertError(await post('/alert-rules/channels', body, member), 403, 'FORBIDDEN');
      assertError(await post('/alert-rules/channels', body, viewer), 403, 'FORBIDDEN');
      const ch = await webhook('http://127.0.0.1:9/');
      assert.equal((await put(`/alert-rules/channels/${ch.id}`, { name: 'y' }, otherOwner)).status, 404);
      assert.equal((await api.del(`/alert-rules/channels/${ch.id}`, member)).status, 403);
      assert.equal((await post(`/alert-rules/channels/${ch.id}/test`, {}, otherOwner)).status, 404);
    });

    test('below Admin, webhook URLs keep only scheme and host and email addresses are masked; admins see the stored form', async () => {
      const hook = await webhook('http://127.0.0.1:9/hooks/path-token-4711/in?key=q');
      const bare = await webhook('http://127.0.0.1:9/');
      const mail = await post(
        '/alert-rules/channels',
        { tenantId: team.id, type: 'email', name: 'Mail', config: { addresses: ['anna.birder@example.org', 'b@lists.example.net'] } },
        admin,
      );
      assert.equal(mail.status, 201, mail.text);
      const configs = async (as: TestUser) => {
        const list = await get(`/alert-rules/channels?tenantId=${team.id}`, as);
        assert.equal(list.status, 200, list.text);
        const byId = new Map(list.body.channels.map((c: { id: string; config: unknown }) => [c.id, c.config]));
        return { hook: byId.get(hook.id), bare: byId.get(bare.id), mail: byId.get(mail.body.id), text: list.text as string };
      };
      for (const as of [viewer, member]) {
        const seenBy = await configs(as);
        assert.deepEqual(seenBy.hook, { url: 'http://127.0.0.1:9/…' });
        assert.deepEqual(seenBy.bare, { url: 'http://127.0.0.1:9/' });
        assert.deepEqual(seenBy.mail, { addresses: ['a***@example.org', 'b***@lists.example.net'] });
        assert.ok(!seenBy.text.includes('path-token-4711'), 'no path token');
        assert.ok(!seenBy.text.includes('anna.birder'), 'no address');
      }
      for (const as of [admin, owner]) {
        const seenBy = await configs(as);
        assert.deepEqual(seenBy.hook, { url: 'http://127.0.0.1:9/hooks/path-token-4711/in?…' });
        assert.deepEqual(seenBy.mail, { addresses: ['anna.birder@example.org', 'b@lists.example.net'] });
      }
    });

    test('a template section that renders only when a field is empty is checked at save; unescaped tags are accepted and render JSON', async () => {
      const base = { tenantId: team.id, name: 'x', type: 'webhook', config: { url: 'http://127.0.0.1:9/' } };
      const hidden = await post(
        '/alert-rules/channels',
        { ...base, payload_template: '{{^species}}{"l": 1{{link}}}{{/species}}{{#species}}{}{{/species}}' },
        admin,
      );
      assertError(hidden, 400, 'INVALID_TEMPLATE');
      assert.match(hidden.body.error.message, /when species is empty/);

      const r = await receiver();
      const template = '{{^species}}{"sat": "{{{satelliteName}}}"}{{/species}}{{#species}}{"rule": "{{& ruleName}}"}{{/species}}';
      const ch = await post('/alert-rules/channels', { ...base, config: { url: `${r.url}/t` }, payload_template: template }, admin);
      assert.equal(ch.status, 201, ch.text);
      const tested = await post(`/alert-rules/channels/${ch.body.id}/test`, {}, admin);
      assert.equal(tested.status, 200, tested.text);
      const sent = JSON.parse(r.received.at(-1)!.body.toString());
      assert.deepEqual(sent, { rule: 'Channel test' });
    });

    test('private, loopback, link-local and metadata addresses are refused at save unless listed', async () => {
      for (const url of [
        'http://10.1.2.3/',
        'http://169.254.169.254/latest/meta-data',
        'http://[::1]:8080/',
        'http://192.168.1.1/',
        'http://[::ffff:10.0.0.1]/',
      ]) {
        const res = await post('/alert-rules/channels', { tenantId: team.id, type: 'webhook', name: 'x', config: { url } }, admin);
        assertError(res, 400, 'URL_NOT_ALLOWED');
      }
      const chat = await post(
        '/alert-rules/channels',
        { tenantId: team.id, type: 'chat_blocks', name: 's', config: { webhookUrl: 'http://10.0.0.1/x' } },
        admin,
      );
      assertError(chat, 400, 'URL_NOT_ALLOWED');
      assertError(
        await post(
          '/alert-rules/channels',
          { tenantId: team.id, type: 'webhook', name: 'x', config: { url: 'ftp://example.org/' } },
          admin,
        ),
        400,
        'URL_INVALID',
      );
      // 127.0.0.1 is listed for this hub (WEBHOOK_ALLOW_HOSTS).
      await webhook('http://127.0.0.1:9/');
    });

    test('config members of another type, a missing URL and a template that is not JSON are refused', async () => {
      const base = { tenantId: team.id, name: 'x' };
      assertError(await post('/alert-rules/channels', { ...base, type: 'webhook', config: {} }, admin), 400, 'INVALID_CHANNEL_CONFIG');
      assertError(
        await post('/alert-rules/channels', { ...base, type: 'email', config: { addresses: ['a@example.org'], botToken: 'x' } }, admin),
        400,
        'INVALID_CHANNEL_CONFIG',
      );
      const bad = await post(
        '/alert-rules/channels',
        { ...base, type: 'webhook', config: { url: 'http://127.0.0.1:9/' }, payload_template: '{"species": "{{species}}"' },
        admin,
      );
      assertError(bad, 400, 'INVALID_TEMPLATE');
      const good = await post(
        '/alert-rules/channels',
        {
          ...base,
          type: 'webhook',
          config: { url: 'http://127.0.0.1:9/' },
          payload_template: '{"text": "{{message}}", "who": "{{commonName}}"}',
        },
        admin,
      );
      assert.equal(good.status, 201, good.text);
      assert.equal(good.body.payload_template, '{"text": "{{message}}", "who": "{{commonName}}"}');
      assert.equal((await post('/alert-rules/channels', { ...base, type: 'telegram', config: {} }, admin)).status, 400);
    });

    test('the channel test signs the body with the secret and reports the receiver answer; the secret survives an update', async () => {
      const r = await signedReceiver(SECRET);
      receivers.push(r);
      const ch = await webhook(`${r.url}/hook`, { secret: SECRET });
      const ok = await post(`/alert-rules/channels/${ch.id}/test`, {}, admin);
      assert.equal(ok.status, 200, ok.text);
      assert.equal(ok.body.delivered, true);
      assert.equal(ok.body.status, 200);
      assert.equal(typeof ok.body.durationMs, 'number');
      assert.equal(r.received.length, 1);
      const sent = JSON.parse(r.received[0]!.body.toString());
      assert.equal(sent.event, 'test');
      assert.ok(r.received[0]!.headers['x-service-delivery'], 'a delivery id for receivers to drop retried duplicates');

      // Renamed without the secret: it is kept, deliveries stay signed.
      const renamed = await put(`/alert-rules/channels/${ch.id}`, { name: 'Renamed' }, admin);
      assert.equal(renamed.status, 200, renamed.text);
      assert.equal(renamed.body.hasSecret, true);
      assert.equal((await post(`/alert-rules/channels/${ch.id}/test`, {}, admin)).body.status, 200);

      // secret: null removes it: the receiver now refuses the unsigned body.
      const cleared = await put(`/alert-rules/channels/${ch.id}`, { config: { secret: null } }, admin);
      assert.equal(cleared.body.hasSecret, false);
      const unsigned = await post(`/alert-rules/channels/${ch.id}/test`, {}, admin);
      assert.deepEqual({ delivered: unsigned.body.delivered, status: unsigned.body.status }, { delivered: false, status: 401 });
      assert.equal(r.received.at(-1)!.headers['x-service-signature'], undefined, 'no signature header without a secret');

      const deliveries = await get(`/alert-rules/channels/${ch.id}/deliveries`, admin);
      assert.equal(deliveries.status, 200);
      assert.deepEqual(
        deliveries.body.deliveries.map((d: { status: string; receiverStatus: number }) => [d.status, d.receiverStatus]),
        [
          ['failed', 401],
          ['delivered', 200],
          ['delivered', 200],
        ],
      );
      assert.equal((await get(`/alert-rules/channels/${ch.id}/deliveries`, viewer)).status, 403);
    });

    test('a wrong secret at the receiver is a 401, reported, not retried', async () => {
      const r = await signedReceiver('another-secret');
      receivers.push(r);
      const ch = await webhook(r.url, { secret: SECRET });
      const res = await post(`/alert-rules/channels/${ch.id}/test`, {}, admin);
      assert.deepEqual([res.body.delivered, res.body.status], [false, 401]);
      assert.match(res.body.error, /401/);
      assert.equal(r.received.length, 1);
    });

    test('a Telegram channel keeps its bot token sealed and shows the chat id', async () => {
      const res = await post(
        '/alert-rules/channels',
        { tenantId: team.id, type: 'chat_bot', name: 'Telegram', config: { botToken: BOT_TOKEN, chatId: '-100123' } },
        admin,
      );
      assert.equal(res.status, 201, res.text);
      assert.deepEqual(res.body.config, { chatId: '-100123' });
      assert.equal(res.body.hasSecret, true);
    });
  });

  describe('rules', () => {
    test('conditions that do not fit the type, and channels or satellites of another team, are refused', async () => {
      const theirs = await webhook('http://127.0.0.1:9/', {}, otherOwner, otherTeam);
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ name: 'a', type: 'absence', conditions: {} }, 'INVALID_CONDITIONS'],
        [{ name: 'a', type: 'trend', conditions: { metric: 'detections' } }, 'INVALID_CONDITIONS'],
        [{ name: 'a', type: 'detection', conditions: { minutes: 30 } }, 'INVALID_CONDITIONS'],
        [{ name: 'a', type: 'detection', conditions: { system: 'satellite_offline' } }, 'INVALID_CONDITIONS'],
        [{ name: 'a', type: 'detection', channelIds: [theirs.id] }, 'UNKNOWN_CHANNEL'],
        [{ name: 'a', type: 'detection', conditions: { satelliteIds: [theirs.id] } }, 'UNKNOWN_SATELLITE'],
      ];
      for (const [body, code] of cases) assertError(await post('/alert-rules/rules', { tenantId: team.id, ...body }, admin), 400, code);
      assert.equal((await post('/alert-rules/rules', { tenantId: team.id, name: 'x', type: 'detection' }, member)).status, 403);
      assert.equal((await post('/alert-rules/rules', { tenantId: team.id, name: 'x', type: 'nope' }, admin)).status, 400);
    });

    test('create, list, update and delete, each audited; a system rule names its event', async () => {
      const ch = await webhook('http://127.0.0.1:9/');
      const r = await rule({
        name: 'Rare',
        type: 'detection',
        conditions: { system: 'rare_species' },
        channelIds: [ch.id],
        cooldownMinutes: 30,
      });
      assert.equal(r.event, 'rare_species');
      assert.deepEqual(r.channelIds, [ch.id]);
      assert.equal(r.cooldownScope, 'species');
      const listed = await get(`/alert-rules/rules?tenantId=${team.id}`, viewer);
      assert.ok(listed.body.rules.some((x: { id: string }) => x.id === r.id));
      const upd = await put(
        `/alert-rules/rules/${r.id}`,
        { name: 'Rare birds', type: 'detection', enabled: false, conditions: { system: 'rare_species' } },
        admin,
      );
      assert.equal(upd.status, 200, upd.text);
      assert.deepEqual([upd.body.name, upd.body.enabled, upd.body.channelIds], ['Rare birds', false, []]);
      assert.equal((await api.del(`/alert-rules/rules/${r.id}`, admin)).status, 204);
      assert.equal((await api.del(`/alert-rules/rules/${r.id}`, admin)).status, 404);
      const actions = await hub.sql.query<{ action: string }>('SELECT action FROM audit_log WHERE target_id = $1 ORDER BY id', [r.id]);
      assert.deepEqual(
        actions.map((a) => a.action),
        ['admin.alert_rule_created', 'admin.alert_rule_updated', 'admin.alert_rule_deleted'],
      );
    });
  });

  describe('end to end: soundscape → detection rule → alert, socket frame, signed webhook', () => {
    let sat: RawSatellite;
    let r: Receiver;
    let ws: Awaited<ReturnType<typeof teamSocket>>;
    let ruleId: string;
    const species = SPECIES[4]!; // the robin of the reference soundscape
    const code = speciesCatalog().byLabel(species.label)!.code;

    before(async () => {
      r = await signedReceiver(SECRET);
      receivers.push(r);
      const ch = await webhook(`${r.url}/chorus`, { secret: SECRET });
      ruleId = (await rule({ name: 'Robins', type: 'detection', conditions: { species: [code], minConfidence: 0.1 }, channelIds: [ch.id] }))
        .id;
      sat = await RawSatellite.register(hub, member, team);
      ws = await teamSocket(hub, team.id, viewer);
      const { ack } = await sat.publishChunk({
        species: [species.label],
        seed: 77,
        recordedAt: new Date(hub.clock.now().getTime() - 60_000),
      });
      assert.equal(ack.status, 'stored');
    });
    after(async () => {
      ws.close();
      await sat.close();
    });

    test('one alert is stored and listed', async () => {
      const list = await waitFor('the alert', async () => {
        const res = await get(`/alerts?tenantId=${team.id}`, viewer);
        return res.body.alerts.some((a: { ruleId: string }) => a.ruleId === ruleId) && res;
      });
      const mine = list.body.alerts.filter((a: { ruleId: string }) => a.ruleId === ruleId);
      assert.equal(mine.length, 1);
      assert.equal(mine[0].event, 'custom_rule');
      assert.equal(mine[0].speciesCode, code);
      assert.equal(mine[0].satelliteId, sat.id);
      assert.equal(mine[0].acknowledged, false);
      assert.ok(mine[0].detectionId);
    });

    test('one WebSocket alert frame reaches the team', async () => {
      const frames = await waitFor('the alert frame', async () => {
        const fr = ws.frames.filter((x) => x.type === 'alert' && x.alert.ruleId === ruleId);
        return fr.length > 0 && fr;
      });
      assert.equal(frames.length, 1);
      assert.equal(frames[0].speciesCode, code);
    });

    test('one signed webhook delivery with the protocol body', async () => {
      const got = await waitFor('the webhook', async () => r.received.length > 0 && r.received);
      // A second delivery would be a bug. It would come from another job: wait until the inference job
      // that announced the detection and every delivery job have run, then count.
      await queueSettled(hub.infra.queue, INFERENCE_QUEUE);
      await queueSettled(hub.infra.queue, ALERT_DELIVERY_QUEUE);
      assert.equal(got.length, 1);
      const body = JSON.parse(got[0]!.body.toString());
      assert.equal(body.event, 'custom_rule');
      assert.ok(!Number.isNaN(Date.parse(body.timestamp)));
      assert.deepEqual(Object.keys(body.data).sort(), ['commonName', 'confidence', 'detectionId', 'satelliteName', 'species']);
      assert.equal(body.data.species, species.scientificName);
      assert.equal(typeof body.data.confidence, 'number');
      const deliveries = await waitFor('the delivered row', async () => {
        const rows = await hub.sql.query<{ status: string; attempts: number }>(
          `SELECT d.status, d.attempts FROM alert_deliveries d JOIN alerts a ON a.id = d.alert_id WHERE a.rule_id = $1`,
          [ruleId],
        );
        return rows[0]?.status === 'delivered' && rows;
      });
      assert.deepEqual(deliveries, [{ status: 'delivered', attempts: 1 }]);
    });

    test('acknowledging: per alert, filtered lists, and every remaining one at once', async () => {
      const list = await get(`/alerts?tenantId=${team.id}&acknowledged=false`, viewer);
      const alert = list.body.alerts[0];
      const before = list.body.unacknowledged;
      assert.equal((await post(`/alerts/${alert.id}/acknowledge`, {}, otherOwner)).status, 404);
      const ack = await post(`/alerts/${alert.id}/acknowledge`, {}, viewer);
      assert.equal(ack.status, 200, ack.text);
      assert.equal(ack.body.acknowledged, true);
      const after = await get(`/alerts?tenantId=${team.id}&acknowledged=true`, viewer);
      assert.ok(after.body.alerts.some((a: { id: string }) => a.id === alert.id));
      assert.equal(after.body.unacknowledged, before - 1);
      const all = await post('/alerts/acknowledge-all', { tenantId: team.id }, viewer);
      assert.equal(all.body.acknowledged, before - 1);
      assert.equal((await get(`/alerts?tenantId=${team.id}&acknowledged=false`, viewer)).body.total, 0);
      assert.equal((await get(`/alerts?tenantId=${team.id}`, otherOwner)).status, 404);
    });

    test('the deletion preview counts the alerts that stay with the device, unlinked', async () => {
      const preview = await api.get(`/satellites/${sat.id}/deletion-preview`, admin);
      assert.equal(preview.status, 200);
      assert.equal(preview.body.alerts, 1);
      const del = await api.del(`/satellites/${sat.id}`, admin);
      assert.ok(del.status === 204 || del.status === 200, del.text);
      const kept = await hub.sql.query<{ satellite_id: string | null; satellite_name: string }>(
        'SELECT satellite_id, satellite_name FROM alerts WHERE rule_id = $1',
        [ruleId],
      );
      assert.equal(kept.length, 1);
      assert.equal(kept[0]!.satellite_id, null);
      assert.ok(kept[0]!.satellite_name);
    });
  });

  describe('delivery: retries, time-outs, final failures', () => {
    async function fireOnce(channelId: string, tag: string) {
      const rl = await rule({ name: `r-${tag}`, type: 'detection', channelIds: [channelId] });
      const rows = await hub.services.alerting.engine.rulesOf(team.id);
      hub.services.alerting.engine.forget(team.id);
      const row = (await hub.services.alerting.engine.rulesOf(team.id)).find((x) => x.id === rl.id) ?? rows.find((x) => x.id === rl.id)!;
      const stored = await hub.services.alerting.engine.fire(row, {
        satelliteId: null,
        satelliteName: 'Garden',
        detectionId: null,
        speciesCode: 'eurwre',
        species: 'Troglodytes troglodytes',
        commonName: 'Eurasian Wren',
        confidence: 0.9,
        message: 'Eurasian Wren',
        eventKey: tag,
      });
      assert.ok(stored);
      return stored!;
    }
    const deliveryOf = (alertId: string) =>
      hub.sql.maybeOne<{ status: string; attempts: number; receiver_status: number | null; error: string | null }>(
        'SELECT status, attempts, receiver_status, error FROM alert_deliveries WHERE alert_id = $1',
        [alertId],
      );

    test('a receiver failing twice then answering: one delivery, three attempts, the same delivery id', async () => {
      let n = 0;
      const r = await receiver(() => (++n <= 2 ? { status: 503, body: 'busy' } : { status: 200 }));
      const ch = await webhook(r.url);
      const alert = await fireOnce(ch.id, 'flaky');
      const d = await waitFor('delivered', async () =>
        (await deliveryOf(alert.id))?.status === 'delivered' ? deliveryOf(alert.id) : null,
      );
      assert.equal(d!.attempts, 3);
      assert.equal(r.received.length, 3);
      assert.equal(new Set(r.received.map((x) => x.headers['x-service-delivery'])).size, 1);
    });

    test('429 with Retry-After is retried after the wait the receiver asked for', async () => {
      let n = 0;
      const r = await receiver(() => (++n === 1 ? { status: 429, headers: { 'retry-after': '1' } } : { status: 204 }));
      const ch = await webhook(r.url);
      const alert = await fireOnce(ch.id, 'limited');
      const d = await waitFor('delivered', async () =>
        (await deliveryOf(alert.id))?.status === 'delivered' ? deliveryOf(alert.id) : null,
      );
      assert.equal(d!.attempts, 2);
      assert.equal(r.received.length, 2);
    });

    test('a receiver that hangs times out, is retried, and ends failed', async () => {
      const r = await receiver(() => 'hang');
      const ch = await webhook(r.url);
      const alert = await fireOnce(ch.id, 'hang');
      const d = await waitFor('failed', async () => ((await deliveryOf(alert.id))?.status === 'failed' ? deliveryOf(alert.id) : null));
      assert.equal(d!.attempts, 3);
      assert.match(d!.error ?? '', /time/i);
      assert.equal(r.received.length, 3);
    });

    test('another 4xx is final at once', async () => {
      const r = await receiver(() => ({ status: 404 }));
      const ch = await webhook(r.url);
      const alert = await fireOnce(ch.id, 'gone');
      const d = await waitFor('failed', async () => ((await deliveryOf(alert.id))?.status === 'failed' ? deliveryOf(alert.id) : null));
      assert.deepEqual([d!.attempts, d!.receiver_status], [1, 404]);
    });
  });

  test('no response of any alert route carries a secret', () => {
    assert.ok(seen.length > 20);
    for (const text of seen) {
      assert.ok(!text.includes(SECRET), 'webhook secret in a response');
      assert.ok(!text.includes(BOT_TOKEN), 'bot token in a response');
      assert.ok(!text.includes('query-token-123'), 'URL token in a response');
    }
  });
});
