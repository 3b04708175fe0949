/**
 * How people find and join teams (spec §3 join request rows, §4 "Teams, joining, public pages"):
 * directory, cards, open and request policies, approve/deny with mail, blocks and their lifting.
 */
import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startHub, type Hub } from './helpers/hub.ts';
import { factories, makeSatellite, type TestTeam, type TestUser } from './helpers/factories.ts';
import { client } from './helpers/http.ts';

describe('joining teams', () => {
  let hub: Hub;
  let api: ReturnType<typeof client>;
  let f: ReturnType<typeof factories>;
  let root: TestUser;

  before(async () => {
    hub = await startHub();
    api = client(hub.url);
    f = factories(hub);
    root = await f.user({ admin: true });
    await api.put('/settings/platform', { allow_public_teams: true }, root);
  });
  after(() => hub.close());

  async function teamWith(policy: string, opts: { name?: string; description?: string } = {}) {
    const owner = await f.user({ name: 'Owner ' + policy });
    const team: TestTeam = (
      await api.post(
        '/auth/create-tenant',
        { name: opts.name ?? `Team ${policy} ${Math.random().toString(16).slice(2, 6)}`, description: opts.description },
        owner,
      )
    ).body;
    const admin = await f.member(team, 'admin');
    const res = await api.put(`/settings/tenant?tenantId=${team.id}`, { join_policy: policy }, owner);
    assert.equal(res.status, 200, res.text);
    return { owner, admin, team };
  }

  const mailsTo = (email: string) => hub.infra.mail.recorded().filter((m) => m.to === email);

  describe('directory', () => {
    test('lists listed and open teams with counts and the caller’s membership; search is case-insensitive', async () => {
      const listed = await teamWith('listed', { name: 'Heron Watchers', description: 'Wetland birds' });
      const open = await teamWith('open', { name: 'Open Owls' });
      const byLink = await teamWith('request', { name: 'Heron Link Only' });
      const closed = await teamWith('invite_only', { name: 'Heron Secret' });
      await makeSatellite(hub, listed.team, listed.owner);
      const me = await f.user();
      await api.post(`/tenants/${open.team.id}/join`, {}, me);
      await api.post(`/tenants/${listed.team.id}/join`, { message: 'hello' }, me);

      const res = await api.get('/tenants/directory?search=HERON', me);
      assert.equal(res.status, 200);
      assert.equal(res.body.enabled, true);
      const names = res.body.teams.map((t: any) => t.name);
      assert.ok(names.includes('Heron Watchers'));
      assert.ok(!names.includes('Heron Link Only') && !names.includes('Heron Secret'), 'link-only and invite-only teams are not listed');
      const card = res.body.teams.find((t: any) => t.id === listed.team.id);
      assert.deepEqual(
        {
          policy: card.policy,
          memberCount: card.memberCount,
          deviceCount: card.deviceCount,
          is_member: card.is_member,
          has_pending: card.has_pending,
          description: card.description,
        },
        { policy: 'listed', memberCount: 2, deviceCount: 1, is_member: false, has_pending: true, description: 'Wetland birds' },
      );
      const all = (await api.get('/tenants/directory', me)).body.teams;
      assert.equal(all.find((t: any) => t.id === open.team.id).is_member, true);
      assert.ok(!all.some((t: any) => t.id === byLink.team.id || t.id === closed.team.id));
    });

    test('answers {enabled: false, teams: []} while the hub switch is off', async () => {
      await teamWith('open');
      await api.put('/settings/platform', { allow_public_teams: false }, root);
      try {
        const res = await api.get('/tenants/directory', await f.user());
        assert.deepEqual(res.body, { enabled: false, teams: [] });
      } finally {
        await api.put('/settings/platform', { allow_public_teams: true }, root);
      }
    });

    test('needs a signed-in person', async () => {
      assert.equal((await api.get('/tenants/directory')).status, 401);
    });
  });

  describe('join card', () => {
    test('404 for invite-only teams, blocked callers and the hub switch off; otherwise the card', async () => {
      const { team } = await teamWith('request');
      const me = await f.user();
      const card = await api.get(`/tenants/${team.id}/join`, me);
      assert.equal(card.status, 200);
      assert.equal(card.body.policy, 'request');
      const closed = await teamWith('invite_only');
      assert.equal((await api.get(`/tenants/${closed.team.id}/join`, me)).status, 404);
      await hub.sql.query('INSERT INTO team_blocks (tenant_id, user_id, blocked_at) VALUES ($1, $2, $3)', [
        team.id,
        me.id,
        hub.clock.now(),
      ]);
      assert.equal((await api.get(`/tenants/${team.id}/join`, me)).status, 404);
      await api.put('/settings/platform', { allow_public_teams: false }, root);
      try {
        assert.equal((await api.get(`/tenants/${team.id}/join`, await f.user())).status, 404);
      } finally {
        await api.put('/settings/platform', { allow_public_teams: true }, root);
      }
    });
  });

  describe('open policy', () => {
    test('joins at once with the team default_join_role (200)', async () => {
      const { owner, team } = await teamWith('open');
      await api.put(`/settings/tenant?tenantId=${team.id}`, { default_join_role: 'member' }, owner);
      const me = await f.user();
      const res = await api.post(`/tenants/${team.id}/join`, {}, me);
      assert.equal(res.status, 200);
      assert.equal(res.body.status, 'joined');
      assert.equal(res.body.role, 'member');
      const [m] = await hub.sql.query<any>('SELECT role FROM memberships WHERE tenant_id = $1 AND user_id = $2', [team.id, me.id]);
      assert.equal(m.role, 'member');
      const again = await api.post(`/tenants/${team.id}/join`, {}, me);
      assert.equal(again.status, 409);
      assert.equal(again.body.error.code, 'ALREADY_MEMBER');
      const audit = await hub.sql.query(
        `SELECT 1 FROM audit_log WHERE action = 'member.joined_team' AND actor_user_id = $1 AND tenant_id = $2`,
        [me.id, team.id],
      );
      assert.equal(audit.length, 1);
    });
  });

  describe('request policy', () => {
    let ctx: Awaited<ReturnType<typeof teamWith>>;
    let me: TestUser;
    beforeEach(async () => {
      ctx = await teamWith('listed');
      me = await f.user({ name: 'Newcomer' });
    });

    test('a request is 202, mails the owner and admins, and is listed for admins with name, email and message', async () => {
      const res = await api.post(`/tenants/${ctx.team.id}/join`, { message: 'I count swifts' }, me);
      assert.equal(res.status, 202);
      assert.equal(res.body.status, 'requested');
      assert.equal(mailsTo(ctx.owner.email).length, 1);
      assert.equal(mailsTo(ctx.admin.email).length, 1);
      assert.match(mailsTo(ctx.admin.email)[0].text, /I count swifts/);
      assert.equal(mailsTo(me.email).length, 0);
      const again = await api.post(`/tenants/${ctx.team.id}/join`, {}, me);
      assert.equal(again.status, 409);
      assert.equal(again.body.error.code, 'ALREADY_REQUESTED');
      const list = await api.get(`/tenants/${ctx.team.id}/join-requests`, ctx.admin);
      assert.equal(list.status, 200);
      assert.deepEqual(
        list.body.requests.map((r: any) => ({ id: r.id, name: r.name, email: r.email, message: r.message })),
        [{ id: res.body.requestId, name: 'Newcomer', email: me.email, message: 'I count swifts' }],
      );
      const member = await f.member(ctx.team, 'member');
      assert.equal((await api.get(`/tenants/${ctx.team.id}/join-requests`, member)).status, 403);
    });

    test('a message over 500 characters is refused (400)', async () => {
      const res = await api.post(`/tenants/${ctx.team.id}/join`, { message: 'x'.repeat(501) }, me);
      assert.equal(res.status, 400);
      assert.equal((await api.post(`/tenants/${ctx.team.id}/join`, { message: 'x'.repeat(500) }, me)).status, 202);
    });

    test('approve makes the requester a member with the chosen role and mails them', async () => {
      const { body } = await api.post(`/tenants/${ctx.team.id}/join`, {}, me);
      const res = await api.post(`/tenants/${ctx.team.id}/join-requests/${body.requestId}/approve`, { role: 'member' }, ctx.admin);
      assert.equal(res.status, 200, res.text);
      const [m] = await hub.sql.query<any>('SELECT role FROM memberships WHERE tenant_id = $1 AND user_id = $2', [ctx.team.id, me.id]);
      assert.equal(m.role, 'member');
      assert.equal(mailsTo(me.email).length, 1);
      const actions = (
        await hub.sql.query<any>(
          `SELECT action FROM audit_log WHERE tenant_id = $1 AND target_id IN ($2, (SELECT id::text FROM memberships WHERE tenant_id = $1 AND user_id = $3))`,
          [ctx.team.id, body.requestId, me.id],
        )
      )
        .map((r) => r.action)
        .sort();
      assert.deepEqual(actions, ['admin.join_request_approved', 'member.join_requested', 'member.joined_team']);
      const twice = await api.post(`/tenants/${ctx.team.id}/join-requests/${body.requestId}/approve`, {}, ctx.admin);
      assert.equal(twice.status, 409);
      assert.equal(
        (await api.post(`/tenants/${ctx.team.id}/join-requests/${body.requestId}/approve`, { role: 'admin' }, ctx.admin)).status,
        400,
      );
    });

    test('approve without a role uses the team default_join_role (viewer)', async () => {
      const { body } = await api.post(`/tenants/${ctx.team.id}/join`, {}, me);
      await api.post(`/tenants/${ctx.team.id}/join-requests/${body.requestId}/approve`, undefined, ctx.owner);
      const [m] = await hub.sql.query<any>('SELECT role FROM memberships WHERE tenant_id = $1 AND user_id = $2', [ctx.team.id, me.id]);
      assert.equal(m.role, 'viewer');
    });

    test('deny sends no mail; with block the person can no longer see or ask to join, until the block is lifted', async () => {
      const { body } = await api.post(`/tenants/${ctx.team.id}/join`, {}, me);
      const before = hub.infra.mail.recorded().length;
      const res = await api.post(`/tenants/${ctx.team.id}/join-requests/${body.requestId}/deny`, { block: true }, ctx.admin);
      assert.equal(res.status, 200);
      assert.equal(hub.infra.mail.recorded().length, before, 'no mail on deny');
      assert.equal((await api.get(`/tenants/${ctx.team.id}/join`, me)).status, 404);
      assert.equal((await api.post(`/tenants/${ctx.team.id}/join`, {}, me)).status, 404);
      assert.ok(!(await api.get('/tenants/directory', me)).body.teams.some((t: any) => t.id === ctx.team.id));
      const blocks = await api.get(`/tenants/${ctx.team.id}/blocks`, ctx.admin);
      assert.deepEqual(
        blocks.body.blocks.map((b: any) => b.userId),
        [me.id],
      );
      const lift = await api.del(`/tenants/${ctx.team.id}/blocks/${me.id}`, ctx.admin);
      assert.equal(lift.status, 204);
      assert.equal((await api.del(`/tenants/${ctx.team.id}/blocks/${me.id}`, ctx.admin)).status, 404);
      assert.equal((await api.post(`/tenants/${ctx.team.id}/join`, {}, me)).status, 202);
      const audit = await hub.sql.query<any>(
        `SELECT action FROM audit_log WHERE tenant_id = $1 AND action IN ('admin.join_request_denied', 'admin.member_unblocked')`,
        [ctx.team.id],
      );
      assert.equal(audit.length, 2);
    });

    test('deny without block lets the person ask again', async () => {
      const { body } = await api.post(`/tenants/${ctx.team.id}/join`, {}, me);
      await api.post(`/tenants/${ctx.team.id}/join-requests/${body.requestId}/deny`, {}, ctx.admin);
      assert.equal((await api.post(`/tenants/${ctx.team.id}/join`, {}, me)).status, 202);
    });

    test('withdraw removes the own pending request', async () => {
      await api.post(`/tenants/${ctx.team.id}/join`, {}, me);
      assert.equal((await api.del(`/tenants/${ctx.team.id}/join`, me)).status, 204);
      assert.equal((await api.get(`/tenants/${ctx.team.id}/join-requests`, ctx.admin)).body.requests.length, 0);
      assert.equal((await api.del(`/tenants/${ctx.team.id}/join`, me)).status, 404);
      const audit = await hub.sql.query(`SELECT 1 FROM audit_log WHERE action = 'member.join_request_withdrawn' AND actor_user_id = $1`, [
        me.id,
      ]);
      assert.equal(audit.length, 1);
    });

    test('an admin invite lifts a block, by address and for whoever uses it', async () => {
      const { body } = await api.post(`/tenants/${ctx.team.id}/join`, {}, me);
      await api.post(`/tenants/${ctx.team.id}/join-requests/${body.requestId}/deny`, { block: true }, ctx.admin);
      await api.post('/auth/invites', { tenantId: ctx.team.id, role: 'viewer', email: me.email }, ctx.admin);
      assert.equal((await api.get(`/tenants/${ctx.team.id}/blocks`, ctx.admin)).body.blocks.length, 0);

      const other = await f.user();
      const r2 = await api.post(`/tenants/${ctx.team.id}/join`, {}, other);
      await api.post(`/tenants/${ctx.team.id}/join-requests/${r2.body.requestId}/deny`, { block: true }, ctx.admin);
      const invite = await api.post('/auth/invites', { tenantId: ctx.team.id, role: 'member' }, ctx.admin);
      assert.equal((await api.post('/auth/invites/accept', { token: invite.body.token }, other)).status, 200);
      assert.equal((await api.get(`/tenants/${ctx.team.id}/blocks`, ctx.admin)).body.blocks.length, 0);
    });
  });

  test('join requests are rate-limited per person (429)', async () => {
    const me = await f.user();
    let last = 0;
    for (let i = 0; i < 11; i++) {
      const { team } = await teamWith('listed');
      last = (await api.post(`/tenants/${team.id}/join`, {}, me)).status;
      if (i < 10) assert.equal(last, 202);
    }
    assert.equal(last, 429);
  });

  test('API keys cannot join (403)', async () => {
    const { team, owner } = await teamWith('open');
    const other = await f.team(await f.user());
    const key = await f
      .apiKey(
        other,
        (await hub.sql.one<any>('SELECT u.id FROM users u JOIN memberships m ON m.user_id = u.id WHERE m.tenant_id = $1', [other.id])) &&
          owner,
        'member',
      )
      .catch(() => null);
    void key;
    const myKey = await f.apiKey(team, owner, 'viewer');
    assert.equal((await api.post(`/tenants/${team.id}/join`, {}, { token: myKey.token })).status, 403);
  });
});
