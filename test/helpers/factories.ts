/**
 * Test factories (in the manner of Outline's): they create rows on demand so a test names
 * only what it cares about. People get a real session and a real JWT, as login would give.
 */
import crypto from 'node:crypto';
import type { Hub } from './hub.ts';
import { INTERNAL_KEY } from './hub.ts';
import { client, type Credential } from './http.ts';
import { hashPassword } from '../../src/modules/users/passwords.ts';
import { createUsersRepo } from '../../src/modules/users/repo.ts';
import { createTeamsRepo } from '../../src/modules/teams/repo.ts';
import { newId } from '../../src/core/crypto.ts';
import type { Role } from '../../src/core/actor.ts';

export const PASSWORD = 'correct-horse-battery';
let passwordHash: Promise<string> | null = null;

export interface TestUser extends Credential {
  id: string;
  email: string;
  name: string;
  password: string;
  token: string;
  sessionId: string;
}

export interface TestTeam {
  id: string;
  name: string;
  slug: string;
}

export function factories(hub: Hub) {
  const api = client(hub.url);
  const users = createUsersRepo(hub.infra.db);
  const teams = createTeamsRepo(hub.infra.db);
  const uniq = () => crypto.randomBytes(4).toString('hex');

  async function signIn(id: string): Promise<{ token: string; sessionId: string }> {
    const session = await hub.infra.db.tx((tx) => hub.services.auth.issueSession(tx, id, '127.0.0.1', 'factory'));
    return { token: hub.services.jwt.sign({ sub: id, sid: session.sessionId }), sessionId: session.sessionId };
  }

  const f = {
    internal: { token: INTERNAL_KEY } as Credential,

    async user(opts: { admin?: boolean; name?: string; email?: string } = {}): Promise<TestUser> {
      passwordHash ??= hashPassword(PASSWORD);
      const id = newId();
      const name = opts.name ?? `Person ${uniq()}`;
      const email = opts.email ?? `p-${uniq()}@example.org`;
      await hub.infra.db.tx((tx) =>
        users.insert(tx, { id, email, name, passwordHash: '', isAdmin: opts.admin ?? false, at: hub.clock.now() }),
      );
      await hub.infra.db.query('UPDATE users SET password_hash = $2 WHERE id = $1', [id, await passwordHash]);
      return { id, email, name, password: PASSWORD, ...(await signIn(id)) };
    },

    /** A team created over HTTP by its owner. */
    async team(owner: TestUser, name = `Team ${uniq()}`): Promise<TestTeam> {
      const res = await api.post('/auth/create-tenant', { name }, owner);
      if (res.status !== 201) throw new Error(`team creation failed: ${res.status} ${res.text}`);
      return res.body;
    },

    async addMember(team: TestTeam, user: TestUser, role: Role): Promise<string> {
      const id = newId();
      await hub.infra.db.tx((tx) => teams.insertMembership(tx, { id, tenantId: team.id, userId: user.id, role, at: hub.clock.now() }));
      return id;
    },

    async member(team: TestTeam, role: Role, opts: { name?: string } = {}): Promise<TestUser & { membershipId: string }> {
      const u = await f.user(opts);
      return { ...u, membershipId: await f.addMember(team, u, role) };
    },

    async apiKey(
      team: TestTeam,
      creator: TestUser,
      role: 'viewer' | 'member' | 'admin' = 'member',
    ): Promise<{ id: string; token: string }> {
      const res = await api.post('/auth/api-keys', { tenantId: team.id, name: `key ${uniq()}`, role }, creator);
      if (res.status !== 201) throw new Error(`api key creation failed: ${res.status} ${res.text}`);
      return { id: res.body.id, token: res.body.key };
    },

    /** One team with every role, a second team, a hub admin and a team key. */
    async world() {
      const owner = await f.user({ name: 'Olive Owner' });
      const team = await f.team(owner);
      const ownerMembership = (
        await hub.infra.db.one<{ id: string }>('SELECT id FROM memberships WHERE tenant_id = $1 AND user_id = $2', [team.id, owner.id])
      ).id;
      const admin = await f.member(team, 'admin', { name: 'Ada Admin' });
      const member = await f.member(team, 'member', { name: 'Mel Member' });
      const viewer = await f.member(team, 'viewer', { name: 'Vic Viewer' });
      const otherOwner = await f.user({ name: 'Otto Other' });
      const otherTeam = await f.team(otherOwner);
      const hubAdmin = await f.user({ admin: true, name: 'Hub Admin' });
      const key = await f.apiKey(team, owner, 'member');
      return { team, owner: { ...owner, membershipId: ownerMembership }, admin, member, viewer, otherTeam, otherOwner, hubAdmin, key };
    },
  };
  return f;
}

/** A satellite row for tests that need one before satellites can be registered over HTTP. */
export async function makeSatellite(
  hub: Hub,
  team: TestTeam,
  registeredBy: TestUser | null,
  name = `Sat ${crypto.randomBytes(3).toString('hex')}`,
) {
  const id = newId();
  const at = hub.clock.now();
  await hub.infra.db.query(
    `INSERT INTO satellites (id, tenant_id, name, registered_by, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $5)`,
    [id, team.id, name, registeredBy?.id ?? null, at],
  );
  return { id, name, tenantId: team.id };
}

/** A satellite-scoped API key, as registration will mint one. */
export async function makeSatelliteKey(hub: Hub, satellite: { id: string; tenantId: string }): Promise<string> {
  const { mintKey } = await import('../../src/modules/api-keys/service.ts');
  const { key, hash, prefix } = mintKey();
  await hub.infra.db.query(
    `INSERT INTO api_keys (id, tenant_id, satellite_id, name, role, key_hash, key_prefix, created_at) VALUES ($1, $2, $3, 'satellite', 'member', $4, $5, $6)`,
    [newId(), satellite.tenantId, satellite.id, hash, prefix, hub.clock.now()],
  );
  return key;
}
