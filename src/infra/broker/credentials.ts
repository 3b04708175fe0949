import type { Db } from '../db/index.ts';
import { safeEqual, sha256Hex } from '../../core/crypto.ts';
import type { SatelliteCredentialCheck } from './types.ts';

/**
 * The embedded broker's login check: username = satellite id, password = the 32-byte secret
 * minted at registration, of which the satellites table keeps only the SHA-256 (the secret is
 * random, so a fast hash is enough and keeps reconnect storms cheap).
 */
export function dbCredentialCheck(db: Db): SatelliteCredentialCheck {
  return async (satelliteId, password) => {
    if (!/^[0-9a-f-]{36}$/i.test(satelliteId)) return null;
    const row = await db.maybeOne<{ tenantId: string; hash: string | null }>(
      'SELECT tenant_id AS "tenantId", mqtt_password_hash AS hash FROM satellites WHERE id = $1',
      [satelliteId],
    );
    if (!row?.hash || !safeEqual(row.hash, sha256Hex(password))) return null;
    return { tenantId: row.tenantId };
  };
}
