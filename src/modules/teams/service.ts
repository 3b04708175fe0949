import type { Db } from '../../infra/db/index.ts';
import type { Clock } from '../../core/clock.ts';
import type { Actor, Role, TeamActor } from '../../core/actor.ts';
import type { AuditWriter } from '../audit/writer.ts';
import { newId } from '../../core/crypto.ts';
import { AppError, badRequest, conflict, forbidden, notFound } from '../../core/errors.ts';
import type { SettingsService } from '../settings/service.ts';
import { createTeamsRepo, type TeamRow, type MemberRow } from './repo.ts';

/** Work done when a person leaves a team (their keys, later their devices), inside the same transaction. */
export type DepartureHandler = (tx: Db, tenantId: string, userId: string, opts: { keepDevices: boolean }) => Promise<void>;

export interface TeamView {
  id: string;
  name: string;
  slug: string;
  description: string;
  since: string;
  role: Role | null;
}

export const presentTeam = (t: TeamRow, role: Role | null): TeamView => ({
  id: t.id,
  name: t.name,
  slug: t.slug,
  description: t.description,
  since: new Date(t.createdAt).toISOString(),
  role,
});

export const presentMember = (m: MemberRow) => ({
  id: m.id,
  userId: m.userId,
  name: m.name,
  email: m.email,
  role: m.role,
  joinedAt: new Date(m.createdAt).toISOString(),
});

export function slugify(name: string): string {
  const s = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 48)
    .replace(/-+$/, '');
  return s || 'team';
}

export function createTeamsService(deps: {
  db: Db;
  clock: Clock;
  audit: AuditWriter;
  settings: Pick<SettingsService, 'hubSetting'>;
  departureHandlers: DepartureHandler[];
}) {
  const { db, clock, audit, settings, departureHandlers } = deps;
  const repo = createTeamsRepo(db);

  async function uniqueSlug(tx: Db, wanted: string | undefined, name: string): Promise<string> {
    if (wanted) {
      if (await repo.slugTaken(wanted, tx)) throw conflict(`The address "${wanted}" is taken`, 'SLUG_TAKEN');
      return wanted;
    }
    const base = slugify(name);
    for (let i = 1; ; i++) {
      const candidate = i === 1 ? base : `${base}-${i}`;
      if (!(await repo.slugTaken(candidate, tx))) return candidate;
    }
  }

  async function requireMember(tx: Db, tenantId: string, membershipId: string): Promise<MemberRow> {
    const m = await repo.findMembership(tenantId, membershipId, tx);
    if (!m) throw notFound('No such member in this team');
    return m;
  }

  async function depart(tx: Db, tenantId: string, userId: string, keepDevices: boolean) {
    for (const handler of departureHandlers) await handler(tx, tenantId, userId, { keepDevices });
  }

  return {
    async createTeam(actor: Actor, input: { name: string; description?: string; slug?: string }): Promise<TeamView> {
      if (!actor.isPlatformAdmin && !(await settings.hubSetting('allow_tenant_creation'))) {
        throw forbidden('Creating teams is switched off on this hub', 'TENANT_CREATION_DISABLED');
      }
      const now = clock.now();
      const team: TeamRow = {
        id: newId(),
        name: input.name.trim(),
        slug: '',
        description: input.description?.trim() ?? '',
        createdAt: now,
      };
      await db.tx(async (tx) => {
        team.slug = await uniqueSlug(tx, input.slug, team.name);
        await repo.insertTeam(tx, team);
        await repo.insertMembership(tx, { id: newId(), tenantId: team.id, userId: actor.userId!, role: 'owner', at: now });
        await audit.write(tx, actor, {
          action: 'admin.tenant_created',
          tenantId: team.id,
          targetType: 'tenant',
          targetId: team.id,
          details: { name: team.name, slug: team.slug },
        });
      });
      return presentTeam(team, 'owner');
    },

    /** The caller's teams; hub admins may ask for every team. */
    async listTeams(actor: Actor, all: boolean): Promise<TeamView[]> {
      if (actor.kind === 'api_key') {
        const team = await repo.findTeam(actor.tenantId!);
        return team ? [presentTeam(team, actor.role)] : [];
      }
      const roles = new Map(actor.memberships.map((m) => [m.tenantId, m.role]));
      const teams = await repo.listTeams(all && actor.isPlatformAdmin ? null : [...roles.keys()]);
      return teams.map((t) => presentTeam(t, roles.get(t.id) ?? null));
    },

    async leave(actor: Actor, tenantId: string): Promise<void> {
      await db.tx(async (tx) => {
        const m = await repo.findMembershipOf(tenantId, actor.userId!, tx);
        if (!m) throw new AppError(404, 'NOT_A_MEMBER', 'You are not a member of this team');
        if (m.role === 'owner') {
          throw badRequest('The owner cannot leave; transfer ownership first', 'OWNER_CANNOT_LEAVE');
        }
        await repo.deleteMembership(tx, tenantId, m.id);
        await depart(tx, tenantId, m.userId, false);
        await audit.write(tx, actor, { action: 'member.left_team', tenantId, targetType: 'membership', targetId: m.id });
      });
    },

    /** Spec: team members, hub admins excluded. */
    listMembers: (tenantId: string) => repo.listMembers(tenantId).then((rows) => rows.filter((m) => !m.isAdmin).map(presentMember)),

    /** Spec: admins may change roles, but an admin's role is the owner's to change; the owner's never changes here. */
    async changeRole(actor: TeamActor, membershipId: string, role: Exclude<Role, 'owner'>) {
      const tenantId = actor.teamId;
      return db.tx(async (tx) => {
        const m = await requireMember(tx, tenantId, membershipId);
        if (m.role === 'owner') throw badRequest("The owner's role cannot change; transfer ownership instead", 'OWNER_ROLE_FIXED');
        if (m.role === 'admin' && actor.teamRole !== 'owner') {
          throw forbidden("Only the owner may change an admin's role", 'OWNER_ONLY');
        }
        if (m.role !== role) {
          await repo.setRole(tx, tenantId, m.id, role);
          await audit.write(tx, actor, {
            action: 'admin.member_role_changed',
            targetType: 'membership',
            targetId: m.id,
            details: { userId: m.userId, from: m.role, to: role },
          });
        }
        return presentMember({ ...m, role });
      });
    },

    async removeMember(actor: TeamActor, membershipId: string) {
      const tenantId = actor.teamId;
      await db.tx(async (tx) => {
        const m = await requireMember(tx, tenantId, membershipId);
        if (m.role === 'owner') throw badRequest('The owner cannot be removed', 'OWNER_NOT_REMOVABLE');
        if (m.role === 'admin' && actor.teamRole !== 'owner') {
          throw forbidden('Only the owner may remove an admin', 'OWNER_ONLY');
        }
        await repo.deleteMembership(tx, tenantId, m.id);
        await depart(tx, tenantId, m.userId, false);
        await audit.write(tx, actor, {
          action: 'admin.member_removed',
          targetType: 'membership',
          targetId: m.id,
          details: { userId: m.userId, role: m.role },
        });
      });
    },

    /** One atomic step: the previous owner becomes admin, the member becomes owner. */
    async transferOwnership(actor: TeamActor, membershipId: string) {
      const tenantId = actor.teamId;
      await db.tx(async (tx) => {
        const target = await requireMember(tx, tenantId, membershipId);
        if (target.role === 'owner') throw badRequest('This member already owns the team', 'ALREADY_OWNER');
        const owner = await repo.findOwner(tenantId, tx);
        if (owner) await repo.setRole(tx, tenantId, owner.id, 'admin');
        await repo.setRole(tx, tenantId, target.id, 'owner');
        await audit.write(tx, actor, {
          action: 'admin.ownership_transferred',
          targetType: 'membership',
          targetId: target.id,
          details: { from: owner?.userId ?? null, to: target.userId },
        });
      });
    },

    async addUser(actor: Actor, userId: string, tenantId: string, role: Role) {
      return db.tx(async (tx) => {
        if (!(await repo.findTeam(tenantId, tx))) throw notFound('No such team');
        if (await repo.findMembershipOf(tenantId, userId, tx)) throw conflict('Already a member of this team', 'ALREADY_MEMBER');
        if (role === 'owner' && (await repo.findOwner(tenantId, tx))) {
          throw conflict('The team already has an owner; transfer ownership instead', 'TEAM_HAS_OWNER');
        }
        const id = newId();
        await repo.insertMembership(tx, { id, tenantId, userId, role, at: clock.now() });
        await audit.write(tx, actor, {
          action: 'admin.user_added_to_tenant',
          tenantId,
          targetType: 'user',
          targetId: userId,
          details: { role },
        });
        return { id, tenantId, userId, role };
      });
    },

    async removeUser(actor: Actor, userId: string, tenantId: string, keepDevices: boolean) {
      await db.tx(async (tx) => {
        const m = await repo.findMembershipOf(tenantId, userId, tx);
        if (!m) throw new AppError(404, 'NOT_A_MEMBER', 'This person is not a member of that team');
        if (m.role === 'owner') throw badRequest('The owner cannot be removed; transfer ownership first', 'OWNER_NOT_REMOVABLE');
        await repo.deleteMembership(tx, tenantId, m.id);
        await depart(tx, tenantId, userId, keepDevices);
        await audit.write(tx, actor, {
          action: 'admin.user_removed_from_tenant',
          tenantId,
          targetType: 'user',
          targetId: userId,
          details: { devices: keepDevices ? 'keep' : 'disconnect' },
        });
      });
    },

    /** Joins a person to a team inside the caller's transaction (invites, join requests). */
    async join(tx: Db, tenantId: string, userId: string, role: Role): Promise<string> {
      if (await repo.findMembershipOf(tenantId, userId, tx)) throw conflict('Already a member of this team', 'ALREADY_MEMBER');
      const id = newId();
      await repo.insertMembership(tx, { id, tenantId, userId, role, at: clock.now() });
      return id;
    },

    /** Used by account deletion: every team the person belongs to, as if they left. */
    departAll: depart,

    /** The guard's team resolver for `membership` resources. */
    teamOfMembership: repo.teamOfMembership,

    teamExists: repo.teamExists,
    /** A team's name (files and messages that name it), or null. */
    teamName: repo.nameOf,
  };
}

export type TeamsService = ReturnType<typeof createTeamsService>;
