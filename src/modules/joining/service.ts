import type { Db } from '../../infra/db/index.ts';
import type { Kv } from '../../infra/kv/index.ts';
import type { Mailer } from '../../infra/mail/index.ts';
import type { Clock } from '../../core/clock.ts';
import type { Actor } from '../../core/actor.ts';
import type { AuditWriter } from '../audit/writer.ts';
import { newId } from '../../core/crypto.ts';
import { AppError, conflict, notFound, tooManyRequests } from '../../core/errors.ts';
import type { SettingsService } from '../settings/service.ts';
import type { TeamsService } from '../teams/service.ts';
import { createJoiningRepo, type TeamCard } from './repo.ts';

export const JOIN_ATTEMPTS_PER_HOUR = 10;

const presentCard = (c: TeamCard) => ({
  id: c.id,
  name: c.name,
  description: c.description,
  slug: c.slug,
  since: new Date(c.since).toISOString(),
  policy: c.policy,
  memberCount: c.memberCount,
  deviceCount: c.deviceCount,
  is_member: c.isMember,
  has_pending: c.hasPending,
});

// One answer for "no such team", "invite only", "you are blocked" and "directory off":
// outsiders must not learn which.
const unreachable = () => notFound('Team or item not found');

export function createJoiningService(deps: {
  db: Db;
  clock: Clock;
  kv: Kv;
  mail: Mailer;
  audit: AuditWriter;
  teams: Pick<TeamsService, 'join'>;
  settings: Pick<SettingsService, 'hubSetting' | 'teamSetting'>;
  publicUrl: string;
}) {
  const { db, clock, kv, mail, audit, teams, settings } = deps;
  const repo = createJoiningRepo(db);

  async function joinableCard(actor: Actor, tenantId: string) {
    if (!(await settings.hubSetting('allow_public_teams'))) throw unreachable();
    const card = await repo.card(actor.userId!, tenantId);
    if (!card || card.policy === 'invite_only') throw unreachable();
    return card;
  }

  return {
    async directory(actor: Actor, search: string | null) {
      if (!(await settings.hubSetting('allow_public_teams'))) return { enabled: false, teams: [] };
      return { enabled: true, teams: (await repo.directory(actor.userId!, search)).map(presentCard) };
    },

    card: async (actor: Actor, tenantId: string) => presentCard(await joinableCard(actor, tenantId)),

    async requestToJoin(actor: Actor, tenantId: string, message: string) {
      const card = await joinableCard(actor, tenantId);
      // Counted in a fixed hour window per person: enough for honest use, a brake on spam.
      const attempts = await kv.incr(`join:${actor.userId}`, 3600);
      if (attempts > JOIN_ATTEMPTS_PER_HOUR) throw tooManyRequests('Too many join requests; try again later', 3600);
      if (card.isMember) throw conflict('You are already a member of this team', 'ALREADY_MEMBER');
      if (card.hasPending) throw conflict('Your request to join is already waiting', 'ALREADY_REQUESTED');

      if (card.policy === 'open') {
        const role = await settings.teamSetting(tenantId, 'default_join_role');
        const membershipId = await db.tx(async (tx) => {
          const id = await teams.join(tx, tenantId, actor.userId!, role);
          await audit.write(tx, actor, {
            action: 'member.joined_team',
            tenantId,
            targetType: 'membership',
            targetId: id,
            details: { via: 'open', role },
          });
          return id;
        });
        return { status: 'joined' as const, tenantId, role, membershipId };
      }

      const requestId = newId();
      await db.tx(async (tx) => {
        await repo.insertRequest(tx, { id: requestId, tenantId, userId: actor.userId!, message, at: clock.now() });
        await audit.write(tx, actor, { action: 'member.join_requested', tenantId, targetType: 'join_request', targetId: requestId });
      });
      const who = actor.person?.name ?? actor.email ?? 'Someone';
      for (const admin of await repo.adminEmails(tenantId)) {
        await mail.send({
          to: admin.email,
          subject: `${who} asks to join ${card.name}`,
          text: `${who} (${actor.email}) asks to join ${card.name} on Chorus.${message ? `\n\nTheir message:\n${message}` : ''}\n\nReview the request: ${deps.publicUrl}/teams/${tenantId}/join-requests`,
        });
      }
      return { status: 'requested' as const, tenantId, requestId };
    },

    async withdraw(actor: Actor, tenantId: string) {
      const pending = await repo.pendingOf(tenantId, actor.userId!);
      if (!pending) throw new AppError(404, 'NO_PENDING_REQUEST', 'You have no pending request for this team');
      await db.tx(async (tx) => {
        await repo.decide(tx, pending.id, 'withdrawn', clock.now(), actor.userId);
        await audit.write(tx, actor, {
          action: 'member.join_request_withdrawn',
          tenantId,
          targetType: 'join_request',
          targetId: pending.id,
        });
      });
    },

    listRequests: async (tenantId: string) =>
      (await repo.listPending(tenantId)).map((r) => ({
        id: r.id,
        userId: r.userId,
        name: r.name,
        email: r.email,
        message: r.message,
        createdAt: new Date(r.createdAt).toISOString(),
      })),

    async approve(actor: Actor, tenantId: string, requestId: string, role?: 'viewer' | 'member') {
      const granted = role ?? (await settings.teamSetting(tenantId, 'default_join_role'));
      const request = await db.tx(async (tx) => {
        const r = await repo.find(tenantId, requestId, tx);
        if (!r) throw new AppError(404, 'NO_SUCH_REQUEST', 'No such join request');
        if (r.status !== 'pending') throw conflict(`This request was already ${r.status}`, 'NOT_PENDING');
        await repo.decide(tx, r.id, 'approved', clock.now(), actor.userId, granted);
        const membershipId = await teams.join(tx, tenantId, r.userId, granted);
        await audit.write(tx, actor, {
          action: 'admin.join_request_approved',
          targetType: 'join_request',
          targetId: r.id,
          details: { userId: r.userId, role: granted },
        });
        await audit.write(tx, actor, {
          action: 'member.joined_team',
          targetType: 'membership',
          targetId: membershipId,
          details: { via: 'request', userId: r.userId, role: granted },
        });
        return r;
      });
      const team = await repo.card(request.userId, tenantId);
      await mail.send({
        to: request.email,
        subject: `Welcome to ${team?.name ?? 'the team'}`,
        text: `Your request to join ${team?.name ?? 'the team'} on Chorus was approved. You joined as ${granted}.\n\n${deps.publicUrl}`,
      });
      return { id: request.id, status: 'approved', role: granted, userId: request.userId };
    },

    /** Denial sends no mail; with block the person can no longer see or ask to join the team. */
    async deny(actor: Actor, tenantId: string, requestId: string, block: boolean) {
      return db.tx(async (tx) => {
        const r = await repo.find(tenantId, requestId, tx);
        if (!r) throw new AppError(404, 'NO_SUCH_REQUEST', 'No such join request');
        if (r.status !== 'pending') throw conflict(`This request was already ${r.status}`, 'NOT_PENDING');
        const now = clock.now();
        await repo.decide(tx, r.id, 'denied', now, actor.userId);
        if (block) await repo.block(tx, tenantId, r.userId, now, actor.userId);
        await audit.write(tx, actor, {
          action: 'admin.join_request_denied',
          targetType: 'join_request',
          targetId: r.id,
          details: { userId: r.userId, block },
        });
        return { id: r.id, status: 'denied', blocked: block };
      });
    },

    listBlocks: async (tenantId: string) =>
      (await repo.blocks(tenantId)).map((b) => ({ ...b, blockedAt: new Date(b.blockedAt).toISOString() })),

    async unblock(actor: Actor, tenantId: string, userId: string) {
      await db.tx(async (tx) => {
        if (!(await repo.unblock(tx, tenantId, userId))) throw new AppError(404, 'NOT_BLOCKED', 'This person is not blocked');
        await audit.write(tx, actor, { action: 'admin.member_unblocked', targetType: 'user', targetId: userId });
      });
    },

    /** An admin's invite lifts a block: by the invited address, and for whoever uses the invite. */
    liftBlockByEmail: (tx: Db, tenantId: string, email: string | null) =>
      email ? repo.unblockEmail(tx, tenantId, email).then(() => {}) : Promise.resolve(),
    liftBlock: (tx: Db, tenantId: string, userId: string) => repo.unblock(tx, tenantId, userId).then(() => {}),
  };
}

export type JoiningService = ReturnType<typeof createJoiningService>;
