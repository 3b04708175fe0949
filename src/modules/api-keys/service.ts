import type { Db } from '../../infra/db/index.ts';
import type { Clock } from '../../core/clock.ts';
import { type Actor, type Role, roleAtLeast, type TeamActor } from '../../core/actor.ts';
import type { AuditWriter } from '../audit/writer.ts';
import { newId, randomHex, sha256Hex } from '../../core/crypto.ts';
import { badRequest, forbidden, notFound } from '../../core/errors.ts';
import { createApiKeysRepo, type ApiKeyRow } from './repo.ts';
import { spendOrRefuse, type RateLimit } from '../../core/rate-limit.ts';

const iso = (d: Date | null) => (d ? new Date(d).toISOString() : null);

/**
 * What a key may do now: its own role, lowered to its creator's current role in the team; nothing
 * once the creator has left the team or is blocked (issue 33: a demoted admin's admin key acts as
 * a viewer from the moment of the demotion).
 */
export function effectiveKeyRole(role: Exclude<Role, 'owner'>, creatorRole: Role | null): Exclude<Role, 'owner'> | null {
  if (creatorRole === null) return null;
  return roleAtLeast(creatorRole, role) ? role : (creatorRole as Exclude<Role, 'owner'>);
}

export const presentApiKey = (k: ApiKeyRow) => ({
  id: k.id,
  tenantId: k.tenantId,
  name: k.name,
  role: k.role,
  effectiveRole: effectiveKeyRole(k.role, k.creatorRole),
  prefix: k.keyPrefix,
  createdBy: k.createdBy,
  createdByName: k.createdByName,
  createdAt: iso(k.createdAt)!,
  lastUsedAt: iso(k.lastUsedAt),
  expiresAt: iso(k.expiresAt),
});

/** Mints a key: 32 random bytes as hex. Only its SHA-256 is stored; the raw key is shown once. */
export function mintKey(): { key: string; hash: string; prefix: string } {
  const key = randomHex(32);
  return { key, hash: sha256Hex(key), prefix: key.slice(0, 8) };
}

export function createApiKeysService(deps: {
  db: Db;
  clock: Clock;
  audit: AuditWriter;
  /** API keys created per person. */
  createLimit: RateLimit;
}) {
  const { db, clock, audit } = deps;
  const repo = createApiKeysRepo(db);
  return {
    /** The auth resolver's key lookups, once per request presenting a key (auth/resolver.ts CredentialStore). */
    credential: {
      async findApiKeyByHash(keyHash: string, now: Date) {
        const k = await repo.activeByHash(keyHash, now);
        const role = k && effectiveKeyRole(k.role, k.creatorRole);
        return k && role ? { id: k.id, tenantId: k.tenantId, satelliteId: k.satelliteId, role, lastUsedAt: k.lastUsedAt } : null;
      },
      touchApiKey: repo.touch,
    },
    async create(actor: Actor, tenantId: string, input: { name: string; role: Exclude<Role, 'owner'>; expiresAt?: string }) {
      await spendOrRefuse(deps.createLimit, actor.userId ?? actor.ip, 'Too many API keys created; try again later');
      if (!roleAtLeast(actor.teamRole, input.role)) throw forbidden('A key cannot hold a higher role than its creator');
      const now = clock.now();
      const expiresAt = input.expiresAt ? new Date(input.expiresAt) : null;
      if (expiresAt && expiresAt <= now) throw badRequest('expiresAt must be in the future', 'VALIDATION_FAILED');
      const { key, hash, prefix } = mintKey();
      const id = newId();
      await db.tx(async (tx) => {
        await repo.insert(tx, {
          id,
          tenantId,
          satelliteId: null,
          name: input.name,
          role: input.role,
          keyHash: hash,
          keyPrefix: prefix,
          createdBy: actor.userId,
          at: now,
          expiresAt,
        });
        await audit.write(tx, actor, {
          action: 'admin.api_key_created',
          tenantId,
          targetType: 'api_key',
          targetId: id,
          details: { name: input.name, role: input.role },
        });
      });
      return { id, key, tenantId, name: input.name, role: input.role, prefix, createdAt: now.toISOString(), expiresAt: iso(expiresAt) };
    },

    list: async (tenantId: string) => (await repo.listActive(tenantId, clock.now())).map(presentApiKey),

    async revoke(actor: TeamActor, id: string) {
      const tenantId = actor.teamId;
      const k = await repo.find(tenantId, id);
      if (!k || k.revokedAt) throw notFound('No such key');
      await db.tx((tx) => repo.revoke(tx, tenantId, id, clock.now()));
    },

    /**
     * A satellite's key, in the satellites module's transaction: its previous keys stop working and
     * a new one is issued. Satellite keys belong to the device, not to the person who registered
     * it (created_by stays empty). Returns the raw key, shown once.
     */
    async replaceSatelliteKey(tx: Db, s: { tenantId: string; satelliteId: string }, at: Date): Promise<string> {
      const { key, hash, prefix } = mintKey();
      await repo.revokeOfSatellite(tx, s.satelliteId, at);
      await repo.insert(tx, {
        id: newId(),
        tenantId: s.tenantId,
        satelliteId: s.satelliteId,
        name: 'satellite',
        role: 'member',
        keyHash: hash,
        keyPrefix: prefix,
        createdBy: null,
        at,
        expiresAt: null,
      });
      return key;
    },

    revokeSatelliteKeys: (tx: Db, satelliteId: string, at: Date) => repo.revokeOfSatellite(tx, satelliteId, at),

    deleteSatelliteKeys: (tx: Db, satelliteId: string) => repo.deleteOfSatellite(tx, satelliteId),

    /** The guard's team resolver for `apiKey` resources (team keys only). */
    teamOfKey: repo.teamOfKey,

    /** Departure handler: a person's team keys stop with their membership. */
    revokeCreatedBy: (tx: Db, tenantId: string | null, userId: string) => repo.revokeCreatedBy(tx, tenantId, userId, clock.now()),
  };
}

export type ApiKeysService = ReturnType<typeof createApiKeysService>;
