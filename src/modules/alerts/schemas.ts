import { Type, type Static } from 'typebox';
import { Nullable, OneOf, Open, Paging, Uuid } from '../../core/schemas.ts';

/**
 * Alert rules, channels, alerts and deliveries (issue 17; spec §2 "Alerting and export
 * resources", §4 "Alert rules, channels, scheduled exports"). One source for validation, the
 * service's types and the OpenAPI document the dashboard's client is generated from.
 */

export const RULE_TYPES = ['detection', 'absence', 'trend'] as const;
export const SYSTEM_RULES = ['rare_species', 'first_of_day', 'first_of_season', 'satellite_offline'] as const;
export const CHANNEL_TYPES = [
  'email',
  'webhook',
  'chat_blocks',
  'chat_bot',
  'chat_cards',
  'chat_embeds',
  'mqtt_home_assistant',
  'birdweather',
] as const;
/** Channel types that carry every detection of the team (issue 38), not the alerts of a rule. */
export const STREAM_CHANNEL_TYPES = ['mqtt_home_assistant', 'birdweather'] as const;
export type StreamChannelType = (typeof STREAM_CHANNEL_TYPES)[number];
export const ALERT_EVENTS = [
  'rare_species',
  'first_of_day',
  'first_of_season',
  'satellite_offline',
  'absence',
  'trend',
  'custom_rule',
  'test',
] as const;
export type AlertEvent = (typeof ALERT_EVENTS)[number];
export type ChannelType = (typeof CHANNEL_TYPES)[number];
export const DELIVERY_STATUSES = ['pending', 'retrying', 'delivered', 'failed'] as const;

const Clock = Type.String({ pattern: '^([01][0-9]|2[0-3]):[0-5][0-9]$', description: 'HH:MM' });
/** A daily window; start after end wraps past midnight (22:00–06:00). */
export const DailyWindow = Type.Object({ start: Clock, end: Clock }, { additionalProperties: false });
export type DailyWindow = Static<typeof DailyWindow>;

const Ids = Type.Array(Uuid, { maxItems: 200, uniqueItems: true });

/**
 * What a rule looks at. One object for every type; the service refuses members that mean
 * nothing for the rule's type (docs/decisions.md "Alert rule conditions").
 */
export const RuleConditions = Type.Object(
  {
    /** A system rule: the team switches it on without writing conditions. */
    system: Type.Optional(OneOf(SYSTEM_RULES)),
    // detection
    species: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
        maxItems: 500,
        description: 'Species codes or scientific names; empty: any',
      }),
    ),
    minConfidence: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    confidenceKind: Type.Optional(OneOf(['raw', 'calibrated'] as const)),
    satelliteIds: Type.Optional(Ids),
    categories: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 40 }), { maxItems: 20, uniqueItems: true })),
    rareOnly: Type.Optional(Type.Boolean()),
    firstOfDay: Type.Optional(Type.Boolean()),
    firstOfSeason: Type.Optional(Type.Boolean()),
    verifiedOnly: Type.Optional(Type.Boolean({ description: 'Fires when a matching detection is confirmed by vote' })),
    // absence
    minutes: Type.Optional(Type.Integer({ minimum: 5, maximum: 43_200, description: 'Absence: silence that fires the rule' })),
    window: Type.Optional(DailyWindow),
    // trend
    metric: Type.Optional(OneOf(['diversity', 'detections'] as const)),
    direction: Type.Optional(OneOf(['fall', 'rise'] as const)),
    percent: Type.Optional(Type.Number({ minimum: 1, maximum: 10_000 })),
    windowMinutes: Type.Optional(Type.Integer({ minimum: 15, maximum: 43_200 })),
    minBaseline: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, description: 'Trend: least count in the earlier window' })),
  },
  { additionalProperties: false },
);
export type RuleConditions = Static<typeof RuleConditions>;

const RuleFields = {
  name: Type.String({ minLength: 1, maxLength: 100 }),
  type: OneOf(RULE_TYPES),
  enabled: Type.Optional(Type.Boolean({ default: true })),
  conditions: Type.Optional(RuleConditions),
  channelIds: Type.Optional(Type.Array(Uuid, { maxItems: 20, uniqueItems: true })),
  cooldownMinutes: Type.Optional(Type.Integer({ minimum: 0, maximum: 10_080 })),
  cooldownScope: Type.Optional(OneOf(['satellite', 'species'] as const)),
  quietHours: Type.Optional(Nullable(DailyWindow)),
};
export const RuleCreateBody = Type.Object({ tenantId: Uuid, ...RuleFields }, { additionalProperties: false });
export const RuleUpdateBody = Type.Object({ tenantId: Type.Optional(Uuid), ...RuleFields }, { additionalProperties: false });
export type RuleInput = Static<typeof RuleUpdateBody>;

export const AlertRuleView = Open({
  id: Type.String(),
  tenantId: Type.String(),
  name: Type.String(),
  type: OneOf(RULE_TYPES),
  enabled: Type.Boolean(),
  conditions: Open({}),
  channelIds: Type.Array(Type.String()),
  cooldownMinutes: Type.Integer(),
  cooldownScope: OneOf(['satellite', 'species'] as const),
  quietHours: Nullable(DailyWindow),
  event: OneOf(ALERT_EVENTS),
  createdAt: Type.String(),
  updatedAt: Type.String(),
});
export const AlertRuleList = Open({ rules: Type.Array(AlertRuleView) });

/** Channel config as sent: secrets are write-only, and left out on update they are kept. */
export const ChannelConfigInput = Type.Object(
  {
    url: Type.Optional(Type.String({ minLength: 1, maxLength: 2000 })),
    secret: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 500 }))),
    webhookUrl: Type.Optional(Type.String({ minLength: 1, maxLength: 2000 })),
    botToken: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    chatId: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    addresses: Type.Optional(
      Type.Array(Type.String({ format: 'email', maxLength: 254 }), { minItems: 1, maxItems: 20, uniqueItems: true }),
    ),
    // Home Assistant over MQTT (issue 38): the team's own broker.
    brokerUrl: Type.Optional(Type.String({ minLength: 1, maxLength: 500, description: 'mqtt://, mqtts://, ws:// or wss://' })),
    username: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 200 }))),
    password: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 500 }))),
    topicPrefix: Type.Optional(Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9_-]+(/[A-Za-z0-9_-]+)*$' })),
    discoveryPrefix: Type.Optional(Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9_-]+(/[A-Za-z0-9_-]+)*$' })),
    // BirdWeather station (issue 38).
    stationToken: Type.Optional(Type.String({ minLength: 1, maxLength: 200, pattern: '^[A-Za-z0-9_-]+$' })),
    apiUrl: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
    /** Stream channels: detections below this confidence are not sent. */
    minConfidence: Type.Optional(Nullable(Type.Number({ minimum: 0, maximum: 1 }))),
  },
  { additionalProperties: false },
);
export type ChannelConfigInput = Static<typeof ChannelConfigInput>;

const ChannelFields = {
  type: OneOf(CHANNEL_TYPES),
  name: Type.String({ minLength: 1, maxLength: 100 }),
  config: ChannelConfigInput,
  payload_template: Type.Optional(Nullable(Type.String({ maxLength: 8192 }))),
};
export const ChannelCreateBody = Type.Object({ tenantId: Uuid, ...ChannelFields }, { additionalProperties: false });
export const ChannelUpdateBody = Type.Object(
  {
    tenantId: Type.Optional(Uuid),
    ...ChannelFields,
    type: Type.Optional(ChannelFields.type),
    name: Type.Optional(ChannelFields.name),
    config: Type.Optional(ChannelConfigInput),
  },
  { additionalProperties: false },
);
export type ChannelCreateInput = Static<typeof ChannelCreateBody>;
export type ChannelUpdateInput = Static<typeof ChannelUpdateBody>;

export const DeliveryView = Open({
  id: Type.String(),
  alertId: Nullable(Type.String()),
  event: Type.String(),
  status: OneOf(DELIVERY_STATUSES),
  attempts: Type.Integer(),
  receiverStatus: Nullable(Type.Integer()),
  durationMs: Nullable(Type.Integer()),
  error: Nullable(Type.String()),
  createdAt: Type.String(),
  updatedAt: Type.String(),
});

export const AlertChannelView = Open({
  id: Type.String(),
  tenantId: Type.String(),
  type: OneOf(CHANNEL_TYPES),
  name: Type.String(),
  /** What may be shown: addresses, chat id, the webhook URL without query or user part, a chat webhook's host. */
  config: Open({}),
  payload_template: Nullable(Type.String()),
  hasSecret: Type.Boolean(),
  lastDelivery: Nullable(DeliveryView),
  createdAt: Type.String(),
  updatedAt: Type.String(),
});
export const AlertChannelList = Open({ channels: Type.Array(AlertChannelView) });
export const DeliveryList = Open({ deliveries: Type.Array(DeliveryView) });

export const ChannelTestResult = Type.Object({
  delivered: Type.Boolean(),
  status: Nullable(Type.Integer()),
  durationMs: Type.Integer(),
  error: Type.Optional(Type.String()),
});

export const AlertView = Open({
  id: Type.String(),
  ruleId: Nullable(Type.String()),
  ruleName: Type.String(),
  event: OneOf(ALERT_EVENTS),
  satelliteId: Nullable(Type.String()),
  satelliteName: Nullable(Type.String()),
  detectionId: Nullable(Type.String()),
  species: Nullable(Type.String()),
  speciesCode: Nullable(Type.String()),
  commonName: Nullable(Type.String()),
  confidence: Nullable(Type.Number()),
  message: Type.String(),
  createdAt: Type.String(),
  acknowledged: Type.Boolean(),
  acknowledgedAt: Nullable(Type.String()),
});
export type AlertView = Static<typeof AlertView>;
export const AlertList = Open({ alerts: Type.Array(AlertView), total: Type.Integer(), unacknowledged: Type.Integer() });

export const AlertListQuery = Type.Object({
  tenantId: Type.Optional(Uuid),
  acknowledged: Type.Optional(Type.Boolean()),
  event: Type.Optional(OneOf(ALERT_EVENTS)),
  satelliteId: Type.Optional(Uuid),
  ...Paging,
});
