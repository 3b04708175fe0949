import crypto from 'node:crypto';

export const newId = (): string => crypto.randomUUID();

export const randomHex = (bytes = 32): string => crypto.randomBytes(bytes).toString('hex');

export const sha256Hex = (value: string): string => crypto.createHash('sha256').update(value).digest('hex');

export function hmacHex(secret: string, value: string): string {
  return crypto.createHmac('sha256', secret).update(value).digest('hex');
}

export function safeEqual(a: string, b: string): boolean {
  // Lengths may differ openly (they are not the secret); only equal-length texts are compared in constant time.
  if (a.length !== b.length) return false;
  const ab = Buffer.from(a);
  const bb = Buffer.from(b);
  return ab.length === bb.length && crypto.timingSafeEqual(ab, bb);
}

/** Derives a purpose-bound key so one CHORUS_SECRET never signs two kinds of token alike. */
export function deriveKey(secret: string, purpose: string): Buffer {
  return Buffer.from(crypto.hkdfSync('sha256', secret, 'chorus', purpose, 32));
}
