import { createSigner, createVerifier } from 'fast-jwt';
import type { Clock } from './clock.ts';
import { deriveKey } from './crypto.ts';

export interface JwtClaims {
  sub: string;
  /** The server-side session the token belongs to: revoking it revokes the token. */
  sid: string;
}

export interface JwtService {
  sign(claims: JwtClaims): string;
  /** Returns the claims, or null when the token is malformed, forged or expired. */
  verify(token: string): JwtClaims | null;
}

const VERIFIED_MAX = 2000;

/**
 * HS256 tokens. iat/exp are written and checked against the injected clock by us (fast-jwt
 * only takes a fixed timestamp), so tests can move past expiry.
 */
export function createJwtService(secret: string, ttlSeconds: number, clock: Clock): JwtService {
  const key = deriveKey(secret, 'jwt');
  const signer = createSigner({ key, algorithm: 'HS256', noTimestamp: true });
  const verifier = createVerifier({ key, algorithms: ['HS256'], ignoreExpiration: true, ignoreNotBefore: true });
  // Tokens already verified, by their exact text (fast-jwt's own cache hashes each token first,
  // which cost more than the look-up saved); expiry is still checked on every use.
  const verified = new Map<string, { sub: string; sid: string; exp: number }>();
  return {
    sign(claims) {
      const iat = Math.floor(clock.now().getTime() / 1000);
      return signer({ sub: claims.sub, sid: claims.sid, iat, exp: iat + ttlSeconds });
    },
    verify(token) {
      let claims = verified.get(token);
      if (!claims) {
        try {
          const payload = verifier(token) as Record<string, unknown>;
          if (typeof payload.sub !== 'string' || typeof payload.sid !== 'string' || typeof payload.exp !== 'number') return null;
          claims = { sub: payload.sub, sid: payload.sid, exp: payload.exp };
        } catch {
          return null;
        }
        if (verified.size >= VERIFIED_MAX) verified.delete(verified.keys().next().value as string);
        verified.set(token, claims);
      }
      if (claims.exp * 1000 <= clock.now().getTime()) return null;
      return { sub: claims.sub, sid: claims.sid };
    },
  };
}
