/**
 * The broker login a satellite really meets (spec §5 "Satellites", satellite-protocol.md): the
 * test hub's embedded broker with the credential check production runs, against satellites
 * registered and deleted over HTTP. Each case dials the broker with mqtt.js and reads the
 * CONNACK (MQTT 3.1.1 return codes: 4 bad username or password, 5 not authorized).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import mqtt from 'mqtt';
import type { MqttClient } from 'mqtt';
import { startHub, type Hub } from './helpers/hub.ts';
import { factories, type TestTeam, type TestUser } from './helpers/factories.ts';
import { client } from './helpers/http.ts';
import { createEmbeddedBroker, type Broker } from '../src/infra/broker/index.ts';
import { satelliteCredentialCheck } from '../src/modules/satellites/broker-credentials.ts';

const TIMEOUT = 5000;
const BAD_USERNAME_OR_PASSWORD = 4;
const NOT_AUTHORIZED = 5;

interface Login {
  username: string;
  password: string;
}

const options = (login: Login) => ({
  clientId: `satellite-${login.username}`,
  username: login.username,
  password: login.password,
  protocolVersion: 4 as const,
  clean: true,
  reconnectPeriod: 0,
  connectTimeout: TIMEOUT,
});

describe('broker credentials', () => {
  let hub: Hub;
  let api: ReturnType<typeof client>;
  let team: TestTeam;
  let member: TestUser;
  const opened: MqttClient[] = [];

  before(async () => {
    hub = await startHub();
    api = client(hub.url);
    const f = factories(hub);
    team = await f.team(await f.user());
    member = await f.member(team, 'member');
  });
  after(async () => {
    for (const c of opened) c.end(true);
    await hub.close();
  });

  /** A satellite registered over HTTP by the team's member: its id and the MQTT login the reply shows once. */
  async function register(): Promise<{ id: string; login: Login }> {
    const res = await api.post('/satellites', { tenantId: team.id, name: `Sat ${crypto.randomUUID().slice(0, 6)}` }, member);
    assert.equal(res.status, 201, res.text);
    assert.equal(res.body.mqtt.brokerUrl, hub.infra.broker.brokerUrl);
    return { id: res.body.id, login: { username: res.body.mqtt.username, password: res.body.mqtt.password } };
  }

  async function connect(url: string, login: Login): Promise<MqttClient> {
    const c = await mqtt.connectAsync(url, options(login), false);
    opened.push(c);
    return c;
  }

  /** Connects expecting a refusal; returns the CONNACK return code. */
  async function refusal(url: string, login: Login): Promise<number> {
    let c: MqttClient;
    try {
      c = await mqtt.connectAsync(url, options(login), false);
    } catch (err) {
      const code = (err as { code?: number }).code;
      assert.equal(typeof code, 'number', `expected a CONNACK refusal, got: ${(err as Error).message}`);
      return code!;
    }
    c.end(true);
    assert.fail(`login ${login.username} was accepted`);
  }

  test('the credentials registration shows let the satellite in', async () => {
    const sat = await register();
    const c = await connect(hub.infra.broker.brokerUrl, sat.login);
    assert.equal(c.connected, true);
  });

  test('a wrong password is refused', async () => {
    const sat = await register();
    const wrong = { ...sat.login, password: sat.login.password.replace(/^./, (d) => (d === '0' ? '1' : '0')) };
    assert.equal(await refusal(hub.infra.broker.brokerUrl, wrong), BAD_USERNAME_OR_PASSWORD);
    assert.equal(await refusal(hub.infra.broker.brokerUrl, { ...sat.login, password: 'x' }), BAD_USERNAME_OR_PASSWORD);
  });

  test("another satellite's name with this satellite's password is refused", async () => {
    const mine = await register();
    const theirs = await register();
    assert.equal(
      await refusal(hub.infra.broker.brokerUrl, { username: theirs.login.username, password: mine.login.password }),
      BAD_USERNAME_OR_PASSWORD,
    );
    // Both still log in with their own.
    await connect(hub.infra.broker.brokerUrl, mine.login);
    await connect(hub.infra.broker.brokerUrl, theirs.login);
  });

  test('a name that is no satellite is refused', async () => {
    const sat = await register();
    assert.equal(await refusal(hub.infra.broker.brokerUrl, { ...sat.login, username: 'not-a-satellite' }), BAD_USERNAME_OR_PASSWORD);
    assert.equal(await refusal(hub.infra.broker.brokerUrl, { ...sat.login, username: crypto.randomUUID() }), BAD_USERNAME_OR_PASSWORD);
  });

  describe('a satellite deleted over HTTP', () => {
    let fresh: Broker | undefined;
    after(() => fresh?.close());

    test('is refused by the running broker, and by one started afresh over the same database', async () => {
      const doomed = await register();
      const kept = await register();
      await connect(hub.infra.broker.brokerUrl, doomed.login);
      assert.equal((await api.del(`/satellites/${doomed.id}`, member)).status, 204);
      assert.equal(await refusal(hub.infra.broker.brokerUrl, doomed.login), NOT_AUTHORIZED, 'revoked in the running broker');

      // A restarted hub has no memory of the revocation: only the stored credentials refuse it.
      fresh = await createEmbeddedBroker({
        port: 0,
        wsPort: 0,
        host: '127.0.0.1',
        publicUrl: 'http://chorus.test',
        check: satelliteCredentialCheck(hub.infra.db),
      });
      assert.equal(await refusal(fresh.brokerUrl, doomed.login), BAD_USERNAME_OR_PASSWORD, 'the row is gone');
      await connect(fresh.brokerUrl, kept.login);
    });
  });
});
