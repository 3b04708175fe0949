/**
 * A short-lived memory of who a session token belongs to, so a page that loads forty species
 * squares checks its session once instead of forty times (issue 20: the sign-in check was most
 * of a cached square's cost).
 *
 * Correctness rests on two rules rather than on knowing every write that could change a
 * principal (sign-out, a block, a role change, a preference, MFA enrolment, a password reset…):
 * - any state-changing HTTP request, in any process of the hub, forgets everything (`forget`,
 *   called before its answer leaves, and relayed to the other processes by the bus), and a look-up
 *   that was already under way when that happened does not store its answer;
 * - what is remembered is trusted for `ttlMs` of the hub's clock at most, which bounds what a
 *   writer outside HTTP (an operator command in another process) can leave stale.
 * Refusals are never remembered: an unknown token always asks the database.
 */
import type { FastifyInstance } from 'fastify';
import type { Bus } from '../../infra/bus/index.ts';
import type { ApiKeyPrincipal, CredentialStore, SessionPrincipal } from './resolver.ts';

export const PRINCIPAL_TTL_MS = 5_000;
const MAX_ENTRIES = 10_000;

interface Entry {
  principal: SessionPrincipal;
  until: number;
}

export interface CachedCredentials extends CredentialStore {
  /** Drops every remembered principal; look-ups already under way do not store theirs. */
  forget(): void;
}

export function cacheCredentials(inner: CredentialStore, ttlMs = PRINCIPAL_TTL_MS): CachedCredentials {
  const entries = new Map<string, Entry>();
  let generation = 0;

  async function remembered(key: string, now: Date, load: () => Promise<SessionPrincipal | null>) {
    const hit = entries.get(key);
    const t = now.getTime();
    // A clock that moved backwards (tests set it) makes the entry as suspect as an expired one.
    if (hit && t < hit.until && t >= hit.until - ttlMs) return hit.principal;
    if (hit) entries.delete(key);
    const seen = generation;
    const principal = await load();
    if (principal && seen === generation) {
      if (entries.size >= MAX_ENTRIES) entries.delete(entries.keys().next().value as string);
      entries.set(key, { principal, until: t + ttlMs });
    }
    return principal;
  }

  return {
    findSessionByTokenHash: (tokenHash, now) => remembered(`t:${tokenHash}`, now, () => inner.findSessionByTokenHash(tokenHash, now)),
    findSessionById: (sessionId, userId, now) =>
      remembered(`s:${sessionId}:${userId}`, now, () => inner.findSessionById(sessionId, userId, now)),
    // API keys stay uncached: satellites and scripts use them for writes, where the look-up is not the cost.
    findApiKeyByHash: (keyHash: string, now: Date): Promise<ApiKeyPrincipal | null> => inner.findApiKeyByHash(keyHash, now),
    touchApiKey: (id, now) => inner.touchApiKey(id, now),
    forget() {
      generation++;
      entries.clear();
    },
  };
}

const READS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Every state-changing request makes every process forget, before its answer leaves: the caller
 * who just signed out, blocked someone or changed a role is never answered from memory after.
 */
export function forgetOnWrites(app: FastifyInstance, cache: CachedCredentials, bus: Bus): void {
  bus.subscribe('auth.principals_changed', () => cache.forget());
  app.addHook('onSend', (req, _reply, payload, done) => {
    if (READS.has(req.method)) return done(null, payload);
    cache.forget();
    bus.publish('auth.principals_changed', {}).then(
      () => done(null, payload),
      () => done(null, payload),
    );
  });
}
