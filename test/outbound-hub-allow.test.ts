/**
 * A webhook to the LAN, allowed by a hub admin from the dashboard (issue 36 point 6): the hub
 * setting outbound_allow_hosts joins OUTBOUND_ALLOW_HOSTS; a refused URL says who can allow it and
 * where; a list that cannot be read is refused at save; only hub admins set it.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startHub, type Hub } from './helpers/hub.ts';
import { factories, type TestTeam, type TestUser } from './helpers/factories.ts';
import { assertError, client } from './helpers/http.ts';
import { startReceiver, type Receiver } from './helpers/receivers.ts';

describe('outbound hosts a hub admin allows', () => {
  let hub: Hub;
  let api: ReturnType<typeof client>;
  let root: TestUser;
  let owner: TestUser;
  let team: TestTeam;
  let receiver: Receiver;

  before(async () => {
    // No OUTBOUND_ALLOW_HOSTS / WEBHOOK_ALLOW_HOSTS: the local receiver is private.
    hub = await startHub({ env: { WEBHOOK_BACKOFF_MS: '20', WEBHOOK_TIMEOUT_MS: '400' } });
    api = client(hub.url);
    const f = factories(hub);
    root = await f.user({ admin: true });
    owner = await f.user();
    team = await f.team(owner);
    receiver = await startReceiver();
  });
  after(async () => {
    await receiver.close();
    await api.put('/settings/platform', { outbound_allow_hosts: null }, root);
    await hub.close();
  });

  const hook = () =>
    api.post('/alert-rules/channels', { tenantId: team.id, type: 'webhook', name: 'LAN', config: { url: `${receiver.url}/hook` } }, owner);

  test('refused until a hub admin lists the host; the refusal says who and where', async () => {
    const refused = await hook();
    assertError(refused, 400, 'URL_NOT_ALLOWED');
    assert.match(refused.body.error.message, /a hub admin can allow it under Admin → Hub settings → outbound_allow_hosts/);

    assert.equal(
      (await api.put('/settings/platform', { outbound_allow_hosts: '127.0.0.1' }, owner)).status,
      403,
      'a team owner is not a hub admin',
    );
    assertError(await api.put('/settings/platform', { outbound_allow_hosts: '10.0.0.0/99' }, root), 400, 'VALIDATION_FAILED');
    const put = await api.put('/settings/platform', { outbound_allow_hosts: '192.168.1.20, 127.0.0.1' }, root);
    assert.equal(put.status, 200, put.text);

    const made = await hook();
    assert.equal(made.status, 201, made.text);
    const sent = await api.post(`/alert-rules/channels/${made.body.id}/test`, {}, owner);
    assert.deepEqual([sent.body.delivered, sent.body.status], [true, 200], sent.text);
    assert.equal(receiver.received.length, 1);

    // Taken away again: the next send is refused at once, in this process without a restart.
    assert.equal((await api.put('/settings/platform', { outbound_allow_hosts: null }, root)).status, 200);
    const again = await api.post(`/alert-rules/channels/${made.body.id}/test`, {}, owner);
    assert.equal(again.body.delivered, false);
    assert.equal(receiver.received.length, 1);
  });
});
