import type { Db } from '../../infra/db/index.ts';
import type { Mailer } from '../../infra/mail/index.ts';
import { type Clock, addSeconds } from '../../core/clock.ts';
import type { Actor } from '../../core/actor.ts';
import type { AuditActor, AuditWriter } from '../audit/writer.ts';
import type { JwtService } from '../../core/jwt.ts';
import type { CredentialStore } from './resolver.ts';
import { spendOrRefuse, type RateLimit } from '../../core/rate-limit.ts';
import { newId, randomHex, sha256Hex } from '../../core/crypto.ts';
import { AppError, badRequest, conflict, forbidden, locked, tooManyRequests } from '../../core/errors.ts';
import type { UserAccounts, UserRow } from '../users/service.ts';
import { burnPasswordCheck, checkPasswordRule, hashPassword, verifyPassword } from '../users/passwords.ts';
import { presentUser, type UserView } from '../users/schemas.ts';
import type { SettingsService } from '../settings/service.ts';
import type { InvitesService } from '../invites/service.ts';
import type { TeamsService } from '../teams/service.ts';
import { createAuthRepo } from './repo.ts';
import { createCredentialsRepo } from './credentials-repo.ts';
import type { ApiKeysService } from '../api-keys/service.ts';
import type { SessionIssue, SessionStore } from './sessions.ts';

export type { SessionIssue };

export const LOGIN_WINDOW_MS = 15 * 60_000;
export const LOGIN_ATTEMPTS_PER_IP = 20;
export const LOCK_AFTER_FAILURES = 5;
export const LOCK_MS = 15 * 60_000;
export const RESET_TOKEN_TTL_SECONDS = 60 * 60;
export const FORGOT_PER_IP = 5;

/**
 * What login answers. A person with a second factor gets a challenge instead of a session,
 * unless a remembered device skips it; everything else gets a session at once.
 */
export type LoginOutcome =
  | { kind: 'signed_in'; user: UserView; session: SessionIssue; token: string | null }
  | { kind: 'mfa_required'; mfaToken: string; hasPasskeys: boolean };

/** What sign-in asks of the MFA module, kept as an interface so auth does not depend on it (the mfa service is one). */
export interface SecondFactor {
  /** After a correct password: is a second factor due, or does a remembered device (mfa-remember cookie) skip it? */
  check(userId: string, rememberToken: string | null): Promise<{ required: boolean; rememberedDeviceId: string | null }>;
  /** Issues the mfaToken (and audits user.mfa_challenge_issued) inside the login transaction. */
  issueChallenge(
    tx: Db,
    actor: AuditActor,
    userId: string,
    input: { wantToken: boolean; userAgent: string | null },
  ): Promise<{ mfaToken: string; hasPasskeys: boolean }>;
}

export function createAuthService(deps: {
  db: Db;
  clock: Clock;
  audit: AuditWriter;
  mail: Mailer;
  jwt: JwtService;
  users: Pick<UserAccounts, 'findByEmail' | 'findById' | 'insert' | 'update' | 'claimPasswordCheck' | 'releasePasswordCheck'>;
  settings: Pick<SettingsService, 'hubSetting'>;
  invites: Pick<InvitesService, 'consume'>;
  teams: Pick<TeamsService, 'join'>;
  /** Key lookups of each request: the api_keys table is the api-keys module's. */
  apiKeys: Pick<ApiKeysService, 'credential'>;
  publicUrl: string;
  /** Abuse limits: registrations per client address, reset mails per account. */
  limits: { register: RateLimit; resetMail: RateLimit };
  /** Issues the session a sign-in ends with (the same store the mfa service issues from). */
  sessions: Pick<SessionStore, 'issueSession' | 'revokeUserSessions' | 'forgetEmail'>;
  /** The second factor sign-in checks; without one, a correct password signs in. */
  secondFactor?: SecondFactor;
}) {
  const { db, clock, audit, mail, jwt, users, settings, invites, teams, sessions } = deps;
  const repo = createAuthRepo(db);
  const { issueSession } = sessions;

  /** A failed sign-in is recorded and audited in its own committed transaction, then refused. */
  async function refuseLogin(
    actor: Actor,
    email: string,
    user: UserRow | null,
    reason: string,
    error: AppError,
    extra?: (tx: Db) => Promise<void>,
  ): Promise<never> {
    await db.tx(async (tx) => {
      // The attempt is already in the ledger as a failure (reserved by login), or not counted at all when rate limited.
      if (extra) await extra(tx);
      await audit.write(
        tx,
        { ...actor, userId: user?.id ?? null, email },
        {
          action: 'user.login_failed',
          tenantId: null,
          targetType: 'user',
          targetId: user?.id ?? null,
          details: { reason },
        },
      );
    });
    throw error;
  }

  return {
    issueSession,

    /** The credential lookups of each request (resolver.ts). */
    credentials: { ...createCredentialsRepo(db), ...deps.apiKeys.credential } satisfies CredentialStore,

    /** Every session of the person ends (password change, blocking), but the one named. */
    revokeUserSessions: sessions.revokeUserSessions,

    /** Login attempts no longer name an erased person's email. */
    forgetEmail: sessions.forgetEmail,

    /** Spec §5 "Login security": per-IP limit, lockout after failures, blocked accounts, audit of each refusal. */
    async login(
      actor: Actor,
      input: { email: string; password: string; wantToken: boolean; userAgent: string | null; rememberToken?: string | null },
    ): Promise<LoginOutcome> {
      const now = clock.now();
      const email = input.email.trim();
      const attemptId = await repo.reserveAttempt(
        'login',
        actor.ip,
        email,
        now,
        new Date(now.getTime() - LOGIN_WINDOW_MS),
        LOGIN_ATTEMPTS_PER_IP,
      );
      if (attemptId === null) {
        return refuseLogin(
          actor,
          email,
          null,
          'rate_limited',
          tooManyRequests('Too many sign-in attempts from this address; try again later', LOGIN_WINDOW_MS / 1000),
        );
      }
      const user = await users.findByEmail(email);
      const invalid = new AppError(401, 'INVALID_CREDENTIALS', 'Email or password is wrong');
      if (!user) {
        await burnPasswordCheck(input.password);
        return refuseLogin(actor, email, null, 'invalid_credentials', invalid);
      }
      // The check is claimed (and counted as a failure) before it runs: see claimPasswordCheck.
      const claim = await users.claimPasswordCheck(user.id, LOCK_AFTER_FAILURES, new Date(now.getTime() + LOCK_MS), now);
      if (!claim) {
        const lockedUntil = (await users.findById(user.id))?.lockedUntil ?? now;
        return refuseLogin(
          actor,
          email,
          user,
          'locked',
          locked('This account is locked after repeated failed sign-ins; try again later', 'ACCOUNT_LOCKED', {
            lockedUntil: new Date(lockedUntil).toISOString(),
          }),
        );
      }
      if (!(await verifyPassword(user.passwordHash, input.password))) {
        return refuseLogin(actor, email, user, 'invalid_credentials', invalid);
      }
      const release = (tx: Db) => users.releasePasswordCheck(tx, user.id, claim, LOCK_AFTER_FAILURES, now);
      if (user.status === 'blocked') {
        return refuseLogin(actor, email, user, 'blocked', forbidden('This account is blocked', 'ACCOUNT_BLOCKED'), release);
      }

      const second = deps.secondFactor;
      const gate = second ? await second.check(user.id, input.rememberToken ?? null) : { required: false, rememberedDeviceId: null };
      if (second && gate.required) {
        // The failure count is not reset here: only a passed second factor clears it, so
        // password-then-wrong-code rounds still reach the lock.
        return db.tx(async (tx) => {
          await release(tx);
          await repo.settleAttempt(tx, attemptId, true);
          const challenge = await second.issueChallenge(tx, { ...actor, userId: user.id, email: user.email }, user.id, {
            wantToken: input.wantToken,
            userAgent: input.userAgent,
          });
          return { kind: 'mfa_required' as const, ...challenge };
        });
      }

      return db.tx(async (tx) => {
        await users.update(tx, user.id, { failedLoginAttempts: 0, lockedUntil: null, lastLoginAt: now, lastLoginIp: actor.ip }, now);
        await repo.settleAttempt(tx, attemptId, true);
        const session = await issueSession(tx, user.id, actor.ip, input.userAgent);
        const details = gate.rememberedDeviceId ? { mfa: 'remembered_device', rememberedDeviceId: gate.rememberedDeviceId } : undefined;
        await audit.write(
          tx,
          { ...actor, userId: user.id, email: user.email },
          { action: 'user.login', tenantId: null, targetType: 'user', targetId: user.id, details },
        );
        const token = input.wantToken ? jwt.sign({ sub: user.id, sid: session.sessionId }) : null;
        return { kind: 'signed_in' as const, user: presentUser({ ...user, lastLoginAt: now }), session, token };
      });
    },

    async logout(actor: Actor): Promise<void> {
      if (!actor.sessionId) return;
      await db.tx(async (tx) => {
        await repo.revokeSession(tx, actor.sessionId!, clock.now());
        await audit.write(tx, actor, { action: 'user.logout', tenantId: null, targetType: 'user', targetId: actor.userId });
      });
    },

    /** Open registration is gated by the hub switch; a valid invite always admits. */
    async register(actor: Actor, input: { email: string; password: string; name: string; inviteToken?: string }) {
      await spendOrRefuse(deps.limits.register, actor.ip, 'Too many registrations from this address; try again later');
      if (!input.inviteToken && !(await settings.hubSetting('allow_self_registration'))) {
        throw forbidden('Registration needs an invite on this hub', 'REGISTRATION_DISABLED');
      }
      checkPasswordRule(input.password);
      const email = input.email.trim();
      if (await users.findByEmail(email)) throw conflict('An account with this email exists', 'EMAIL_TAKEN');
      const passwordHash = await hashPassword(input.password);
      const now = clock.now();
      const id = newId();
      return db.tx(async (tx) => {
        await users.insert(tx, { id, email, name: input.name.trim(), passwordHash, isAdmin: false, at: now });
        const who = { ...actor, userId: id, email };
        let joined: { tenantId: string; role: string } | null = null;
        if (input.inviteToken) {
          const invite = await invites.consume(tx, input.inviteToken, id);
          const membershipId = await teams.join(tx, invite.tenantId, id, invite.role);
          joined = { tenantId: invite.tenantId, role: invite.role };
          await audit.write(tx, who, {
            action: 'member.joined_team',
            tenantId: invite.tenantId,
            targetType: 'membership',
            targetId: membershipId,
            details: { via: 'invite', inviteId: invite.id, role: invite.role },
          });
        }
        await audit.write(tx, who, { action: 'user.register', tenantId: joined?.tenantId ?? null, targetType: 'user', targetId: id });
        const user = await users.findById(id, tx);
        return { user: presentUser(user!), joined };
      });
    },

    /** Always quiet: the caller learns nothing about which addresses exist. */
    async forgotPassword(actor: Actor, emailInput: string): Promise<void> {
      const now = clock.now();
      const email = emailInput.trim();
      // The place in the per-IP window is taken first, so a burst cannot send more than the limit.
      const attemptId = await repo.reserveAttempt(
        'forgot_password',
        actor.ip,
        email,
        now,
        new Date(now.getTime() - LOGIN_WINDOW_MS),
        FORGOT_PER_IP,
      );
      const found = attemptId ? await users.findByEmail(email) : null;
      // Past the per-account budget the answer stays 204 and nothing leaves: one inbox cannot be
      // flooded from many addresses.
      const user = found?.status === 'active' && (await deps.limits.resetMail.hit(found.id)) === null ? found : null;
      const token = randomHex(32);
      await db.tx(async (tx) => {
        if (attemptId) await repo.settleAttempt(tx, attemptId, found !== null);
        if (!user) return;
        await repo.insertResetToken(tx, {
          id: newId(),
          userId: user.id,
          tokenHash: sha256Hex(token),
          at: now,
          expiresAt: addSeconds(now, RESET_TOKEN_TTL_SECONDS),
        });
        await audit.write(
          tx,
          { ...actor, userId: user.id, email: user.email },
          { action: 'user.password_reset_requested', tenantId: null, targetType: 'user', targetId: user.id },
        );
      });
      if (!user) return;
      await mail.send({
        to: user.email,
        subject: 'Reset your Chorus password',
        text: `Someone asked to reset the password of your Chorus account.\n\nOpen this link within 60 minutes to choose a new one:\n${deps.publicUrl}/reset-password?token=${token}\n\nIf it was not you, ignore this message.`,
      });
    },

    async resetPassword(actor: Actor, input: { token: string; password: string }): Promise<void> {
      const now = clock.now();
      const row = await repo.findResetToken(sha256Hex(input.token));
      const user = row ? await users.findById(row.userId) : null;
      const fail = async (reason: string, code: string, message: string) => {
        await db.tx((tx) =>
          audit.write(
            tx,
            { ...actor, userId: user?.id ?? null, email: user?.email ?? null },
            {
              action: 'user.password_reset_failed',
              tenantId: null,
              targetType: 'user',
              targetId: user?.id ?? null,
              details: { reason },
            },
          ),
        );
        throw badRequest(message, code);
      };
      if (!row || !user) return fail('invalid', 'INVALID_TOKEN', 'This reset link is not valid');
      if (row.usedAt) return fail('used', 'TOKEN_USED', 'This reset link has already been used');
      if (new Date(row.expiresAt) <= now) return fail('expired', 'TOKEN_EXPIRED', 'This reset link has expired');
      if (user.status === 'blocked') return fail('blocked', 'ACCOUNT_BLOCKED', 'This account is blocked');
      checkPasswordRule(input.password);
      const passwordHash = await hashPassword(input.password);
      await db.tx(async (tx) => {
        await users.update(tx, user.id, { passwordHash, failedLoginAttempts: 0, lockedUntil: null }, now);
        await repo.useResetTokens(tx, user.id, now);
        await repo.revokeUserSessions(tx, user.id, now);
        await audit.write(
          tx,
          { ...actor, userId: user.id, email: user.email },
          { action: 'user.password_reset_completed', tenantId: null, targetType: 'user', targetId: user.id },
        );
      });
    },
  };
}

export type AuthService = ReturnType<typeof createAuthService>;
