import { hash, verify } from '@node-rs/argon2';
import { badRequest, validationFailed } from '../../core/errors.ts';
import { isCommonPassword } from './common-passwords.ts';

export const PASSWORD_MIN = 10;
export const PASSWORD_MAX = 256;

// argon2id (the library's default algorithm) with its default cost: 19 MiB, 2 passes.
export const hashPassword = (password: string): Promise<string> => hash(password);

export async function verifyPassword(hashed: string, password: string): Promise<boolean> {
  try {
    return await verify(hashed, password);
  } catch {
    return false;
  }
}

// Verified against on unknown emails so a miss costs the same time as a hit.
let dummyHash: Promise<string> | null = null;
export async function burnPasswordCheck(password: string): Promise<void> {
  dummyHash ??= hashPassword('chorus-timing-equaliser');
  await verifyPassword(await dummyHash, password);
}

/** Password rule: 10 to 256 characters, not only spaces, and not a common or breached password (common-passwords.ts). */
export function checkPasswordRule(password: string, field = 'password'): void {
  if (password.length < PASSWORD_MIN || password.length > PASSWORD_MAX || password.trim() === '') {
    throw validationFailed(`${field} must be ${PASSWORD_MIN} to ${PASSWORD_MAX} characters`, [
      { in: 'body', path: field, message: `must be ${PASSWORD_MIN} to ${PASSWORD_MAX} characters` },
    ]);
  }
  if (isCommonPassword(password)) {
    throw badRequest(`${field} is one of the most common passwords, found in breaches: choose another`, 'PASSWORD_TOO_COMMON', [
      { in: 'body', path: field, message: 'is a common or breached password' },
    ]);
  }
}
