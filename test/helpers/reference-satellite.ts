/**
 * The reference satellite (src/satellite) as a test runs it against a hub: registered by a team
 * member through the API, with its outbox in `dir`, quick reconnects and a quiet heartbeat. Not
 * started: the test starts it (and stops it).
 */
import crypto from 'node:crypto';
import path from 'node:path';
import { Satellite } from '../../src/satellite/client.ts';
import { Outbox } from '../../src/satellite/outbox.ts';
import { registerSatellite } from '../../src/satellite/cli.ts';
import type { SatelliteOptions } from '../../src/satellite/options.ts';

export async function referenceSatellite(
  o: { hubUrl: string; token: string; tenantId: string; dir: string; name: string } & Pick<SatelliteOptions, 'source'> &
    Partial<Omit<SatelliteOptions, 'credentials' | 'outbox' | 'dataDir'>>,
): Promise<Satellite> {
  const { hubUrl, token, tenantId, dir, name, ...options } = o;
  const credentials = await registerSatellite({
    hub: hubUrl,
    token,
    tenantId,
    name: `${name} ${crypto.randomBytes(3).toString('hex')}`,
    deviceId: `test-${crypto.randomUUID()}`,
  });
  return new Satellite({
    reconnectMs: 50,
    heartbeatIntervalMs: 60_000,
    ...options,
    credentials,
    outbox: await Outbox.open(path.join(dir, 'outbox')),
    dataDir: dir,
  });
}
