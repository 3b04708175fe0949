/**
 * Webhook signatures: `X-Service-Signature: sha256=<hex>`, an HMAC-SHA256 of the exact body bytes
 * keyed with the channel's secret. Receivers verify over the raw bytes, before parsing JSON, since
 * re-serialising can change them.
 */
import crypto from 'node:crypto';

export const SIGNATURE_HEADER = 'X-Service-Signature';
export const DELIVERY_ID_HEADER = 'X-Service-Delivery';
export const EVENT_HEADER = 'X-Service-Event';

export function signatureOf(secret: string, rawBody: string | Buffer): string {
  return `sha256=${crypto.createHmac('sha256', secret).update(rawBody).digest('hex')}`;
}

/** Constant-time comparison, so a receiver's answer times do not leak how much of a forged signature was right. */
export function verifySignature(secret: string, rawBody: Buffer, header: string | undefined): boolean {
  if (header === undefined) return false;
  const expected = Buffer.from(signatureOf(secret, rawBody));
  const given = Buffer.from(header.trim());
  return given.length === expected.length && crypto.timingSafeEqual(given, expected);
}
