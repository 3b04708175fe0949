/**
 * Common and breached passwords (NIST SP 800-63B §5.1.1.2: a new password is checked against
 * "passwords obtained from previous breach corpuses" and "commonly-used or expected" ones).
 * The list is @zxcvbn-ts/language-common's `passwords-common` (MIT, ~49,000 passwords ranked by
 * frequency in public breach corpora), loaded once on first use.
 */
import { dictionary } from '@zxcvbn-ts/language-common';

let common: Set<string> | null = null;

const listed = (): Set<string> => (common ??= new Set(dictionary['passwords-common'].map((p) => String(p).toLowerCase())));

/**
 * Whether `password` is a common one, or a common one with digits and punctuation around it
 * ("Sunshine2024!", "!!dragon123"): the expected variations a guesser tries first.
 */
export function isCommonPassword(password: string): boolean {
  const lower = password.toLowerCase();
  const set = listed();
  if (set.has(lower)) return true;
  const core = lower.replace(/^[\d\W_]+|[\d\W_]+$/g, '');
  return core.length >= 4 && core !== lower && set.has(core);
}
