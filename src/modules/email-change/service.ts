/**
 * Changing the sign-in address (issue 33 item 3). A stolen session must not be able to move the
 * account to another mailbox, where the next reset link would land: the new address takes
 * effect only once a link sent to it is opened, and the old address is told at once, with a link
 * that undoes the change for a week. Undoing is the mailbox owner taking the account back: the
 * old address returns, every session ends, open reset links die and the password is replaced by
 * an unknown one, so only a reset through the restored address gets in again.
 */
import type { Db } from '../../infra/db/index.ts';
import type { Mailer, MailMessage } from '../../infra/mail/index.ts';
import { type Clock, addSeconds } from '../../core/clock.ts';
import type { Actor } from '../../core/actor.ts';
import type { AuditWriter } from '../audit/writer.ts';
import { newId, randomHex, sha256Hex } from '../../core/crypto.ts';
import { type AppError, badRequest, conflict } from '../../core/errors.ts';
import { spendOrRefuse, type RateLimit } from '../../core/rate-limit.ts';
import type { UserAccounts, UserRow } from '../users/service.ts';
import { hashPassword } from '../users/passwords.ts';
import { createEmailChangeRepo, type EmailChangeRow } from './repo.ts';
import type { EmailChangeView } from './schemas.ts';

export const CONFIRM_TTL_SECONDS = 24 * 3600;
export const UNDO_TTL_SECONDS = 7 * 24 * 3600;

/** What ending a taken-over account needs of the auth module (its session store is one). */
export interface TakeoverRecovery {
  revokeUserSessions(tx: Db, userId: string, at: Date, exceptSessionId?: string | null): Promise<unknown>;
  useResetTokens(tx: Db, userId: string, at: Date): Promise<unknown>;
}

const sameAddress = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

export function createEmailChangeService(deps: {
  db: Db;
  clock: Clock;
  audit: AuditWriter;
  mail: Mailer;
  publicUrl: string;
  users: Pick<UserAccounts, 'findById' | 'findByEmail' | 'update'>;
  sessions: TakeoverRecovery;
  /** Change requests per account: each one mails two inboxes. */
  requestLimit: RateLimit;
}) {
  const { db, clock, audit, mail, users, sessions } = deps;
  const repo = createEmailChangeRepo(db);

  const view = (row: Pick<EmailChangeRow, 'newEmail' | 'confirmExpiresAt'>): EmailChangeView => ({
    newEmail: row.newEmail,
    expiresAt: new Date(row.confirmExpiresAt).toISOString(),
  });

  /** A refused link: audited in its own committed transaction, then answered. */
  async function refuse(actor: Actor, user: UserRow | null, reason: string, error: AppError): Promise<never> {
    await db.tx((tx) =>
      audit.write(
        tx,
        { ...actor, userId: user?.id ?? actor.userId, email: user?.email ?? actor.email },
        { action: 'user.email_change_failed', tenantId: null, targetType: 'user', targetId: user?.id ?? null, details: { reason } },
      ),
    );
    throw error;
  }

  /** A token's row and its person, or the refusal every unknown token gets (counted as a guess). */
  async function open(actor: Actor, row: EmailChangeRow | null): Promise<{ row: EmailChangeRow; user: UserRow }> {
    const user = row ? await users.findById(row.userId) : null;
    if (!row || !user) return refuse(actor, null, 'invalid', badRequest('This link is not valid', 'INVALID_TOKEN'));
    return { row, user };
  }

  return {
    /** The change waiting for confirmation, for GET /auth/me and the account page. */
    async pending(userId: string): Promise<EmailChangeView | null> {
      const row = await repo.findPending(userId, clock.now());
      return row ? view(row) : null;
    },

    /**
     * Records a requested address inside the profile update's transaction; the caller sends the
     * returned mails once it commits. A newer request replaces an older one.
     */
    async request(tx: Db, actor: Actor, user: UserRow, newEmail: string): Promise<{ change: EmailChangeView; mails: MailMessage[] }> {
      const taken = await users.findByEmail(newEmail, tx);
      if (taken && taken.id !== user.id) throw conflict('An account with this email exists', 'EMAIL_TAKEN');
      await spendOrRefuse(deps.requestLimit, user.id, 'Too many address changes for this account; try again later');
      const now = clock.now();
      const confirmToken = randomHex(32);
      const undoToken = randomHex(32);
      const id = newId();
      const confirmExpiresAt = addSeconds(now, CONFIRM_TTL_SECONDS);
      await repo.cancelPending(tx, user.id, now);
      await repo.insert(tx, {
        id,
        userId: user.id,
        oldEmail: user.email,
        newEmail,
        confirmTokenHash: sha256Hex(confirmToken),
        undoTokenHash: sha256Hex(undoToken),
        at: now,
        confirmExpiresAt,
        undoExpiresAt: addSeconds(now, UNDO_TTL_SECONDS),
      });
      // The addresses stay in the change's row (erased with the person), not in the audit log.
      await audit.write(tx, actor, {
        action: 'user.email_change_requested',
        tenantId: null,
        targetType: 'user',
        targetId: user.id,
        details: { changeId: id },
      });
      const mails: MailMessage[] = [
        {
          to: newEmail,
          subject: 'Confirm your new Chorus email address',
          text:
            `Someone asked to use this address for the Chorus account of ${user.name}.\n\n` +
            `Open this link within 24 hours to confirm it:\n${deps.publicUrl}/confirm-email?token=${confirmToken}\n\n` +
            'If it was not you, ignore this message: the address will not be used.',
        },
        {
          to: user.email,
          subject: 'Your Chorus email address is being changed',
          text:
            `Someone signed in to your Chorus account asked to change its email address from ${user.email} to ${newEmail}. ` +
            'The new address takes effect once it is confirmed from that mailbox.\n\n' +
            `If it was not you, open this link within 7 days to undo the change:\n${deps.publicUrl}/undo-email-change?token=${undoToken}\n\n` +
            'Undoing keeps (or brings back) this address, signs every device out and asks you to choose a new password ' +
            'through "Forgot your password?".',
        },
      ];
      return { change: view({ newEmail, confirmExpiresAt }), mails };
    },

    /** Sends what request() prepared; a mail that cannot leave does not undo the request. */
    async send(mails: MailMessage[]): Promise<void> {
      for (const m of mails) await mail.send(m);
    },

    /** The person withdraws a change still waiting for its link. */
    async cancel(actor: Actor): Promise<void> {
      await db.tx(async (tx) => {
        const cancelled = await repo.cancelPending(tx, actor.userId!, clock.now());
        if (cancelled === 0) return;
        await audit.write(tx, actor, { action: 'user.email_change_cancelled', tenantId: null, targetType: 'user', targetId: actor.userId });
      });
    },

    /** The link sent to the new address: from now on the account signs in and gets mail there. Sessions stay. */
    async confirm(actor: Actor, token: string): Promise<{ email: string }> {
      const now = clock.now();
      const { row, user } = await open(actor, await repo.findByConfirmHash(sha256Hex(token)));
      const fail = (reason: string, error: AppError) => refuse(actor, user, reason, error);
      if (row.confirmedAt || row.cancelledAt || row.undoneAt)
        return fail('used', badRequest('This link has already been used', 'TOKEN_USED'));
      if (new Date(row.confirmExpiresAt) <= now) return fail('expired', badRequest('This link has expired', 'TOKEN_EXPIRED'));
      // The address moved since the request (a hub admin changed it): this change no longer applies.
      if (!sameAddress(user.email, row.oldEmail)) return fail('stale', badRequest('This link has already been used', 'TOKEN_USED'));
      const taken = await users.findByEmail(row.newEmail);
      if (taken && taken.id !== user.id) return fail('taken', conflict('An account with this email exists', 'EMAIL_TAKEN'));
      await db.tx(async (tx) => {
        if (!(await repo.markConfirmed(tx, row.id, now))) throw badRequest('This link has already been used', 'TOKEN_USED');
        await users.update(tx, user.id, { email: row.newEmail }, now);
        await audit.write(
          tx,
          { ...actor, userId: user.id, email: row.newEmail },
          { action: 'user.email_change_confirmed', tenantId: null, targetType: 'user', targetId: user.id, details: { changeId: row.id } },
        );
      });
      return { email: row.newEmail };
    },

    /**
     * The link sent to the old address: the change is cancelled, or reverted when it was already
     * confirmed, and the account is secured as after a takeover (see the module comment).
     */
    async undo(actor: Actor, token: string): Promise<void> {
      const now = clock.now();
      const { row, user } = await open(actor, await repo.findByUndoHash(sha256Hex(token)));
      const fail = (reason: string, error: AppError) => refuse(actor, user, reason, error);
      if (row.undoneAt) return fail('used', badRequest('This link has already been used', 'TOKEN_USED'));
      if (new Date(row.undoExpiresAt) <= now) return fail('expired', badRequest('This link has expired', 'TOKEN_EXPIRED'));
      const restore = row.confirmedAt !== null && !sameAddress(user.email, row.oldEmail);
      if (restore) {
        const taken = await users.findByEmail(row.oldEmail);
        if (taken && taken.id !== user.id) return fail('taken', conflict('An account with this email exists', 'EMAIL_TAKEN'));
      }
      // Nobody knows this password: the way back in is a reset link to the restored address.
      const passwordHash = await hashPassword(randomHex(32));
      await db.tx(async (tx) => {
        if (!(await repo.markUndone(tx, row.id, now))) throw badRequest('This link has already been used', 'TOKEN_USED');
        await repo.cancelPending(tx, user.id, now);
        await users.update(tx, user.id, { passwordHash, ...(restore ? { email: row.oldEmail } : {}) }, now);
        await sessions.revokeUserSessions(tx, user.id, now);
        await sessions.useResetTokens(tx, user.id, now);
        await audit.write(
          tx,
          { ...actor, userId: user.id, email: restore ? row.oldEmail : user.email },
          {
            action: 'user.email_change_undone',
            tenantId: null,
            targetType: 'user',
            targetId: user.id,
            details: { changeId: row.id, restored: restore },
          },
        );
      });
    },
  };
}

export type EmailChangeService = ReturnType<typeof createEmailChangeService>;
