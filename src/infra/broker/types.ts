/**
 * The MQTT broker port (DESIGN.md §2): what the hub asks of a broker, whichever adapter runs it.
 * Adapters import this file; index.ts only picks one.
 */
import type { Config } from '../../config.ts';
import type { Qos } from '../../protocol/topics.ts';

export interface MessageMeta {
  readonly qos: Qos;
  readonly retain: boolean;
}

/** A subscriber. It may return a promise; a rejection is reported, never fatal. */
export type MessageHandler = (topic: string, payload: Buffer, meta: MessageMeta) => void | Promise<void>;

export interface BrokerLog {
  warn(obj: object, msg: string): void;
  /** Connection changes (reconnects, re-subscriptions); warn stands in when absent. */
  info?(obj: object, msg: string): void;
  error?(obj: object, msg: string): void;
}

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
  /** The embedded broker: MQTT sessions connected now (system status, GET /metrics); absent elsewhere. */
  connectedClients?(): number;
  /** Whether the hub's own connection to the broker is up (embedded: open; Mosquitto: the client's state); absent for the bus. */
  connected?(): boolean;
  /**
   * Shutdown, before the subscribers stop: no more deliveries. Mosquitto: what arrives afterwards
   * stays unacknowledged in the hub's persistent session for the next dispatcher (issue 21).
   */
  suspend?(): void;
}

export type BrokerConfig = Pick<
  Config,
  | 'publicUrl'
  | 'mqttPort'
  | 'mqttWsPort'
  | 'mqttHost'
  | 'mqttWsPublicUrl'
  | 'mqttUrl'
  | 'mqttAdminUsername'
  | 'mqttAdminPassword'
  | 'secret'
  | 'mqttMaxPacketBytes'
  | 'trustProxy'
  | 'dispatcherId'
>;
