import QRCode from 'qrcode';
import { generateSecret, generateURI, verify as verifyTotp } from 'otplib';
import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type RegistrationResponseJSON,
} from '@simplewebauthn/server';
import type { Db } from '../../infra/db/index.ts';
import type { Clock } from '../../core/clock.ts';
import { addSeconds } from '../../core/clock.ts';
import type { Actor } from '../../core/actor.ts';
import type { AuditActor, AuditWriter } from '../audit/writer.ts';
import type { AuditAction } from '../../core/audit-actions.ts';
import type { JwtService } from '../../core/jwt.ts';
import { newId, randomHex, sha256Hex } from '../../core/crypto.ts';
import { AppError, badRequest, conflict, forbidden, locked, notFound } from '../../core/errors.ts';
import { verifyPassword } from '../users/passwords.ts';
import { presentUser, type UserView } from '../users/schemas.ts';
import type { MfaSummary, UserAccounts, UserRow } from '../users/service.ts';
import { LOCK_AFTER_FAILURES, LOCK_MS, type SecondFactor, type SessionIssue } from '../auth/service.ts';
import { createMfaRepo, type PasskeyRow, type RememberedDeviceRow } from './repo.ts';
import { createCodeHasher, newBackupCode } from './secrets.ts';
import { createSealer } from '../../core/sealer.ts';

/** Spec §8: the TOTP enrollment secret is held 10 minutes. */
export const TOTP_PENDING_SECONDS = 10 * 60;
export const MFA_TOKEN_TTL_SECONDS = 5 * 60;
export const PASSKEY_CHALLENGE_SECONDS = 5 * 60;
export const REMEMBER_DEVICE_SECONDS = 30 * 24 * 60 * 60;
export const BACKUP_CODE_COUNT = 10;
const TOTP_PERIOD = 30;
const ISSUER = 'Chorus';

export type MfaMethod = 'totp' | 'backup_code' | 'passkey';

export interface CompletedSignIn {
  user: UserView;
  session: SessionIssue;
  token: string | null;
  /** Set when the person asked to remember this device: the raw cookie value. */
  remember: { token: string; expiresAt: Date } | null;
}

const iso = (d: Date | null) => (d ? new Date(d).toISOString() : null);

export const presentPasskey = (p: PasskeyRow) => ({ id: p.id, name: p.name, createdAt: iso(p.createdAt)!, lastUsedAt: iso(p.lastUsedAt) });

export const presentDevice = (d: RememberedDeviceRow) => ({
  id: d.id,
  userAgent: d.userAgent,
  ip: d.ip,
  createdAt: iso(d.createdAt)!,
  lastUsedAt: iso(d.lastUsedAt),
  expiresAt: iso(d.expiresAt)!,
});

const invalidToken = () => new AppError(401, 'INVALID_MFA_TOKEN', 'This sign-in has expired or was already completed; sign in again');
const invalidCode = () => new AppError(401, 'INVALID_MFA_CODE', 'The code is not valid');

export function createMfaService(deps: {
  db: Db;
  clock: Clock;
  audit: AuditWriter;
  jwt: JwtService;
  users: Pick<UserAccounts, 'findById' | 'update' | 'recordFailedLogin'>;
  sessions: { issueSession(tx: Db, userId: string, ip: string, userAgent: string | null): Promise<SessionIssue> };
  secret: string;
  publicUrl: string;
}) {
  const { db, clock, audit, jwt, users, sessions } = deps;
  const repo = createMfaRepo(db);
  const sealer = createSealer(deps.secret, 'mfa-totp-secret');
  const hashCode = createCodeHasher(deps.secret);
  // Spec: relying-party id and origin come from CHORUS_PUBLIC_URL.
  const publicUrl = new URL(deps.publicUrl);
  const rpID = publicUrl.hostname;
  const origin = publicUrl.origin;

  const epochOf = (d: Date) => Math.floor(d.getTime() / 1000);

  /** ±1 step around the clock's time; answers the accepted step, or null. */
  async function checkTotp(secret: string, code: string, now: Date): Promise<number | null> {
    const r = await verifyTotp({ secret, token: code, epoch: epochOf(now), epochTolerance: TOTP_PERIOD, period: TOTP_PERIOD });
    return r.valid && 'timeStep' in r ? r.timeStep : null;
  }

  async function requireUser(id: string, tx: Db = db): Promise<UserRow> {
    const u = await users.findById(id, tx);
    if (!u) throw notFound('No such user');
    return u;
  }

  async function requireEnabled(userId: string, tx: Db = db) {
    const account = await repo.findAccount(userId, tx);
    if (!account?.enrolledAt || !account.totpSecret)
      throw conflict('Multi-factor sign-in is not enabled for this account', 'MFA_NOT_ENABLED');
    return account;
  }

  function newCodes() {
    const codes = Array.from({ length: BACKUP_CODE_COUNT }, newBackupCode);
    return { codes, rows: codes.map((c) => ({ id: newId(), hash: hashCode(c) })) };
  }

  /** Writes an audit entry in its own committed transaction, then refuses. */
  async function refuseWith(
    actor: AuditActor,
    action: AuditAction,
    user: UserRow | null,
    details: Record<string, unknown>,
    error: AppError,
    countFailure = false,
  ): Promise<never> {
    const now = clock.now();
    await db.tx(async (tx) => {
      if (countFailure && user) await users.recordFailedLogin(tx, user.id, LOCK_AFTER_FAILURES, new Date(now.getTime() + LOCK_MS), now);
      await audit.write(
        tx,
        { ...actor, userId: user?.id ?? actor.userId, email: user?.email ?? actor.email },
        {
          action,
          tenantId: null,
          targetType: 'user',
          targetId: user?.id ?? actor.userId,
          details,
        },
      );
    });
    throw error;
  }

  /** A wrong second factor: counted toward the account lock (spec §5) and audited. */
  const refuseChallenge = (actor: Actor, user: UserRow, method: MfaMethod, reason: string, error: AppError = invalidCode()) =>
    refuseWith(actor, 'user.mfa_login_failed', user, { method, reason }, error, true);

  /** The mfaToken must be open, and the account still allowed to sign in. */
  async function openChallenge(actor: Actor, mfaToken: string, method: MfaMethod) {
    const now = clock.now();
    const row = await repo.findChallenge(sha256Hex(mfaToken));
    if (!row) throw invalidToken();
    const user = await users.findById(row.userId);
    if (!user) throw invalidToken();
    const refuse = (reason: string, error: AppError) => refuseWith(actor, 'user.mfa_login_failed', user, { method, reason }, error);
    if (row.usedAt) return refuse('token_used', invalidToken());
    if (new Date(row.expiresAt) <= now) return refuse('token_expired', invalidToken());
    if (user.lockedUntil && new Date(user.lockedUntil) > now) {
      return refuse(
        'locked',
        locked('This account is locked after repeated failed sign-ins; try again later', 'ACCOUNT_LOCKED', {
          lockedUntil: new Date(user.lockedUntil).toISOString(),
        }),
      );
    }
    if (user.status === 'blocked') return refuse('blocked', forbidden('This account is blocked', 'ACCOUNT_BLOCKED'));
    return { row, user };
  }

  /** The second factor passed: the challenge is spent and the session starts, in one transaction. */
  async function finishSignIn(
    tx: Db,
    actor: Actor,
    challenge: { id: string; wantToken: boolean; userAgent: string | null },
    user: UserRow,
    method: MfaMethod,
    rememberDevice: boolean,
  ): Promise<CompletedSignIn> {
    const now = clock.now();
    if (!(await repo.useChallenge(tx, challenge.id, now))) throw invalidToken();
    await users.update(tx, user.id, { failedLoginAttempts: 0, lockedUntil: null, lastLoginAt: now, lastLoginIp: actor.ip }, now);
    const session = await sessions.issueSession(tx, user.id, actor.ip, challenge.userAgent);
    let remember: CompletedSignIn['remember'] = null;
    let deviceId: string | null = null;
    if (rememberDevice) {
      remember = { token: randomHex(32), expiresAt: addSeconds(now, REMEMBER_DEVICE_SECONDS) };
      deviceId = newId();
      await repo.insertDevice(tx, {
        id: deviceId,
        userId: user.id,
        tokenHash: sha256Hex(remember.token),
        userAgent: challenge.userAgent?.slice(0, 300) ?? null,
        ip: actor.ip,
        at: now,
        expiresAt: remember.expiresAt,
      });
    }
    await audit.write(
      tx,
      { ...actor, userId: user.id, email: user.email },
      {
        action: 'user.login',
        tenantId: null,
        targetType: 'user',
        targetId: user.id,
        details: { mfa: method, ...(deviceId ? { rememberedDeviceId: deviceId } : {}) },
      },
    );
    const token = challenge.wantToken ? jwt.sign({ sub: user.id, sid: session.sessionId }) : null;
    return { user: presentUser({ ...user, lastLoginAt: now }), session, token, remember };
  }

  const secondFactor: SecondFactor = {
    async check(userId, rememberToken) {
      const account = await repo.findAccount(userId);
      if (!account?.enrolledAt) return { required: false, rememberedDeviceId: null };
      if (rememberToken && /^[0-9a-f]{64}$/.test(rememberToken)) {
        const deviceId = await repo.useDevice(userId, sha256Hex(rememberToken), clock.now());
        if (deviceId) return { required: false, rememberedDeviceId: deviceId };
      }
      return { required: true, rememberedDeviceId: null };
    },

    async issueChallenge(tx, actor, userId, input) {
      const now = clock.now();
      const mfaToken = randomHex(32);
      const id = newId();
      await repo.insertChallenge(tx, {
        id,
        tokenHash: sha256Hex(mfaToken),
        userId,
        wantToken: input.wantToken,
        userAgent: input.userAgent?.slice(0, 300) ?? null,
        at: now,
        expiresAt: addSeconds(now, MFA_TOKEN_TTL_SECONDS),
      });
      const hasPasskeys = (await repo.listPasskeys(userId, tx)).length > 0;
      await audit.write(tx, actor, {
        action: 'user.mfa_challenge_issued',
        tenantId: null,
        targetType: 'user',
        targetId: userId,
        details: { hasPasskeys },
      });
      return { mfaToken, hasPasskeys };
    },
  };

  return {
    secondFactor,

    /** The `mfa` object of GET /auth/me. */
    async summary(userId: string, mustEnrol: boolean): Promise<MfaSummary> {
      const now = clock.now();
      const account = await repo.findAccount(userId);
      const enabled = Boolean(account?.enrolledAt && account.totpSecret);
      const [backupCodesRemaining, passkeys, devices] = enabled
        ? await Promise.all([repo.countBackupCodes(userId), repo.listPasskeys(userId), repo.listDevices(userId, now)])
        : [0, [], []];
      return {
        enabled,
        enrolledAt: enabled ? iso(account!.enrolledAt) : null,
        backupCodesRemaining,
        // A hub admin on a hub with require_admin_mfa on: the flag asks the client to lead them there.
        enrollmentRequired: mustEnrol && !enabled,
        available: true,
        passkeys: passkeys.map(presentPasskey),
        rememberedDevices: devices.map(presentDevice),
      };
    },

    // Completing a sign-in challenge

    async completeWithTotp(actor: Actor, input: { mfaToken: string; code: string; rememberDevice?: boolean }): Promise<CompletedSignIn> {
      const { row, user } = await openChallenge(actor, input.mfaToken, 'totp');
      const account = await repo.findAccount(user.id);
      if (!account?.totpSecret) return refuseChallenge(actor, user, 'totp', 'not_enrolled');
      const now = clock.now();
      const step = await checkTotp(sealer.open(account.totpSecret, user.id), input.code, now);
      if (step === null) return refuseChallenge(actor, user, 'totp', 'invalid_code');
      const done = await db.tx(async (tx) => {
        // A code is good once: its step, and every earlier one, is spent by this sign-in.
        if (!(await repo.useTotpStep(tx, user.id, step, now))) return null;
        return finishSignIn(tx, actor, row, user, 'totp', input.rememberDevice === true);
      });
      return done ?? refuseChallenge(actor, user, 'totp', 'reused_code');
    },

    async completeWithBackupCode(
      actor: Actor,
      input: { mfaToken: string; code: string; rememberDevice?: boolean },
    ): Promise<CompletedSignIn> {
      const { row, user } = await openChallenge(actor, input.mfaToken, 'backup_code');
      const now = clock.now();
      const done = await db.tx(async (tx) => {
        if (!(await repo.useBackupCode(tx, user.id, hashCode(input.code), now))) return null;
        const remaining = await repo.countBackupCodes(user.id, tx);
        await audit.write(
          tx,
          { ...actor, userId: user.id, email: user.email },
          { action: 'auth.mfa_backup_code_used', tenantId: null, targetType: 'user', targetId: user.id, details: { remaining } },
        );
        return finishSignIn(tx, actor, row, user, 'backup_code', input.rememberDevice === true);
      });
      return done ?? refuseChallenge(actor, user, 'backup_code', 'invalid_code');
    },

    async beginPasskeySignIn(actor: Actor, mfaToken: string) {
      const { row, user } = await openChallenge(actor, mfaToken, 'passkey');
      const passkeys = await repo.listPasskeys(user.id);
      if (passkeys.length === 0) throw badRequest('This account has no passkey', 'NO_PASSKEYS');
      const options = await generateAuthenticationOptions({
        rpID,
        allowCredentials: passkeys.map((p) => ({ id: p.credentialId, transports: p.transports })),
        userVerification: 'preferred',
        timeout: PASSKEY_CHALLENGE_SECONDS * 1000,
      });
      await db.tx((tx) => repo.setWebauthnChallenge(tx, row.id, options.challenge));
      return options;
    },

    async completeWithPasskey(
      actor: Actor,
      input: { mfaToken: string; response: AuthenticationResponseJSON; rememberDevice?: boolean },
    ): Promise<CompletedSignIn> {
      const { row, user } = await openChallenge(actor, input.mfaToken, 'passkey');
      const expectedChallenge = row.webauthnChallenge;
      if (!expectedChallenge) throw badRequest('Start the passkey sign-in first', 'PASSKEY_NOT_STARTED');
      // One assertion per begin: the WebAuthn challenge is spent whatever the outcome.
      await db.tx((tx) => repo.setWebauthnChallenge(tx, row.id, null));
      const rejected = () => new AppError(401, 'PASSKEY_REJECTED', 'The passkey could not be verified');
      const passkey = await repo.findPasskeyByCredential(user.id, input.response.id);
      if (!passkey) return refuseChallenge(actor, user, 'passkey', 'unknown_passkey', rejected());
      let newCounter: number | null = null;
      let reason = 'invalid_assertion';
      try {
        const result = await verifyAuthenticationResponse({
          response: { ...input.response, clientExtensionResults: input.response.clientExtensionResults ?? {} },
          expectedChallenge,
          expectedOrigin: origin,
          expectedRPID: rpID,
          credential: {
            id: passkey.credentialId,
            publicKey: new Uint8Array(Buffer.from(passkey.publicKey, 'base64url')),
            counter: passkey.signCount,
            transports: passkey.transports,
          },
          requireUserVerification: false,
        });
        if (result.verified) newCounter = result.authenticationInfo.newCounter;
      } catch (e) {
        // The library refuses a counter that did not move forward: a cloned or replayed authenticator.
        if (/counter/i.test((e as Error).message)) reason = 'counter_not_increased';
      }
      if (newCounter === null) return refuseChallenge(actor, user, 'passkey', reason, rejected());
      const counter = newCounter;
      const now = clock.now();
      const done = await db.tx(async (tx) => {
        // The counter only moves forward; a concurrent use of the same assertion loses here.
        if (!(await repo.usePasskey(tx, passkey.id, passkey.signCount, counter, now))) return null;
        return finishSignIn(tx, actor, row, user, 'passkey', input.rememberDevice === true);
      });
      return done ?? refuseChallenge(actor, user, 'passkey', 'counter_not_increased', rejected());
    },

    // TOTP enrollment

    async beginTotp(actor: Actor) {
      const user = await requireUser(actor.userId!);
      const now = clock.now();
      const secret = generateSecret();
      const expiresAt = addSeconds(now, TOTP_PENDING_SECONDS);
      await db.tx((tx) => repo.setPending(tx, user.id, sealer.seal(secret, user.id), expiresAt, now));
      const uri = generateURI({ issuer: ISSUER, label: user.email, secret, period: TOTP_PERIOD });
      return { qrDataUrl: await QRCode.toDataURL(uri), manualKey: secret, expiresAt: expiresAt.toISOString() };
    },

    /**
     * Confirms the pending secret with a code from it. On an account that has MFA already this
     * moves it to the new authenticator; either way a fresh set of backup codes is shown once.
     */
    async confirmTotp(actor: Actor, code: string) {
      const user = await requireUser(actor.userId!);
      const now = clock.now();
      const account = await repo.findAccount(user.id);
      const fail = (reason: string, error: AppError) => refuseWith(actor, 'auth.mfa_enrollment_failed', user, { reason }, error);
      if (!account?.pendingSecret || !account.pendingExpiresAt) {
        return fail('no_pending_enrollment', badRequest('Start the enrollment first', 'NO_PENDING_ENROLLMENT'));
      }
      if (new Date(account.pendingExpiresAt) <= now) {
        await db.tx((tx) => repo.clearPending(tx, user.id, now));
        return fail('expired', badRequest('The enrollment secret has expired; start again', 'ENROLLMENT_EXPIRED'));
      }
      const step = await checkTotp(sealer.open(account.pendingSecret, user.id), code, now);
      if (step === null) return fail('invalid_code', badRequest('The code is not valid', 'INVALID_MFA_CODE'));
      const { codes, rows } = newCodes();
      await db.tx(async (tx) => {
        await repo.confirmPending(tx, user.id, step, now);
        await repo.replaceBackupCodes(tx, user.id, rows, now);
        await audit.write(tx, actor, {
          action: 'auth.mfa_enabled',
          tenantId: null,
          targetType: 'user',
          targetId: user.id,
          details: { method: 'totp', replaced: Boolean(account.enrolledAt) },
        });
      });
      return { backupCodes: codes };
    },

    async cancelTotp(actor: Actor) {
      await db.tx((tx) => repo.clearPending(tx, actor.userId!, clock.now()));
    },

    // Managing one's own MFA

    async disable(actor: Actor, password: string) {
      if (actor.isPlatformAdmin) throw forbidden('Hub admins cannot turn off multi-factor sign-in', 'HUB_ADMIN_MFA_REQUIRED');
      const user = await requireUser(actor.userId!);
      if (!(await verifyPassword(user.passwordHash, password))) throw badRequest('The password is wrong', 'WRONG_PASSWORD');
      await requireEnabled(user.id);
      await db.tx(async (tx) => {
        await repo.wipe(tx, user.id);
        await audit.write(tx, actor, { action: 'auth.mfa_disabled_self', tenantId: null, targetType: 'user', targetId: user.id });
      });
    },

    async regenerateBackupCodes(actor: Actor, password: string) {
      const user = await requireUser(actor.userId!);
      if (!(await verifyPassword(user.passwordHash, password))) throw badRequest('The password is wrong', 'WRONG_PASSWORD');
      await requireEnabled(user.id);
      const { codes, rows } = newCodes();
      await db.tx(async (tx) => {
        await repo.replaceBackupCodes(tx, user.id, rows, clock.now());
        await audit.write(tx, actor, {
          action: 'auth.mfa_backup_codes_regenerated',
          tenantId: null,
          targetType: 'user',
          targetId: user.id,
        });
      });
      return { backupCodes: codes };
    },

    // Passkeys

    /** Decision: passkeys are added on top of TOTP (which also gives the backup codes). */
    async beginPasskeyRegistration(actor: Actor) {
      const user = await requireUser(actor.userId!);
      await requireEnabled(user.id);
      const now = clock.now();
      const existing = await repo.listPasskeys(user.id);
      const options = await generateRegistrationOptions({
        rpName: ISSUER,
        rpID,
        userName: user.email,
        userDisplayName: user.name,
        userID: new Uint8Array(Buffer.from(user.id.replace(/-/g, ''), 'hex')),
        attestationType: 'none',
        excludeCredentials: existing.map((p) => ({ id: p.credentialId, transports: p.transports })),
        authenticatorSelection: { residentKey: 'preferred', userVerification: 'preferred' },
        timeout: PASSKEY_CHALLENGE_SECONDS * 1000,
      });
      await db.tx((tx) => repo.setRegistrationChallenge(tx, user.id, options.challenge, addSeconds(now, PASSKEY_CHALLENGE_SECONDS), now));
      return options;
    },

    async finishPasskeyRegistration(actor: Actor, input: { response: RegistrationResponseJSON; name?: string }) {
      const user = await requireUser(actor.userId!);
      const account = await requireEnabled(user.id);
      const now = clock.now();
      const expectedChallenge = account.registrationChallenge;
      if (!expectedChallenge || !account.registrationExpiresAt || new Date(account.registrationExpiresAt) <= now) {
        throw badRequest('Start the passkey registration first', 'PASSKEY_NOT_STARTED');
      }
      await db.tx((tx) => repo.setRegistrationChallenge(tx, user.id, null, null, now));
      let info;
      try {
        const result = await verifyRegistrationResponse({
          response: { ...input.response, clientExtensionResults: input.response.clientExtensionResults ?? {} },
          expectedChallenge,
          expectedOrigin: origin,
          expectedRPID: rpID,
          requireUserVerification: false,
        });
        if (!result.verified) throw new Error('not verified');
        info = result.registrationInfo;
      } catch {
        throw badRequest('The passkey could not be verified', 'PASSKEY_REJECTED');
      }
      if (await repo.credentialTaken(info.credential.id)) throw conflict('This passkey is already registered', 'PASSKEY_EXISTS');
      const existing = await repo.listPasskeys(user.id);
      const id = newId();
      const name = input.name?.trim() || `Passkey ${existing.length + 1}`;
      await db.tx(async (tx) => {
        await repo.insertPasskey(tx, {
          id,
          userId: user.id,
          credentialId: info.credential.id,
          publicKey: Buffer.from(info.credential.publicKey).toString('base64url'),
          signCount: info.credential.counter,
          transports: info.credential.transports ?? input.response.response.transports ?? [],
          name,
          at: now,
        });
        await audit.write(tx, actor, {
          action: 'auth.mfa_passkey_added',
          tenantId: null,
          targetType: 'passkey',
          targetId: id,
          details: { name },
        });
      });
      return { id, name, createdAt: now.toISOString(), lastUsedAt: null };
    },

    listPasskeys: async (actor: Actor) => (await repo.listPasskeys(actor.userId!)).map(presentPasskey),

    async removePasskey(actor: Actor, id: string) {
      await db.tx(async (tx) => {
        if (!(await repo.deletePasskey(tx, actor.userId!, id))) throw notFound('No such passkey');
        await audit.write(tx, actor, { action: 'auth.mfa_passkey_removed', tenantId: null, targetType: 'passkey', targetId: id });
      });
    },

    // Remembered devices

    listDevices: async (actor: Actor) => (await repo.listDevices(actor.userId!, clock.now())).map(presentDevice),

    async revokeDevice(actor: Actor, id: string) {
      await db.tx(async (tx) => {
        if (!(await repo.deleteDevice(tx, actor.userId!, id))) throw notFound('No such remembered device');
        await audit.write(tx, actor, { action: 'auth.mfa_device_revoked', tenantId: null, targetType: 'remembered_device', targetId: id });
      });
    },

    /** Lost-device recovery: the same wipe as disable, by a hub admin, for someone else. */
    async adminReset(actor: Actor, userId: string) {
      await db.tx(async (tx) => {
        const user = await requireUser(userId, tx);
        if (actor.userId === user.id)
          throw forbidden('Hub admins cannot reset their own multi-factor sign-in; ask another hub admin', 'CANNOT_RESET_OWN_MFA');
        const hadMfa = Boolean((await repo.findAccount(user.id, tx))?.enrolledAt);
        await repo.wipe(tx, user.id);
        await audit.write(tx, actor, {
          action: 'auth.mfa_reset_by_admin',
          tenantId: null,
          targetType: 'user',
          targetId: user.id,
          details: { hadMfa },
        });
      });
    },
  };
}

export type MfaService = ReturnType<typeof createMfaService>;
