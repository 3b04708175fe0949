import { col, shape, type Db, type RowOf } from '../../infra/db/index.ts';

const COLUMNS = `id, user_id AS "userId", old_email AS "oldEmail", new_email AS "newEmail", created_at AS "createdAt",
  confirm_expires_at AS "confirmExpiresAt", undo_expires_at AS "undoExpiresAt", confirmed_at AS "confirmedAt",
  cancelled_at AS "cancelledAt", undone_at AS "undoneAt"`;

export const EmailChangeRow = shape({
  id: col.text(),
  userId: col.text(),
  oldEmail: col.text(),
  newEmail: col.text(),
  createdAt: col.date(),
  confirmExpiresAt: col.date(),
  undoExpiresAt: col.date(),
  confirmedAt: col.nullable(col.date()),
  cancelledAt: col.nullable(col.date()),
  undoneAt: col.nullable(col.date()),
});
export type EmailChangeRow = RowOf<typeof EmailChangeRow>;

export function createEmailChangeRepo(db: Db) {
  return {
    insert: (
      tx: Db,
      c: {
        id: string;
        userId: string;
        oldEmail: string;
        newEmail: string;
        confirmTokenHash: string;
        undoTokenHash: string;
        at: Date;
        confirmExpiresAt: Date;
        undoExpiresAt: Date;
      },
    ) =>
      tx.run(
        `INSERT INTO email_changes (id, user_id, old_email, new_email, confirm_token_hash, undo_token_hash, created_at,
           confirm_expires_at, undo_expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
        [c.id, c.userId, c.oldEmail, c.newEmail, c.confirmTokenHash, c.undoTokenHash, c.at, c.confirmExpiresAt, c.undoExpiresAt],
      ),

    /** The change still waiting for its confirmation link, if any (at most one is open). */
    findPending: (userId: string, at: Date, tx: Db = db) =>
      tx.maybeOne(
        EmailChangeRow,
        `SELECT ${COLUMNS} FROM email_changes
         WHERE user_id = $1 AND confirmed_at IS NULL AND cancelled_at IS NULL AND undone_at IS NULL AND confirm_expires_at > $2
         ORDER BY created_at DESC LIMIT 1`,
        [userId, at],
      ),

    findByConfirmHash: (hash: string, tx: Db = db) =>
      tx.maybeOne(EmailChangeRow, `SELECT ${COLUMNS} FROM email_changes WHERE confirm_token_hash = $1`, [hash]),

    findByUndoHash: (hash: string, tx: Db = db) =>
      tx.maybeOne(EmailChangeRow, `SELECT ${COLUMNS} FROM email_changes WHERE undo_token_hash = $1`, [hash]),

    /** Ends every unconfirmed change of the person (a newer request, a cancel, an undo). */
    cancelPending: (tx: Db, userId: string, at: Date) =>
      tx.run(
        `UPDATE email_changes SET cancelled_at = $2
         WHERE user_id = $1 AND confirmed_at IS NULL AND cancelled_at IS NULL AND undone_at IS NULL`,
        [userId, at],
      ),

    /** Marks the change confirmed, only if nothing else settled it first: false when it lost that race. */
    markConfirmed: async (tx: Db, id: string, at: Date) =>
      (await tx.run(
        `UPDATE email_changes SET confirmed_at = $2 WHERE id = $1 AND confirmed_at IS NULL AND cancelled_at IS NULL AND undone_at IS NULL`,
        [id, at],
      )) === 1,

    /** Marks the change undone, once: false when it was already. */
    markUndone: async (tx: Db, id: string, at: Date) =>
      (await tx.run('UPDATE email_changes SET undone_at = $2 WHERE id = $1 AND undone_at IS NULL', [id, at])) === 1,
  };
}
