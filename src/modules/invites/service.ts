import type { Db } from '../../infra/db/index.ts';
import type { Clock } from '../../core/clock.ts';
import type { Actor, Role, TeamActor } from '../../core/actor.ts';
import type { AuditWriter } from '../audit/writer.ts';
import { addSeconds } from '../../core/clock.ts';
import { newId, randomHex, sha256Hex } from '../../core/crypto.ts';
import { AppError, badRequest, notFound } from '../../core/errors.ts';
import { spendOrRefuse, type RateLimit } from '../../core/rate-limit.ts';
import type { TeamsService } from '../teams/service.ts';
import { createInvitesRepo, type InviteRow } from './repo.ts';

export const INVITE_TTL_SECONDS = 7 * 24 * 3600;

export const presentInvite = (i: InviteRow) => ({
  id: i.id,
  tenantId: i.tenantId,
  role: i.role,
  email: i.email,
  createdBy: i.createdBy,
  createdByName: i.createdByName,
  createdAt: new Date(i.createdAt).toISOString(),
  expiresAt: new Date(i.expiresAt).toISOString(),
});

/** Hook run when an admin invites: the join-request module lifts blocks here. */
export type InviteCreatedHandler = (tx: Db, tenantId: string, email: string | null) => Promise<void>;

export function createInvitesService(deps: {
  /** Invite acceptances per person. */
  acceptLimit: RateLimit;
  db: Db;
  clock: Clock;
  audit: AuditWriter;
  teams: Pick<TeamsService, 'join' | 'teamName'>;
  publicUrl: string;
  onInviteCreated: InviteCreatedHandler[];
  /** Run when a person uses an invite (lifts their block in that team). */
  onInviteUsed: Array<(tx: Db, tenantId: string, userId: string) => Promise<void>>;
}) {
  const { db, clock, audit, teams, publicUrl } = deps;
  const repo = createInvitesRepo(db);

  /** Checks and consumes a raw invite token inside tx; the caller joins the person. */
  async function consume(tx: Db, token: string, userId: string): Promise<InviteRow> {
    const invite = await repo.findByTokenHash(sha256Hex(token), tx);
    if (!invite || invite.revokedAt) throw badRequest('This invite link is not valid', 'INVALID_INVITE');
    if (invite.usedAt) throw badRequest('This invite link has already been used', 'INVITE_USED');
    if (new Date(invite.expiresAt) <= clock.now()) throw badRequest('This invite link has expired', 'INVITE_EXPIRED');
    if (!(await repo.markUsed(tx, invite.id, userId, clock.now()))) {
      throw badRequest('This invite link has already been used', 'INVITE_USED');
    }
    for (const handler of deps.onInviteUsed) await handler(tx, invite.tenantId, userId);
    return invite;
  }

  return {
    /** The guard's team resolver for `invite` resources. */
    teamOfInvite: repo.teamOfInvite,

    async create(actor: Actor, tenantId: string, role: Exclude<Role, 'owner'>, email: string | null) {
      const token = randomHex(32);
      const now = clock.now();
      const id = newId();
      const expiresAt = addSeconds(now, INVITE_TTL_SECONDS);
      await db.tx(async (tx) => {
        await repo.insert(tx, { id, tenantId, role, tokenHash: sha256Hex(token), email, createdBy: actor.userId, at: now, expiresAt });
        for (const handler of deps.onInviteCreated) await handler(tx, tenantId, email);
        await audit.write(tx, actor, { action: 'admin.invite_created', tenantId, targetType: 'invite', targetId: id, details: { role } });
      });
      return { id, token, url: `${publicUrl}/register?invite=${token}`, role, expiresAt: expiresAt.toISOString() };
    },

    listPending: async (tenantId: string) => (await repo.listPending(tenantId, clock.now())).map(presentInvite),

    async revoke(actor: TeamActor, id: string) {
      const tenantId = actor.teamId;
      const invite = await repo.find(tenantId, id);
      if (!invite || invite.revokedAt) throw notFound('No such invite');
      if (invite.usedAt) throw new AppError(409, 'INVITE_USED', 'This invite has already been used');
      await db.tx(async (tx) => {
        await repo.revoke(tx, tenantId, id, clock.now());
        await audit.write(tx, actor, { action: 'admin.invite_revoked', tenantId, targetType: 'invite', targetId: id });
      });
    },

    consume,

    /**
     * GET /auth/invites/summary/:token (issue 23): what an invite link offers, so the page can name
     * the team, the inviter and the role before anyone signs in. The 256-bit token is the proof, as
     * for registering with it. Unknown, used, revoked and expired links answer the same 404; never
     * the inviter's email nor the address the invite was meant for.
     */
    async summary(token: string) {
      const invite = await repo.findByTokenHash(sha256Hex(token));
      if (!invite || invite.revokedAt || invite.usedAt || new Date(invite.expiresAt) <= clock.now()) {
        throw notFound('This invite link is not valid any more');
      }
      return {
        teamName: (await teams.teamName(invite.tenantId)) ?? '',
        inviterName: invite.createdByName,
        role: invite.role,
        expiresAt: new Date(invite.expiresAt).toISOString(),
      };
    },

    /** A signed-in person follows an invite link: they join with the invite's role. */
    async accept(actor: Actor, token: string) {
      await spendOrRefuse(deps.acceptLimit, actor.userId!, 'Too many invite links tried; try again later');
      return db.tx(async (tx) => {
        const invite = await consume(tx, token, actor.userId!);
        const membershipId = await teams.join(tx, invite.tenantId, actor.userId!, invite.role);
        await audit.write(tx, actor, {
          action: 'member.joined_team',
          tenantId: invite.tenantId,
          targetType: 'membership',
          targetId: membershipId,
          details: { via: 'invite', inviteId: invite.id, role: invite.role },
        });
        return { tenantId: invite.tenantId, role: invite.role, membershipId };
      });
    },
  };
}

export type InvitesService = ReturnType<typeof createInvitesService>;
