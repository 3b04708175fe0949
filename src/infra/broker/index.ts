/**
 * The MQTT broker port (DESIGN.md §2): Aedes embedded in the hub by default, an external
 * Mosquitto 2 with the dynamic-security plugin when MQTT_URL is set. Either way the hub gets one
 * client with full access, and each satellite a login limited to `chorus/{tenant}/{satellite}/#`.
 */
import type { Config } from '../../config.ts';
import { createEmbeddedBroker } from './embedded.ts';
import { createMosquittoBroker } from './mosquitto.ts';
import type { BrokerLog, MessageHandler } from './hub-client.ts';
import type { Qos } from '../../protocol/topics.ts';
import type { RateLimit } from '../../core/rate-limit.ts';

export type { BrokerLog, MessageHandler, MessageMeta } from './hub-client.ts';
export { createEmbeddedBroker, HUB_USERNAME, WS_PATH, type EmbeddedBrokerOptions } from './embedded.ts';
export {
  createMosquittoBroker,
  DynsecError,
  DYNSEC_TOPIC,
  DYNSEC_RESPONSE_TOPIC,
  satelliteRole,
  type MosquittoBrokerOptions,
} from './mosquitto.ts';

/** How the embedded broker checks a satellite's MQTT login: username = satellite id, password = the secret minted at registration. */
export interface SatelliteCredentialCheck {
  (satelliteId: string, password: string): Promise<{ tenantId: string } | null>;
}

export interface Broker {
  /** bus: an api instance in split mode, whose commands the dispatcher runs (bus-broker.ts). */
  readonly kind: 'embedded' | 'mosquitto' | 'bus';
  /** What a satellite should dial (embedded: mqtt://host:MQTT_PORT; the registration reply returns it). */
  readonly brokerUrl: string;
  /** The WebSocket address (embedded: ws://host:MQTT_WS_PORT/mqtt; Mosquitto: MQTT_URL when it is ws(s)://). */
  readonly wsUrl: string | null;
  /**
   * Gives a satellite access limited to chorus/{tenant}/{satellite}/# (spec §5 item 4); re-provisioning
   * rotates the password and drops sessions on the old one. Embedded: lifts a revocation and drops live
   * sessions (logins are checked through SatelliteCredentialCheck). Mosquitto: dynsec client + role `sat-{id}`.
   */
  provisionSatellite(s: { satelliteId: string; tenantId: string; password: string }): Promise<void>;
  /** Removes access and drops the live connection (deletion, disconnection). Idempotent. */
  revokeSatellite(satelliteId: string): Promise<void>;
  /** The hub's own client (full access). QoS 2 exists for the config channel (spec §4). Resolves once the broker acknowledged (QoS ≥ 1). */
  publish(topic: string, payload: Buffer | string, opts?: { qos?: Qos }): Promise<void>;
  /**
   * Subscribes the hub with wildcards; resolves once granted, rejects when the broker refuses.
   * The handler gets the QoS the message was delivered with; use disjoint filters.
   */
  subscribe(pattern: string, handler: MessageHandler, opts?: { qos?: Qos }): Promise<void>;
  close(): Promise<void>;
}

export type BrokerConfig = Pick<
  Config,
  'publicUrl' | 'mqttPort' | 'mqttWsPort' | 'mqttHost' | 'mqttUrl' | 'mqttAdminUsername' | 'mqttAdminPassword'
>;

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
      log: opts.log,
    });
  }
  return createEmbeddedBroker({
    port: config.mqttPort,
    wsPort: config.mqttWsPort,
    host: config.mqttHost,
    publicUrl: config.publicUrl,
    check,
    log: opts.log,
    failures: opts.failures,
  });
}
