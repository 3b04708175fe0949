import type { Db } from '../../infra/db/types.ts';
import type { SatelliteCredentialCheck } from '../../infra/broker/types.ts';
import { safeEqual, sha256Hex } from '../../core/crypto.ts';
import { createSatellitesRepo } from './repo.ts';

/**
 * The embedded broker's login check: username = satellite id, password = the 32-byte secret
 * minted at registration, of which the satellites table keeps only the SHA-256 (the secret is
 * random, so a fast hash is enough and keeps reconnect storms cheap).
 */
export function satelliteCredentialCheck(db: Db): SatelliteCredentialCheck {
  const repo = createSatellitesRepo(db);
  return async (satelliteId, password) => {
    // Any MQTT username reaches here; only a uuid can be compared with the id column.
    if (!/^[0-9a-f-]{36}$/i.test(satelliteId)) return null;
    const c = await repo.credentials(satelliteId);
    if (!c?.passwordHash || !safeEqual(c.passwordHash, sha256Hex(password))) return null;
    return { tenantId: c.tenantId };
  };
}
