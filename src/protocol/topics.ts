/**
 * Broker topics (satellite protocol §4, root word fixed in issue 4):
 * `chorus/{tenant_id}/{satellite_id}/{channel}`.
 */

export const TOPIC_ROOT = 'chorus';

export const topicOf = (tenantId: string, satelliteId: string, channel: string) => `chorus/${tenantId}/${satelliteId}/${channel}`;

/** Everything one satellite may publish and subscribe under (spec §5 item 4), with the trailing slash. */
export const satellitePrefix = (tenantId: string, satelliteId: string) => `${TOPIC_ROOT}/${tenantId}/${satelliteId}/`;

/** Channels a satellite publishes, with the QoS the spec gives them. */
export const SATELLITE_TO_HUB = {
  audio: 1,
  telemetry: 1,
  heartbeat: 1,
  'config-request': 1,
  'live-audio': 0,
  'log-response': 1,
  /**
   * Not in the specification (issue 32 item 6): a satellite stopping cleanly says so before it
   * disconnects, `{satelliteId, tenantId, timestamp}`, so the hub shows it offline at once. Under
   * the satellite's own prefix, so both brokers' access rules already allow it; a hub that does
   * not know the channel never subscribes to it.
   */
  goodbye: 1,
} as const;

/** Channels the hub publishes to a satellite, with the QoS the spec gives them. */
export const HUB_TO_SATELLITE = {
  config: 2,
  ack: 1,
  update: 1,
  detection: 1,
  'live-start': 1,
  'live-stop': 1,
  'log-request': 1,
} as const;

export type SatelliteChannel = keyof typeof SATELLITE_TO_HUB;
export type HubChannel = keyof typeof HUB_TO_SATELLITE;
export type Channel = SatelliteChannel | HubChannel;
export type Qos = 0 | 1 | 2;

export const CHANNEL_QOS: Readonly<Record<Channel, Qos>> = { ...SATELLITE_TO_HUB, ...HUB_TO_SATELLITE };

/** The ingester's subscription for one satellite-to-hub channel: wildcards on tenant and satellite. */
export const ingestPattern = (channel: SatelliteChannel) => `${TOPIC_ROOT}/+/+/${channel}`;

/** A tenant or satellite id that can stand as one topic level (and inside an ACL pattern). */
export function isTopicSegment(s: string): boolean {
  return s.length > 0 && s.length <= 128 && !/[/+#]/.test(s) && !s.includes('\u0000') && !s.startsWith('$');
}

/** Splits `chorus/{tenant}/{satellite}/{channel}`; null for any other shape. */
export function parseTopic(topic: string): { tenantId: string; satelliteId: string; channel: string } | null {
  const parts = topic.split('/');
  if (parts.length !== 4 || parts[0] !== TOPIC_ROOT) return null;
  const [, tenantId, satelliteId, channel] = parts;
  if (!isTopicSegment(tenantId) || !isTopicSegment(satelliteId) || !isTopicSegment(channel)) return null;
  return { tenantId, satelliteId, channel };
}

/** MQTT 3.1.1 topic-filter matching (`+` one level, `#` the rest including the parent level). */
export function topicMatches(filter: string, topic: string): boolean {
  if (topic.startsWith('$') !== filter.startsWith('$')) return false; // MQTT-4.7.2-1
  const f = filter.split('/');
  const t = topic.split('/');
  for (let i = 0; i < f.length; i++) {
    if (f[i] === '#') return true;
    if (i >= t.length) return false;
    if (f[i] !== '+' && f[i] !== t[i]) return false;
  }
  return f.length === t.length;
}

/** A well-formed subscription filter: `#` only last and alone in its level, `+` alone in its level. */
export function isValidFilter(filter: string): boolean {
  if (filter.length === 0 || filter.includes('\u0000')) return false;
  const levels = filter.split('/');
  return levels.every((l, i) => (l.includes('#') ? l === '#' && i === levels.length - 1 : !l.includes('+') || l === '+'));
}

/**
 * Whether a topic (publish) or filter (subscribe) lies entirely under a satellite's prefix. A filter
 * with a wildcard in the tenant or satellite level reaches other satellites and is refused.
 */
export function isUnderPrefix(prefix: string, topicOrFilter: string): boolean {
  return topicOrFilter.length > prefix.length && topicOrFilter.startsWith(prefix);
}
