/**
 * The alert engine: turns events (an announced or confirmed detection, a satellite gone
 * offline, a scheduled absence or trend finding) into stored alerts, the team's WebSocket
 * `alert` frame and one delivery per channel of the rule.
 *
 * Every process that sees an event may evaluate it (split mode: each api instance hears the
 * bus). An alert is stored once: its dedup key is unique per team, and the cooldown is checked
 * under a lock on (rule, cooldown key), so the processes agree on one winner; only the winner
 * announces and delivers.
 */
import type { Db } from '../../infra/db/index.ts';
import type { Clock } from '../../core/clock.ts';
import type { AnnouncedDetection } from '../../infra/bus/index.ts';
import { newId } from '../../core/crypto.ts';
import { createAlertsRepo, type AlertRow, type NewAlert, type RuleRow } from './repo.ts';
import { cooldownKeyOf, describeDetection, eventOfRule, inWindow, matchesDetection, type DetectionTrigger } from './conditions.ts';
import type { AlertPayload } from './delivery/types.ts';
import type { Dispatcher } from './dispatch.ts';
import type { AlertFindingOutcome, Metrics } from '../../infra/metrics/index.ts';
import { coarsenTime } from '../sensitive/service.ts';
import { DEFAULT_LOCALE, formatWhen, wordsOf, type TeamLocale } from './words.ts';

export const presentAlert = (a: AlertRow) => ({
  id: a.id,
  ruleId: a.ruleId,
  ruleName: a.ruleName,
  event: a.event,
  satelliteId: a.satelliteId,
  satelliteName: a.satelliteName,
  detectionId: a.detectionId,
  species: a.species,
  speciesCode: a.speciesCode,
  commonName: a.commonName,
  confidence: a.confidence,
  message: a.message,
  createdAt: new Date(a.createdAt).toISOString(),
  acknowledged: a.acknowledgedAt !== null,
  acknowledgedAt: a.acknowledgedAt ? new Date(a.acknowledgedAt).toISOString() : null,
});

/** What a rule found, before the engine decides whether to store it. */
export interface Finding {
  satelliteId: string | null;
  satelliteName: string | null;
  detectionId: string | null;
  speciesCode: string | null;
  species: string | null;
  commonName: string | null;
  confidence: number | null;
  message: string;
  /** Unique per team with the rule id: the same event never stores two alerts. */
  eventKey: string;
  /** Every species the finding is about (an absence rule names several); speciesCode when absent. */
  speciesCodes?: string[];
  /** The message without the satellite, for deliveries about a sensitive species. */
  messageWithoutSatellite?: string;
}

/** A finding's message with the satellite's name taken out, for deliveries that leave the team. */
function withoutSatellite(f: Finding, language: string): string {
  if (f.messageWithoutSatellite) return f.messageWithoutSatellite;
  return f.satelliteName ? f.message.split(f.satelliteName).join(language === 'de' ? 'einem Satelliten' : 'a satellite') : f.message;
}

const RULES_TTL_MS = 30_000;

export function createAlertEngine(deps: {
  db: Db;
  clock: Clock;
  dispatcher: Pick<Dispatcher, 'enqueue'>;
  /** Each finding's outcome (GET /metrics): how a test sees that every process has judged an event. */
  metrics?: Pick<Metrics, 'alertFinding'>;
  /** The team's time zone (quiet hours, daily windows). */
  timeZone: (tenantId: string) => Promise<string>;
  /** The team's language and zone: the words and times of its alerts (issue 36 point 5). */
  locale?: (tenantId: string) => Promise<TeamLocale>;
  /** Calibrated confidence of one raw value, for rules that compare it. */
  calibrated: (tenantId: string, modelId: string | null, confidence: number) => Promise<number>;
  categoryOf: (speciesCode: string) => string;
  teamName: (tenantId: string) => Promise<string | null>;
  sendToTeam: (tenantId: string, event: { type: 'alert' } & Record<string, unknown>) => Promise<void>;
  publicUrl: string;
  warn: (obj: object, msg: string) => void;
  /** Sensitive species (issue 20): a delivery about one names no satellite; the team's own alert keeps it. */
  isSensitive?: (tenantId: string, speciesCode: string) => Promise<boolean>;
  /** The species' threshold in force for the team (issue 35): no rule fires for a detection below it. */
  speciesThreshold?: (tenantId: string, speciesCode: string) => Promise<number | null>;
}) {
  const { db, clock } = deps;

  async function sensitive(tenantId: string, f: Finding): Promise<boolean> {
    const codes = f.speciesCodes ?? (f.speciesCode ? [f.speciesCode] : []);
    if (!deps.isSensitive || codes.length === 0) return false;
    for (const code of codes) if (await deps.isSensitive(tenantId, code)) return true;
    return false;
  }
  const localeOf = async (tenantId: string): Promise<TeamLocale> => (deps.locale ? deps.locale(tenantId) : DEFAULT_LOCALE);
  const repo = createAlertsRepo(db);
  const cache = new Map<string, { rules: RuleRow[]; at: number }>();

  async function rulesOf(tenantId: string): Promise<RuleRow[]> {
    const hit = cache.get(tenantId);
    const now = Date.now();
    if (hit && now - hit.at < RULES_TTL_MS) return hit.rules;
    const rules = await repo.enabledRulesOf(tenantId);
    cache.set(tenantId, { rules, at: now });
    return rules;
  }

  /** Stores the alert unless the cooldown or an earlier store has it; the winner announces and delivers. */
  async function fire(rule: RuleRow, f: Finding): Promise<AlertRow | null> {
    const now = clock.now();
    const event = eventOfRule(rule);
    const tz = rule.quietHours ? await deps.timeZone(rule.tenantId) : 'UTC';
    const muted = rule.quietHours ? inWindow(rule.quietHours, now, tz) : false;
    const cooldownKey = cooldownKeyOf(rule, f.satelliteId, f.speciesCode);
    const alert: NewAlert = {
      id: newId(),
      tenantId: rule.tenantId,
      ruleId: rule.id,
      ruleName: rule.name,
      event,
      satelliteId: f.satelliteId,
      satelliteName: f.satelliteName,
      detectionId: f.detectionId,
      speciesCode: f.speciesCode,
      species: f.species,
      commonName: f.commonName,
      confidence: f.confidence,
      message: f.message,
      createdAt: now,
      dedupKey: `${rule.id}:${f.eventKey}`,
      cooldownKey,
      muted,
    };
    const locale = await localeOf(rule.tenantId);
    const payload: AlertPayload = {
      event,
      timestamp: now.toISOString(),
      // Chat cards and e-mails write their labels and times in these; the webhook body keeps ISO.
      language: locale.language,
      timeZone: locale.timeZone,
      ruleName: rule.name,
      teamName: '',
      message: f.message,
      species: f.species,
      commonName: f.commonName,
      confidence: f.confidence,
      satelliteName: f.satelliteName,
      detectionId: f.detectionId,
      link: f.detectionId ? `${deps.publicUrl}/detections/${f.detectionId}` : `${deps.publicUrl}/alerts`,
    };
    // Read before the transaction: on PGlite a read outside it would wait for it.
    if (!muted && rule.channelIds.length > 0) {
      payload.teamName = (await deps.teamName(rule.tenantId)) ?? '';
      // Deliveries leave the team: a sensitive species' alert names no satellite (positions are never in an alert),
      // and its time is the hour (src/modules/sensitive coarsenTime), not the instant another species' alert shares.
      if (await sensitive(rule.tenantId, f)) {
        payload.satelliteName = null;
        payload.message = withoutSatellite(f, locale.language);
        payload.timestamp = coarsenTime(now, 'outside').start;
      }
    }
    let outcome: AlertFindingOutcome = 'stored';
    const deliveryIds = await db.tx(async (tx) => {
      outcome = 'stored';
      if (tx.kind === 'postgres') await tx.run('SELECT pg_advisory_xact_lock(hashtext($1))', [`alert:${rule.id}:${cooldownKey}`]);
      if (rule.cooldownMinutes > 0) {
        const recent = await repo.alertSince(tx, rule.id, cooldownKey, new Date(now.getTime() - rule.cooldownMinutes * 60_000));
        if (recent) {
          outcome = 'cooldown';
          return null;
        }
      }
      if (!(await repo.insertAlert(tx, alert))) {
        outcome = 'duplicate';
        return null;
      }
      if (muted || rule.channelIds.length === 0) return [];
      const rows = rule.channelIds.map((channelId) => ({
        id: newId(),
        tenantId: rule.tenantId,
        channelId,
        alertId: alert.id,
        event,
        status: 'pending' as const,
        payload,
        createdAt: now,
        updatedAt: now,
      }));
      await repo.insertDeliveries(tx, rows);
      return rows.map((r) => r.id);
    });
    deps.metrics?.alertFinding(outcome);
    if (deliveryIds === null) return null;
    const stored: AlertRow = { ...alert, acknowledgedAt: null };
    try {
      await deps.sendToTeam(rule.tenantId, { type: 'alert', alert: presentAlert(stored), speciesCode: f.speciesCode });
    } catch (err) {
      deps.warn({ err, alertId: alert.id }, 'alerts: could not send the alert event');
    }
    await deps.dispatcher.enqueue(deliveryIds);
    return stored;
  }

  return {
    fire,
    rulesOf,
    forget: (tenantId: string) => cache.delete(tenantId),

    /** Detection rules against one detection; returns the alerts stored by this call. */
    async onDetection(trigger: DetectionTrigger, d: AnnouncedDetection): Promise<AlertRow[]> {
      const rules = (await rulesOf(d.tenantId)).filter((r) => r.type === 'detection');
      if (rules.length === 0) return [];
      let language: TeamLocale['language'] | undefined;
      // Below its species threshold a detection is not trusted yet, whichever way it reached the rules.
      const threshold = (await deps.speciesThreshold?.(d.tenantId, d.speciesCode)) ?? null;
      if (threshold !== null && d.confidence < threshold) return [];
      const facts = { ...d, category: deps.categoryOf(d.speciesCode) };
      const needsCalibrated = rules.some((r) => r.conditions.confidenceKind === 'calibrated' && r.conditions.minConfidence !== undefined);
      const calibrated = needsCalibrated ? await deps.calibrated(d.tenantId, d.modelId, d.confidence) : d.confidence;
      const stored: AlertRow[] = [];
      for (const rule of rules) {
        if (!matchesDetection(rule, facts, trigger, () => calibrated)) continue;
        language ??= (await localeOf(d.tenantId)).language;
        const a = await fire(rule, {
          satelliteId: d.satelliteId,
          satelliteName: d.satelliteName,
          detectionId: d.id,
          speciesCode: d.speciesCode,
          species: d.scientificName,
          commonName: d.commonName,
          confidence: d.confidence,
          message: describeDetection(eventOfRule(rule), d, language),
          messageWithoutSatellite: describeDetection(eventOfRule(rule), { ...d, satelliteName: null }, language),
          eventKey: `${trigger}:${d.id}`,
        });
        if (a) stored.push(a);
      }
      return stored;
    },

    /** The offline monitor marked a satellite offline: the team's satellite_offline rules fire. */
    async onOffline(e: { tenantId: string; satelliteId: string; name: string; lastSeenAt: string }): Promise<AlertRow[]> {
      const rules = (await rulesOf(e.tenantId)).filter((r) => r.type === 'absence' && r.conditions.system === 'satellite_offline');
      if (rules.length === 0) return [];
      const locale = await localeOf(e.tenantId);
      const stored: AlertRow[] = [];
      for (const rule of rules) {
        if (rule.conditions.satelliteIds?.length && !rule.conditions.satelliteIds.includes(e.satelliteId)) continue;
        const a = await fire(rule, {
          satelliteId: e.satelliteId,
          satelliteName: e.name,
          detectionId: null,
          speciesCode: null,
          species: null,
          commonName: null,
          confidence: null,
          message: wordsOf(locale.language).offline(e.name, formatWhen(e.lastSeenAt, locale)),
          eventKey: `offline:${e.satelliteId}:${e.lastSeenAt}`,
        });
        if (a) stored.push(a);
      }
      return stored;
    },
  };
}

export type AlertEngine = ReturnType<typeof createAlertEngine>;
