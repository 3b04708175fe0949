/**
 * The MQTT broker port (DESIGN.md §2): Aedes embedded in the hub by default, an external
 * Mosquitto 2 with the dynamic-security plugin when MQTT_URL is set. Either way the hub gets one
 * client with full access, and each satellite a login limited to `chorus/{tenant}/{satellite}/#`.
 */
import { createEmbeddedBroker } from './embedded.ts';
import { createMosquittoBroker } from './mosquitto.ts';
import { hubIdOf } from './hub-claim.ts';
import { peerAddressRule } from './peer.ts';
import type { Broker, BrokerConfig, BrokerLog, SatelliteCredentialCheck } from './types.ts';
import type { RateLimit } from '../../core/rate-limit.ts';

export type { Broker, BrokerConfig, BrokerLog, MessageHandler, MessageMeta, SatelliteCredentialCheck } from './types.ts';
export { createEmbeddedBroker, HUB_USERNAME, WS_PATH, type EmbeddedBrokerOptions } from './embedded.ts';
export {
  createMosquittoBroker,
  DynsecError,
  DYNSEC_TOPIC,
  DYNSEC_RESPONSE_TOPIC,
  satelliteRole,
  type MosquittoBrokerOptions,
} from './mosquitto.ts';
export { hubIdOf, OWNER_TOPIC } from './hub-claim.ts';

/** The embedded broker by default; Mosquitto (dynamic security) when MQTT_URL is set. */
export async function createBroker(
  config: BrokerConfig,
  check: SatelliteCredentialCheck,
  opts: { log?: BrokerLog; failures?: RateLimit } = {},
): Promise<Broker> {
  if (config.mqttUrl) {
    if (!config.mqttAdminUsername || !config.mqttAdminPassword)
      throw new Error('MQTT_URL needs MQTT_ADMIN_USERNAME and MQTT_ADMIN_PASSWORD');
    return createMosquittoBroker({
      url: config.mqttUrl,
      adminUsername: config.mqttAdminUsername,
      adminPassword: config.mqttAdminPassword,
      hubId: hubIdOf(config.secret),
      dispatcherId: config.dispatcherId,
      publicUrl: config.publicUrl,
      log: opts.log,
    });
  }
  return createEmbeddedBroker({
    port: config.mqttPort,
    wsPort: config.mqttWsPort,
    host: config.mqttHost,
    publicUrl: config.publicUrl,
    wsPublicUrl: config.mqttWsPublicUrl,
    check,
    log: opts.log,
    failures: opts.failures,
    peerAddress: peerAddressRule(config.trustProxy),
    maxPacketBytes: config.mqttMaxPacketBytes,
  });
}
