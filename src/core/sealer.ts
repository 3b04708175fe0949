import crypto from 'node:crypto';
import { deriveKey } from './crypto.ts';

/**
 * AES-256-GCM with a key derived from CHORUS_SECRET for one purpose. The owner's id is the
 * additional data, so a sealed value copied onto another person's row does not open.
 * Format: `v1.<iv>.<tag>.<ciphertext>`, each part base64url.
 */
export function createSealer(secret: string, purpose: string) {
  const key = deriveKey(secret, purpose);
  return {
    seal(plain: string, owner: string): string {
      const iv = crypto.randomBytes(12);
      const cipher = crypto.createCipheriv('aes-256-gcm', key, iv);
      cipher.setAAD(Buffer.from(owner));
      const ct = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ct.toString('base64url')].join('.');
    },
    open(sealed: string, owner: string): string {
      const [version, iv, tag, ct] = sealed.split('.');
      if (version !== 'v1' || !iv || !tag || ct === undefined) throw new Error('unknown sealed value format');
      const decipher = crypto.createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
      decipher.setAAD(Buffer.from(owner));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]).toString('utf8');
    },
  };
}
