import type { Db } from '../../infra/db/index.ts';
import type { Clock } from '../../core/clock.ts';
import type { Actor } from '../../core/actor.ts';
import type { AuditWriter } from '../audit/writer.ts';
import { newId, randomHex } from '../../core/crypto.ts';
import { badRequest, conflict, forbidden, notFound } from '../../core/errors.ts';
import type { AuditLogService } from '../audit/service.ts';
import type { SettingsService } from '../settings/service.ts';
import type { TeamsService } from '../teams/service.ts';
import { createUsersRepo, type UserRow } from './repo.ts';
import type { MailMessage } from '../../infra/mail/index.ts';

export type { UserRow };

/** What ending or re-securing an account needs of the auth module (its session store is one). */
export interface AccountSessions {
  revokeUserSessions(tx: Db, userId: string, at: Date, exceptSessionId?: string | null): Promise<unknown>;
  forgetEmail(tx: Db, email: string): Promise<unknown>;
}
import { checkPasswordRule, hashPassword, verifyPassword } from './passwords.ts';
import { presentAdminUser, presentUser } from './schemas.ts';

export interface MfaSummary {
  enabled: boolean;
  enrolledAt: string | null;
  backupCodesRemaining: number;
  enrollmentRequired: boolean;
  available: boolean;
  passkeys: unknown[];
  rememberedDevices: unknown[];
}

/** What a profile update needs of the email-change module. */
export interface EmailChanges {
  pending(userId: string): Promise<{ newEmail: string; expiresAt: string } | null>;
  request(
    tx: Db,
    actor: Actor,
    user: UserRow,
    newEmail: string,
  ): Promise<{ change: { newEmail: string; expiresAt: string }; mails: MailMessage[] }>;
  send(mails: MailMessage[]): Promise<void>;
}

/** Keys and the internal key have no account, so no second factor. */
export const NO_MFA: MfaSummary = {
  enabled: false,
  enrolledAt: null,
  backupCodesRemaining: 0,
  enrollmentRequired: false,
  available: false,
  passkeys: [],
  rememberedDevices: [],
};

/**
 * The account rows sign-in and MFA read and write (the auth and mfa modules): built first, so
 * the people services stack up accounts -> sessions -> mfa -> auth -> users without a loop.
 */
export function createUserAccounts(deps: { db: Db }) {
  const users = createUsersRepo(deps.db);
  return {
    findById: users.findById,
    findByEmail: users.findByEmail,
    insert: users.insert,
    update: users.update,
    recordFailedLogin: users.recordFailedLogin,
    claimPasswordCheck: users.claimPasswordCheck,
    releasePasswordCheck: users.releasePasswordCheck,
  };
}

export type UserAccounts = ReturnType<typeof createUserAccounts>;

export function createUsersService(deps: {
  db: Db;
  clock: Clock;
  audit: AuditWriter;
  sessions: AccountSessions;
  auditLog: Pick<AuditLogService, 'eraseUser'>;
  teams: Pick<TeamsService, 'departAll'>;
  settings: Pick<SettingsService, 'resolvePreferences' | 'deleteScope' | 'hubSetting'>;
  /** The MFA module's summary of a person's factors (GET /auth/me `mfa`). */
  mfa?: { summary(userId: string, mustEnrol: boolean): Promise<MfaSummary> };
  /** Address changes wait for a link to the new address (the email-change module). */
  emailChanges: EmailChanges;
}) {
  const { db, clock, audit, sessions, auditLog, teams, settings } = deps;
  const users = createUsersRepo(db);

  async function requireUser(id: string, tx: Db = db): Promise<UserRow> {
    const u = await users.findById(id, tx);
    if (!u) throw notFound('No such user');
    return u;
  }

  /**
   * Erasure shared by self-deletion and admin deletion: memberships end as if the person
   * left each team (keys revoked, devices released and disconnected), then the row goes and
   * the audit log forgets the person's email and IPs.
   */
  async function erase(tx: Db, user: UserRow) {
    for (const t of await users.teamsOf(user.id, tx)) await teams.departAll(tx, t.id, user.id, false);
    await settings.deleteScope(tx, 'account', user.id);
    await sessions.forgetEmail(tx, user.email);
    await auditLog.eraseUser(tx, user.id, user.email);
    await users.delete(tx, user.id);
  }

  async function refuseIfUndeletable(tx: Db, user: UserRow) {
    if (user.isAdmin) throw forbidden('Hub admins cannot be deleted; remove the admin flag first', 'HUB_ADMIN_NOT_DELETABLE');
    const owned = await users.ownedTeams(user.id, tx);
    if (owned.length) {
      throw conflict(`Sole owner of ${owned.map((t) => t.name).join(', ')}: transfer ownership first`, 'SOLE_OWNER');
    }
  }

  return {
    requireUser,

    async me(actor: Actor) {
      if (!actor.userId) {
        // Keys and the internal key have no account: they see what they are.
        return {
          user: null,
          credential: {
            kind: actor.kind,
            apiKeyId: actor.apiKeyId,
            satelliteId: actor.satelliteId,
            tenantId: actor.tenantId,
            role: actor.role,
          },
          tenants: [],
          preferences: null,
          mfa: NO_MFA,
          emailChange: null,
        };
      }
      const p = actor.person!;
      // Enrolment is required of hub admins only while the hub switch says so (issue 33 item 8).
      const mustEnrol = actor.isPlatformAdmin && (await settings.hubSetting('require_admin_mfa'));
      return {
        user: presentUser({
          id: actor.userId,
          email: actor.email!,
          name: p.name,
          isAdmin: actor.isPlatformAdmin,
          status: p.status,
          createdAt: p.createdAt,
          lastLoginAt: p.lastLoginAt,
        }),
        tenants: actor.memberships.map((m) => ({ id: m.tenantId, name: m.name ?? '', slug: m.slug ?? '', role: m.role })),
        preferences: await settings.resolvePreferences(p.preferences),
        // Only enrolled people need the MFA tables read; for everyone else the credential lookup said enough.
        mfa: !deps.mfa
          ? NO_MFA
          : p.mfaEnrolledAt
            ? await deps.mfa.summary(actor.userId, mustEnrol)
            : { ...NO_MFA, available: true, enrollmentRequired: mustEnrol },
        emailChange: await deps.emailChanges.pending(actor.userId),
      };
    },

    /**
     * The name changes at once; a new email address only once the link mailed to it is opened
     * (issue 33 item 3), so the answer still shows the current address, and the change waiting.
     */
    async updateProfile(actor: Actor, input: { name?: string; email?: string }) {
      const id = actor.userId!;
      const { user, mails } = await db.tx(async (tx) => {
        const user = await requireUser(id, tx);
        const email = input.email?.trim();
        const moves = email !== undefined && email.toLowerCase() !== user.email.toLowerCase();
        const request = moves ? await deps.emailChanges.request(tx, actor, user, email) : null;
        // The same mailbox in another case is no move: it is written at once, like the name.
        const recase = email !== undefined && !moves && email !== user.email ? email : undefined;
        const fields = [...(input.name !== undefined ? ['name'] : []), ...(recase ? ['email'] : [])];
        if (fields.length > 0) {
          await users.update(tx, id, { name: input.name?.trim(), email: recase }, clock.now());
          await audit.write(tx, actor, {
            action: 'user.profile_updated',
            tenantId: null,
            targetType: 'user',
            targetId: id,
            details: { fields },
          });
        }
        return { user: presentUser((await users.findById(id, tx))!), mails: request?.mails ?? [] };
      });
      await deps.emailChanges.send(mails);
      return { user, emailChange: await deps.emailChanges.pending(id) };
    },

    /** Other sessions end; the one making the change stays signed in. */
    async changePassword(actor: Actor, input: { currentPassword: string; newPassword: string }) {
      const user = await requireUser(actor.userId!);
      if (!(await verifyPassword(user.passwordHash, input.currentPassword))) {
        throw badRequest('The current password is wrong', 'WRONG_PASSWORD');
      }
      checkPasswordRule(input.newPassword, 'newPassword');
      const passwordHash = await hashPassword(input.newPassword);
      await db.tx(async (tx) => {
        const now = clock.now();
        await users.update(tx, user.id, { passwordHash }, now);
        await sessions.revokeUserSessions(tx, user.id, now, actor.sessionId);
        await audit.write(tx, actor, { action: 'user.password_changed', tenantId: null, targetType: 'user', targetId: user.id });
      });
    },

    async deleteSelf(actor: Actor, password: string) {
      const user = await requireUser(actor.userId!);
      if (!(await verifyPassword(user.passwordHash, password))) throw badRequest('The password is wrong', 'WRONG_PASSWORD');
      await db.tx(async (tx) => {
        await refuseIfUndeletable(tx, user);
        await erase(tx, user);
        // The entry outlives the person, but carries neither their email nor their IP.
        await audit.write(
          tx,
          { ...actor, email: null, ip: '' },
          { action: 'user.account_deleted', tenantId: null, targetType: 'user', targetId: user.id },
        );
      });
    },

    async adminList(filter: { search?: string; status?: 'active' | 'blocked'; tenantId?: string; limit: number; offset: number }) {
      const { rows, total } = await users.list(filter);
      const teamsByUser = await Promise.all(rows.map((u) => users.teamsOf(u.id)));
      return { users: rows.map((u, i) => presentAdminUser(u, teamsByUser[i])), total, limit: filter.limit, offset: filter.offset };
    },

    async adminGet(id: string) {
      const user = await requireUser(id);
      return presentAdminUser(user, await users.teamsOf(id));
    },

    async adminEdit(actor: Actor, id: string, input: { name?: string; email?: string; isAdmin?: boolean }) {
      return db.tx(async (tx) => {
        const user = await requireUser(id, tx);
        const email = input.email?.trim();
        if (email && email.toLowerCase() !== user.email.toLowerCase() && (await users.findByEmail(email, tx))) {
          throw conflict('An account with this email exists', 'EMAIL_TAKEN');
        }
        if (input.isAdmin === false && user.isAdmin && (await users.countHubAdmins(tx)) <= 1) {
          throw conflict('The hub needs at least one hub admin', 'LAST_HUB_ADMIN');
        }
        await users.update(tx, id, { name: input.name?.trim(), email, isAdmin: input.isAdmin }, clock.now());
        await audit.write(tx, actor, {
          action: 'admin.user_edited',
          tenantId: null,
          targetType: 'user',
          targetId: id,
          details: { fields: Object.keys(input), ...(input.isAdmin !== undefined ? { isAdmin: input.isAdmin } : {}) },
        });
        return presentAdminUser((await users.findById(id, tx))!, await users.teamsOf(id, tx));
      });
    },

    /** Toggles blocked/active. Blocking ends every session at once (keys follow via the resolver). */
    async toggleBlock(actor: Actor, id: string) {
      return db.tx(async (tx) => {
        const user = await requireUser(id, tx);
        if (user.id === actor.userId) throw badRequest('You cannot block yourself', 'CANNOT_BLOCK_SELF');
        if (user.isAdmin && user.status === 'active')
          throw forbidden('Hub admins cannot be blocked; remove the admin flag first', 'HUB_ADMIN_NOT_BLOCKABLE');
        const status = user.status === 'active' ? 'blocked' : 'active';
        const now = clock.now();
        await users.update(tx, id, { status }, now);
        if (status === 'blocked') await sessions.revokeUserSessions(tx, id, now);
        await audit.write(tx, actor, {
          action: status === 'blocked' ? 'admin.user_blocked' : 'admin.user_unblocked',
          tenantId: null,
          targetType: 'user',
          targetId: id,
        });
        return { id, status };
      });
    },

    /** Sets the given password, or a generated one shown once; clears the lock and ends sessions. */
    async adminResetPassword(actor: Actor, id: string, password: string | undefined) {
      const user = await requireUser(id);
      const chosen = password ?? randomHex(8);
      checkPasswordRule(chosen);
      const passwordHash = await hashPassword(chosen);
      await db.tx(async (tx) => {
        const now = clock.now();
        await users.update(tx, user.id, { passwordHash, failedLoginAttempts: 0, lockedUntil: null }, now);
        await sessions.revokeUserSessions(tx, user.id, now);
        await audit.write(tx, actor, { action: 'admin.password_reset', tenantId: null, targetType: 'user', targetId: user.id });
      });
      return password ? { id } : { id, temporaryPassword: chosen };
    },

    async adminDelete(actor: Actor, id: string) {
      await db.tx(async (tx) => {
        const user = await requireUser(id, tx);
        await refuseIfUndeletable(tx, user);
        await erase(tx, user);
        await audit.write(tx, actor, { action: 'admin.user_deleted', tenantId: null, targetType: 'user', targetId: id });
      });
    },

    /** Operators' path (CLI and start-up): no guard, no HTTP. */
    async createUser(input: { email: string; name: string; password: string; isAdmin: boolean }, actor: Actor) {
      checkPasswordRule(input.password);
      if (await users.findByEmail(input.email)) throw conflict('An account with this email exists', 'EMAIL_TAKEN');
      const id = newId();
      const passwordHash = await hashPassword(input.password);
      await db.tx(async (tx) => {
        await users.insert(tx, { id, email: input.email, name: input.name, passwordHash, isAdmin: input.isAdmin, at: clock.now() });
        await audit.write(tx, actor, {
          action: 'user.register',
          tenantId: null,
          targetType: 'user',
          targetId: id,
          details: { by: 'operator', isAdmin: input.isAdmin },
        });
      });
      return (await users.findById(id))!;
    },

    async setHubAdmin(email: string, isAdmin: boolean, actor: Actor) {
      const user = await users.findByEmail(email);
      if (!user) throw notFound(`No user with email ${email}`);
      await db.tx(async (tx) => {
        await users.update(tx, user.id, { isAdmin }, clock.now());
        await audit.write(tx, actor, {
          action: 'admin.user_edited',
          tenantId: null,
          targetType: 'user',
          targetId: user.id,
          details: { isAdmin, by: 'operator' },
        });
      });
    },

    countHubAdmins: () => users.countHubAdmins(),
  };
}

export type UsersService = ReturnType<typeof createUsersService>;
