import { col, Count, shape, type Db, type RowOf } from '../../infra/db/index.ts';
import { ALERT_EVENTS, CHANNEL_TYPES, DELIVERY_STATUSES, RULE_TYPES, type DailyWindow, type RuleConditions } from './schemas.ts';
import type { AlertPayload, StreamPayload } from './delivery/types.ts';
import type { ChannelConfig } from './channel-config.ts';

export const RuleRow = shape({
  id: col.text(),
  tenantId: col.text(),
  name: col.text(),
  type: col.oneOf(RULE_TYPES),
  enabled: col.bool(),
  conditions: col.json<RuleConditions>(),
  channelIds: col.array(col.text()),
  cooldownMinutes: col.int(),
  cooldownScope: col.oneOf(['satellite', 'species'] as const),
  quietHours: col.nullable(col.json<DailyWindow>()),
  createdAt: col.date(),
  updatedAt: col.date(),
});
export type RuleRow = RowOf<typeof RuleRow>;
const RULE = `r.id, r.tenant_id AS "tenantId", r.name, r.type, r.enabled, r.conditions, r.cooldown_minutes AS "cooldownMinutes",
  r.cooldown_scope AS "cooldownScope", r.quiet_hours AS "quietHours", r.created_at AS "createdAt", r.updated_at AS "updatedAt",
  COALESCE((SELECT array_agg(rc.channel_id::text ORDER BY rc.channel_id) FROM alert_rule_channels rc WHERE rc.rule_id = r.id), '{}') AS "channelIds"`;

export const ChannelRow = shape({
  id: col.text(),
  tenantId: col.text(),
  type: col.oneOf(CHANNEL_TYPES),
  name: col.text(),
  config: col.json<ChannelConfig>(),
  secrets: col.nullable(col.text()),
  payloadTemplate: col.nullable(col.text()),
  createdAt: col.date(),
  updatedAt: col.date(),
});
export type ChannelRow = RowOf<typeof ChannelRow>;
const CHANNEL = `id, tenant_id AS "tenantId", type, name, config, secrets, payload_template AS "payloadTemplate",
  created_at AS "createdAt", updated_at AS "updatedAt"`;

export const AlertRow = shape({
  id: col.text(),
  tenantId: col.text(),
  ruleId: col.nullable(col.text()),
  ruleName: col.text(),
  event: col.oneOf(ALERT_EVENTS),
  satelliteId: col.nullable(col.text()),
  satelliteName: col.nullable(col.text()),
  detectionId: col.nullable(col.text()),
  speciesCode: col.nullable(col.text()),
  species: col.nullable(col.text()),
  commonName: col.nullable(col.text()),
  confidence: col.nullable(col.num()),
  message: col.text(),
  createdAt: col.date(),
  acknowledgedAt: col.nullable(col.date()),
});
export type AlertRow = RowOf<typeof AlertRow>;
const ALERT = `id, tenant_id AS "tenantId", rule_id AS "ruleId", rule_name AS "ruleName", event, satellite_id AS "satelliteId",
  satellite_name AS "satelliteName", detection_id AS "detectionId", species_code AS "speciesCode", species, common_name AS "commonName",
  confidence, message, created_at AS "createdAt", acknowledged_at AS "acknowledgedAt"`;

export type NewAlert = Omit<AlertRow, 'acknowledgedAt'> & { dedupKey: string; cooldownKey: string; muted: boolean };

/** What a file delivery (a scheduled export sent to a channel, file-delivery.ts) records instead of an alert. */
export interface FileDeliveryPayload {
  name: string;
  filename: string;
  rows: number;
}

export const DeliveryRow = shape({
  id: col.text(),
  tenantId: col.text(),
  channelId: col.text(),
  alertId: col.nullable(col.text()),
  /** An alert event, or scheduled_export (file-delivery.ts). */
  event: col.text(),
  status: col.oneOf(DELIVERY_STATUSES),
  attempts: col.int(),
  receiverStatus: col.nullable(col.int()),
  durationMs: col.nullable(col.int()),
  error: col.nullable(col.text()),
  payload: col.json<AlertPayload | FileDeliveryPayload | StreamPayload>(),
  createdAt: col.date(),
  updatedAt: col.date(),
});
export type DeliveryRow = RowOf<typeof DeliveryRow>;
const DELIVERY = `id, tenant_id AS "tenantId", channel_id AS "channelId", alert_id AS "alertId", event, status, attempts,
  receiver_status AS "receiverStatus", duration_ms AS "durationMs", error, payload, created_at AS "createdAt", updated_at AS "updatedAt"`;

const Id = shape({ id: col.text() });
const TeamOf = shape({ t: col.text() });
const LastActivity = shape({ at: col.nullable(col.date()) });
const WindowCounts = shape({ detections: col.int(), species: col.int() });
const SatelliteName = shape({ id: col.text(), name: col.text() });
const Stale = shape({ id: col.text(), attempts: col.int() });

export interface AttemptRecord {
  status: DeliveryRow['status'];
  attempts: number;
  receiverStatus: number | null;
  durationMs: number;
  error: string | null;
  at: Date;
}

/** One attempt's outcome; an attempt older than the one recorded changes nothing. */
const recordAttempt = (db: Db, id: string, r: AttemptRecord) =>
  db.run(
    `UPDATE alert_deliveries SET status = $2, attempts = $3, receiver_status = $4, duration_ms = $5, error = $6, updated_at = $7
     WHERE id = $1 AND attempts < $3`,
    [id, r.status, r.attempts, r.receiverStatus, r.durationMs, r.error, r.at],
  );

export function createAlertsRepo(db: Db) {
  return {
    // Rules
    listRules: (tenantId: string) =>
      db.query(RuleRow, `SELECT ${RULE} FROM alert_rules r WHERE r.tenant_id = $1 ORDER BY r.created_at, r.id`, [tenantId]),
    /** Every enabled rule of some types, across teams (the engine's cache, the scheduler). */
    enabledRules: (types: readonly string[]) =>
      db.query(RuleRow, `SELECT ${RULE} FROM alert_rules r WHERE r.enabled AND r.type = ANY($1::text[]) ORDER BY r.created_at`, [types]),
    enabledRulesOf: (tenantId: string) =>
      db.query(RuleRow, `SELECT ${RULE} FROM alert_rules r WHERE r.tenant_id = $1 AND r.enabled ORDER BY r.created_at`, [tenantId]),
    findRule: (tenantId: string, id: string) =>
      db.maybeOne(RuleRow, `SELECT ${RULE} FROM alert_rules r WHERE r.tenant_id = $1 AND r.id = $2`, [tenantId, id]),
    async saveRule(tx: Db, r: Omit<RuleRow, 'createdAt'> & { createdAt: Date; createdBy: string | null }) {
      await tx.run(
        `INSERT INTO alert_rules (id, tenant_id, name, type, enabled, conditions, cooldown_minutes, cooldown_scope, quiet_hours, created_by, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
         ON CONFLICT (id) DO UPDATE SET name = $3, type = $4, enabled = $5, conditions = $6, cooldown_minutes = $7, cooldown_scope = $8,
           quiet_hours = $9, updated_at = $12`,
        [
          r.id,
          r.tenantId,
          r.name,
          r.type,
          r.enabled,
          JSON.stringify(r.conditions),
          r.cooldownMinutes,
          r.cooldownScope,
          r.quietHours ? JSON.stringify(r.quietHours) : null,
          r.createdBy,
          r.createdAt,
          r.updatedAt,
        ],
      );
      await tx.run('DELETE FROM alert_rule_channels WHERE rule_id = $1', [r.id]);
      if (r.channelIds.length > 0) {
        await tx.run(`INSERT INTO alert_rule_channels (rule_id, channel_id) SELECT $1, unnest($2::uuid[])`, [r.id, r.channelIds]);
      }
    },
    /** True when it deleted the rule. */
    deleteRule: async (tx: Db, tenantId: string, id: string) =>
      (await tx.run('DELETE FROM alert_rules WHERE tenant_id = $1 AND id = $2', [tenantId, id])) === 1,
    teamOfRule: async (id: string) => (await db.maybeOne(TeamOf, 'SELECT tenant_id AS t FROM alert_rules WHERE id = $1', [id]))?.t ?? null,

    // Channels
    listChannels: (tenantId: string) =>
      db.query(ChannelRow, `SELECT ${CHANNEL} FROM alert_channels WHERE tenant_id = $1 ORDER BY created_at, id`, [tenantId]),
    findChannel: (tenantId: string, id: string) =>
      db.maybeOne(ChannelRow, `SELECT ${CHANNEL} FROM alert_channels WHERE tenant_id = $1 AND id = $2`, [tenantId, id]),
    channelsById: (ids: readonly string[]) =>
      db.query(ChannelRow, `SELECT ${CHANNEL} FROM alert_channels WHERE id = ANY($1::uuid[])`, [ids]),
    /** Of these ids, those that are channels of the team. */
    teamChannelIds: async (tenantId: string, ids: readonly string[]) =>
      (await db.query(Id, 'SELECT id FROM alert_channels WHERE tenant_id = $1 AND id = ANY($2::uuid[])', [tenantId, ids])).map((r) => r.id),
    saveChannel: (tx: Db, c: ChannelRow & { createdBy: string | null }) =>
      tx.run(
        `INSERT INTO alert_channels (id, tenant_id, type, name, config, secrets, payload_template, created_by, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
         ON CONFLICT (id) DO UPDATE SET type = $3, name = $4, config = $5, secrets = $6, payload_template = $7, updated_at = $10`,
        [c.id, c.tenantId, c.type, c.name, JSON.stringify(c.config), c.secrets, c.payloadTemplate, c.createdBy, c.createdAt, c.updatedAt],
      ),
    /** True when it deleted the channel. */
    deleteChannel: async (tx: Db, tenantId: string, id: string) =>
      (await tx.run('DELETE FROM alert_channels WHERE tenant_id = $1 AND id = $2', [tenantId, id])) === 1,
    teamOfChannel: async (id: string) =>
      (await db.maybeOne(TeamOf, 'SELECT tenant_id AS t FROM alert_channels WHERE id = $1', [id]))?.t ?? null,

    // Alerts
    /** Stores the alert unless the same event already stored it (another process, a retry); true when this call stored it. */
    insertAlert: async (tx: Db, a: NewAlert) =>
      (await tx.run(
        `INSERT INTO alerts (id, tenant_id, rule_id, rule_name, event, satellite_id, satellite_name, detection_id, species_code, species,
             common_name, confidence, message, dedup_key, cooldown_key, muted, created_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)
           ON CONFLICT (tenant_id, dedup_key) DO NOTHING`,
        [
          a.id,
          a.tenantId,
          a.ruleId,
          a.ruleName,
          a.event,
          a.satelliteId,
          a.satelliteName,
          a.detectionId,
          a.speciesCode,
          a.species,
          a.commonName,
          a.confidence,
          a.message,
          a.dedupKey,
          a.cooldownKey,
          a.muted,
          a.createdAt,
        ],
      )) === 1,
    /** The newest alert of the rule under this cooldown key since `since`. */
    alertSince: (tx: Db, ruleId: string, cooldownKey: string, since: Date) =>
      tx.maybeOne(Id, 'SELECT id FROM alerts WHERE rule_id = $1 AND cooldown_key = $2 AND created_at > $3 LIMIT 1', [
        ruleId,
        cooldownKey,
        since,
      ]),
    /** Whether the rule stored any alert after `since`. */
    ruleAlertedSince: async (ruleId: string, since: Date) =>
      (await db.maybeOne(Id, 'SELECT id FROM alerts WHERE rule_id = $1 AND created_at > $2 LIMIT 1', [ruleId, since])) !== null,
    async listAlerts(tenantId: string, f: { acknowledged?: boolean; event?: string; satelliteId?: string; limit: number; offset: number }) {
      const where = ['tenant_id = $1'];
      const params: unknown[] = [tenantId];
      if (f.acknowledged !== undefined) where.push(f.acknowledged ? 'acknowledged_at IS NOT NULL' : 'acknowledged_at IS NULL');
      if (f.event) where.push(`event = $${params.push(f.event)}`);
      if (f.satelliteId) where.push(`satellite_id = $${params.push(f.satelliteId)}`);
      const w = where.join(' AND ');
      const [rows, total, unread] = await Promise.all([
        db.query(
          AlertRow,
          `SELECT ${ALERT} FROM alerts WHERE ${w} ORDER BY created_at DESC, id DESC LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
          [...params, f.limit, f.offset],
        ),
        db.one(Count, `SELECT count(*)::int AS n FROM alerts WHERE ${w}`, params),
        // The unacknowledged count follows the same filter as the list (issue 36 point 5): a page
        // filtered to one event never says "3 unacknowledged" about alerts it does not show.
        db.one(Count, `SELECT count(*)::int AS n FROM alerts WHERE ${w} AND acknowledged_at IS NULL`, params),
      ]);
      return { rows, total: total.n, unacknowledged: unread.n };
    },
    findAlert: (tenantId: string, id: string) =>
      db.maybeOne(AlertRow, `SELECT ${ALERT} FROM alerts WHERE tenant_id = $1 AND id = $2`, [tenantId, id]),
    acknowledge: (tenantId: string, id: string, userId: string | null, at: Date) =>
      db.run('UPDATE alerts SET acknowledged_at = $4, acknowledged_by = $3 WHERE tenant_id = $1 AND id = $2 AND acknowledged_at IS NULL', [
        tenantId,
        id,
        userId,
        at,
      ]),
    acknowledgeAll: (tenantId: string, userId: string | null, at: Date) =>
      db.run('UPDATE alerts SET acknowledged_at = $3, acknowledged_by = $2 WHERE tenant_id = $1 AND acknowledged_at IS NULL', [
        tenantId,
        userId,
        at,
      ]),
    teamOfAlert: async (id: string) => (await db.maybeOne(TeamOf, 'SELECT tenant_id AS t FROM alerts WHERE id = $1', [id]))?.t ?? null,

    // What the scheduled rules read: the Detections page's rows (promoted, one per stitched call).
    lastActivity: async (tenantId: string, satelliteId: string | null, species: readonly string[] | null) =>
      (
        await db.one(
          LastActivity,
          `SELECT max(detected_at) AS at FROM detections
           WHERE tenant_id = $1 AND NOT tentative AND call_id IS NULL AND NOT out_of_range AND ($2::uuid IS NULL OR satellite_id = $2::uuid)
             AND ($3::text[] IS NULL OR lower(species_code) = ANY($3::text[]) OR lower(scientific_name) = ANY($3::text[]))`,
          [tenantId, satelliteId, species],
        )
      ).at,
    windowCounts: (tenantId: string, satelliteIds: readonly string[] | null, from: Date, to: Date) =>
      db.one(
        WindowCounts,
        `SELECT count(*)::int AS detections, count(DISTINCT species_code)::int AS species FROM detections
         WHERE tenant_id = $1 AND NOT tentative AND call_id IS NULL AND NOT out_of_range AND detected_at >= $3 AND detected_at < $4
           AND ($2::uuid[] IS NULL OR satellite_id = ANY($2::uuid[]))`,
        [tenantId, satelliteIds, from, to],
      ),
    teamSatelliteIds: async (tenantId: string, ids: readonly string[]) =>
      (await db.query(Id, 'SELECT id FROM satellites WHERE tenant_id = $1 AND id = ANY($2::uuid[])', [tenantId, ids])).map((r) => r.id),
    satelliteNames: (tenantId: string) => db.query(SatelliteName, 'SELECT id, name FROM satellites WHERE tenant_id = $1', [tenantId]),

    countOfSatellite: async (satelliteId: string) =>
      (await db.one(Count, 'SELECT count(*)::int AS n FROM alerts WHERE satellite_id = $1', [satelliteId])).n,

    // Deliveries
    insertDeliveries: (tx: Db, rows: Array<Omit<DeliveryRow, 'receiverStatus' | 'durationMs' | 'error' | 'attempts'>>) =>
      rows.length === 0
        ? Promise.resolve(0)
        : tx.run(
            `INSERT INTO alert_deliveries (id, tenant_id, channel_id, alert_id, event, status, payload, created_at, updated_at)
             SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::uuid[], $5::text[], $6::text[], $7::jsonb[], $8::timestamptz[], $8::timestamptz[])`,
            [
              rows.map((r) => r.id),
              rows.map((r) => r.tenantId),
              rows.map((r) => r.channelId),
              rows.map((r) => r.alertId),
              rows.map((r) => r.event),
              rows.map((r) => r.status),
              rows.map((r) => JSON.stringify(r.payload)),
              rows.map((r) => r.createdAt),
            ],
          ),
    findDelivery: (id: string) => db.maybeOne(DeliveryRow, `SELECT ${DELIVERY} FROM alert_deliveries WHERE id = $1`, [id]),
    recordAttempt: (id: string, r: AttemptRecord) => recordAttempt(db, id, r),
    recordAttemptIn: (tx: Db, id: string, r: AttemptRecord) => recordAttempt(tx, id, r),
    deliveriesOf: (tenantId: string, channelId: string, limit: number) =>
      db.query(
        DeliveryRow,
        `SELECT ${DELIVERY} FROM alert_deliveries WHERE tenant_id = $1 AND channel_id = $2 ORDER BY created_at DESC, id DESC LIMIT $3`,
        [tenantId, channelId, limit],
      ),
    lastDeliveries: (tenantId: string) =>
      db.query(
        DeliveryRow,
        `SELECT DISTINCT ON (channel_id) ${DELIVERY} FROM alert_deliveries WHERE tenant_id = $1 ORDER BY channel_id, created_at DESC, id DESC`,
        [tenantId],
      ),
    /** Deliveries left open longer than a retry could take: a process stopped between storing and sending. */
    staleDeliveries: (before: Date, limit: number) =>
      db.query(
        Stale,
        `SELECT id, attempts FROM alert_deliveries WHERE status IN ('pending', 'retrying') AND updated_at < $1 ORDER BY updated_at LIMIT $2`,
        [before, limit],
      ),
  };
}

export type AlertsRepo = ReturnType<typeof createAlertsRepo>;
