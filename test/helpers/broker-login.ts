/**
 * The verdict of the broker's own login check (the one the hub's embedded broker runs) on a
 * satellite's MQTT credentials, for tests that need the verdict without dialling the broker.
 */
import type { Hub } from './hub.ts';
import { satelliteCredentialCheck } from '../../src/modules/satellites/broker-credentials.ts';

export function checkBrokerLogin(hub: Hub, satelliteId: string, password: string): Promise<{ tenantId: string } | null> {
  return satelliteCredentialCheck(hub.infra.db)(satelliteId, password);
}
