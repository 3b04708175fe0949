import crypto from 'node:crypto';
import { deriveKey } from '../../core/crypto.ts';

// No 0/o, 1/l/i: codes are read off paper and typed by hand.
const CODE_ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';

/** A backup code: 10 characters (about 49 bits) shown as `xxxxx-xxxxx`. */
export function newBackupCode(): string {
  let s = '';
  for (let i = 0; i < 10; i++) s += CODE_ALPHABET[crypto.randomInt(CODE_ALPHABET.length)];
  return `${s.slice(0, 5)}-${s.slice(5)}`;
}

/** Case, spaces and dashes do not matter when a code is typed back. */
export const normalizeBackupCode = (code: string): string => code.toLowerCase().replace(/[^a-z0-9]/g, '');

/**
 * Backup codes are stored as HMAC-SHA256 under a key derived from CHORUS_SECRET: a leaked
 * database alone does not allow trying the ~2^49 codes offline.
 */
export function createCodeHasher(secret: string) {
  const key = deriveKey(secret, 'mfa-backup-codes');
  return (code: string) => crypto.createHmac('sha256', key).update(normalizeBackupCode(code)).digest('hex');
}
