/**
 * Scheduled exports (issue 18): the cron expression checked at save, a run on the injected
 * clock delivering the file as an email attachment (a local SMTP server) and as a signed webhook
 * POST (a local receiver), each occurrence run once by two hubs over the same database.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { SMTPServer } from 'smtp-server';
import type { AddressInfo } from 'node:net';
import { startHub, type Hub } from './helpers/hub.ts';
import { factories, makeDetection, makeSatellite, type TestTeam, type TestUser } from './helpers/factories.ts';
import { assertError, client } from './helpers/http.ts';
import { ALERT_ENV, signedReceiver } from './helpers/alerts.ts';
import { waitFor } from './helpers/wait.ts';
import type { Receiver } from './helpers/receivers.ts';
import { createServices } from '../src/services.ts';

const SECRET = 'export-hook-secret-0123456789';

describe('scheduled exports', () => {
  let hub: Hub;
  let api: ReturnType<typeof client>;
  let owner: TestUser;
  let member: TestUser;
  let team: TestTeam;
  let smtp: SMTPServer;
  let receiver: Receiver;
  const mails: string[] = [];
  let mailChannel: string;
  let hookChannel: string;

  before(async () => {
    smtp = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS', 'AUTH'],
      onData(stream, _session, done) {
        let data = '';
        stream.on('data', (c: Buffer) => (data += c.toString()));
        stream.on('end', () => {
          mails.push(data);
          done();
        });
      },
    });
    await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
    hub = await startHub({ env: { ...ALERT_ENV, SMTP_URL: `smtp://127.0.0.1:${(smtp.server.address() as AddressInfo).port}` } });
    api = client(hub.url);
    const f = factories(hub);
    owner = await f.user();
    team = await f.team(owner);
    member = await f.member(team, 'member');
    receiver = await signedReceiver(SECRET);
    const mail = await api.post(
      '/alert-rules/channels',
      { tenantId: team.id, type: 'email', name: 'Reports', config: { addresses: ['reports@example.org'] } },
      owner,
    );
    mailChannel = mail.body.id;
    const hook = await api.post(
      '/alert-rules/channels',
      { tenantId: team.id, type: 'webhook', name: 'Archive', config: { url: `${receiver.url}/exports`, secret: SECRET } },
      owner,
    );
    hookChannel = hook.body.id;
    const sat = await makeSatellite(hub, team, owner, 'Meadow');
    // The clock runs with real time: close to a full hour, the schedules saved by the tests below
    // would fall due an hour later than the rows were made (a run at 22:59 counted 1 of 3), so the
    // clock first moves past the hour.
    const HOUR = 3_600_000;
    const intoHour = hub.clock.now().getTime() % HOUR;
    if (intoHour > HOUR - 5 * 60_000) hub.clock.advance(HOUR - intoHour + 60_000);
    // Now, before the first due time: inside the first run's window (one interval back from it).
    for (let i = 0; i < 3; i++) await makeDetection(hub, { satellite: sat, at: new Date(hub.clock.now().getTime() + i) });
  });
  after(async () => {
    await receiver.close();
    await hub.close();
    await new Promise<void>((resolve) => smtp.close(() => resolve()));
  });

  test('the cron expression, the time zone and the channel are checked at save; only admins manage schedules', async () => {
    const body = { tenantId: team.id, name: 'Daily', format: 'csv', schedule: '0 6 * * *', channelId: mailChannel };
    assertError(await api.post('/exports/scheduled', { ...body, schedule: '61 * * * *' }, owner), 400, 'INVALID_SCHEDULE');
    assertError(await api.post('/exports/scheduled', { ...body, schedule: '*/5 * * * * *' }, owner), 400, 'INVALID_SCHEDULE');
    assertError(await api.post('/exports/scheduled', { ...body, timeZone: 'Mars/Olympus' }, owner), 400, 'INVALID_SCHEDULE');
    const slack = await api.post(
      '/alert-rules/channels',
      { tenantId: team.id, type: 'chat_blocks', name: 's', config: { webhookUrl: `${receiver.url}/s` } },
      owner,
    );
    assertError(await api.post('/exports/scheduled', { ...body, channelId: slack.body.id }, owner), 400, 'CHANNEL_CANNOT_CARRY_FILES');
    assert.equal((await api.post('/exports/scheduled', body, member)).status, 403);
    assert.equal((await api.get(`/exports/scheduled?tenantId=${team.id}`, member)).status, 403);
    const res = await api.post('/exports/scheduled', { ...body, timeZone: 'Europe/Berlin' }, owner);
    assert.equal(res.status, 201, res.text);
    assert.equal(res.body.timeZone, 'Europe/Berlin');
    assert.ok(res.body.nextRunAt);
    const upd = await api.put(`/exports/scheduled/${res.body.id}`, { ...body, name: 'Morning', enabled: false }, owner);
    assert.equal(upd.body.enabled, false);
    assert.equal((await api.del(`/exports/scheduled/${res.body.id}`, owner)).status, 204);
    const audit = await hub.sql.query<{ action: string }>('SELECT action FROM audit_log WHERE target_id = $1 ORDER BY id', [res.body.id]);
    assert.deepEqual(
      audit.map((a) => a.action),
      ['admin.scheduled_export_created', 'admin.scheduled_export_updated', 'admin.scheduled_export_deleted'],
    );
  });

  test('due on the injected clock: run once by two hubs over one database; an attachment by mail, a signed POST by webhook', async () => {
    const byMail = await api.post(
      '/exports/scheduled',
      { tenantId: team.id, name: 'Hourly mail', format: 'csv', schedule: '0 * * * *', channelId: mailChannel },
      owner,
    );
    const byHook = await api.post(
      '/exports/scheduled',
      { tenantId: team.id, name: 'Hourly hook', format: 'checklist', schedule: '0 * * * *', channelId: hookChannel },
      owner,
    );
    assert.equal(byMail.status, 201, byMail.text);
    assert.equal(byHook.status, 201, byHook.text);
    const second = createServices(hub.infra);
    assert.equal(await hub.services.scheduledExports.tick(), 0, 'nothing due yet');
    hub.clock.advance(new Date(byMail.body.nextRunAt).getTime() - hub.clock.now().getTime() + 1000);
    const ran = await Promise.all([hub.services.scheduledExports.tick(), second.scheduledExports.tick()]);
    assert.equal(ran[0] + ran[1], 2, 'each occurrence once');
    assert.equal(await hub.services.scheduledExports.tick(), 0);

    const mail = await waitFor('the mail', async () => mails.length > 0 && mails);
    assert.equal(mails.length, 1);
    assert.match(mail[0]!, /Subject: Chorus export: Hourly mail/);
    assert.match(mail[0]!, /Content-Disposition: attachment;\s+filename=.*\.csv/i);
    assert.equal(receiver.received.length, 1);
    const post = receiver.received[0]!;
    const body = JSON.parse(post.body.toString());
    assert.equal(body.event, 'scheduled_export');
    assert.equal(body.data.rows, 3);
    assert.equal(body.data.content.trim().split('\n').length, 1, 'one eBird line: one species on one satellite-day');
    assert.equal(body.data.contentEncoding, 'text');

    const list = await api.get(`/exports/scheduled?tenantId=${team.id}`, owner);
    const mailRow = list.body.scheduled.find((s: any) => s.id === byMail.body.id);
    assert.equal(mailRow.lastStatus, 'delivered');
    assert.equal(mailRow.lastRows, 3);
    assert.ok(new Date(mailRow.nextRunAt) > new Date(mailRow.lastRunAt));
    const hookRow = list.body.scheduled.find((s: any) => s.id === byHook.body.id);
    assert.equal(hookRow.lastStatus, 'delivered', hookRow.lastError ?? '');
    const deliveries = await api.get(`/alert-rules/channels/${hookChannel}/deliveries`, owner);
    assert.equal(deliveries.body.deliveries[0].event, 'scheduled_export');
  });

  test('"Run now" sends the window since the last run at once and leaves the next scheduled run; admins only', async () => {
    const made = await api.post(
      '/exports/scheduled',
      { tenantId: team.id, name: 'Daily hook', format: 'csv', schedule: '0 6 * * *', channelId: hookChannel },
      owner,
    );
    assert.equal(made.status, 201, made.text);
    const before = receiver.received.length;
    assert.equal((await api.get('/system/info')).body.mail, true, 'a hub with SMTP_URL says it sends mail');
    assert.equal((await api.post(`/exports/scheduled/${made.body.id}/run`, {}, member)).status, 403);
    const ran = await api.post(`/exports/scheduled/${made.body.id}/run`, {}, owner);
    assert.equal(ran.status, 200, ran.text);
    assert.equal(ran.body.lastStatus, 'delivered', ran.body.lastError ?? '');
    assert.equal(ran.body.lastRows, 3, "the first window: one day back, the team's three detections");
    assert.equal(ran.body.nextRunAt, made.body.nextRunAt, 'the schedule stays');
    assert.equal(receiver.received.length, before + 1);
    assert.equal(JSON.parse(receiver.received.at(-1)!.body.toString()).data.rows, 3);
    // A second run starts where the first ended: nothing is sent twice.
    const again = await api.post(`/exports/scheduled/${made.body.id}/run`, {}, owner);
    assert.equal(again.body.lastRows, 0);
    assert.equal((await api.post('/exports/scheduled/00000000-0000-4000-8000-000000000000/run', {}, owner)).status, 404);
  });
});
