/**
 * The alerting module (issue 17), assembled: services for the routes, the engine and the
 * delivery dispatcher the runtime starts, and the scheduler of absence and trend rules.
 */
import type { Db } from '../../infra/db/index.ts';
import type { Bus } from '../../infra/bus/index.ts';
import type { JobQueue } from '../../infra/queue/types.ts';
import type { Clock } from '../../core/clock.ts';
import type { Config } from '../../config.ts';
import type { AuditWriter } from '../audit/writer.ts';
import { parseAllowList, type AllowList } from './delivery/outbound.ts';
import { mergeAllowLists } from '../../core/outbound-allow-list.ts';
import type { Metrics } from '../../infra/metrics/index.ts';
import { createDispatcher, type Mail } from './dispatch.ts';
import type { AlertsService } from './alerts-service.ts';
import { createRulesService } from './rules-service.ts';
import { createChannelsService } from './channels-service.ts';
import { createAlertEngine } from './engine.ts';
import { createAlertScheduler } from './scheduler.ts';
import { createFileDelivery, type FileMail } from './file-delivery.ts';
import type { TeamLocale } from './words.ts';
import { createMqttClients } from './delivery/mqtt-clients.ts';
import { createDetectionStreams } from './streams.ts';

export function createAlerting(deps: {
  /**
   * The alerts a team received (alerts-service.ts): built before the satellites service, which
   * counts a satellite's alerts for its deletion, and so before this assembly, which needs the
   * live hub and through it the satellites.
   */
  alerts: AlertsService;
  db: Db;
  clock: Clock;
  audit: AuditWriter;
  bus: Bus;
  kv: { setIfAbsent(key: string, value: string, ttlSeconds: number): Promise<boolean> };
  mail: Mail & FileMail;
  queue: JobQueue;
  /** Delivery attempts and rule findings by outcome (GET /metrics). */
  metrics?: Pick<Metrics, 'alertDelivery' | 'alertFinding'>;
  config: Pick<Config, 'alerts' | 'outboundAllowHosts' | 'secret' | 'publicUrl'>;
  timeZone: (tenantId: string) => Promise<string>;
  /** The team's language and zone (settings team_language, time_zone): the words and times of its alerts. */
  locale?: (tenantId: string) => Promise<TeamLocale>;
  calibrated: (tenantId: string, modelId: string | null, confidence: number) => Promise<number>;
  categoryOf: (speciesCode: string) => string;
  teamName: (tenantId: string) => Promise<string | null>;
  sendToTeam: (tenantId: string, event: { type: 'alert' } & Record<string, unknown>) => Promise<void>;
  warn: (obj: object, msg: string) => void;
  /** The hub setting outbound_allow_hosts: hosts a hub admin allowed from the dashboard, beside OUTBOUND_ALLOW_HOSTS. */
  hubAllowHosts?: () => Promise<string | null>;
  /** Whether a species is sensitive for the team: its deliveries then name no satellite. */
  isSensitive?: (tenantId: string, speciesCode: string) => Promise<boolean>;
  /** The species' threshold in force for the team (src/modules/species-thresholds); null: none. */
  speciesThreshold?: (tenantId: string, speciesCode: string) => Promise<number | null>;
  /** A chunk's stored WAV (src/modules/audio): the soundscape a BirdWeather channel uploads. */
  chunkAudio?: (tenantId: string, chunkId: string) => Promise<Buffer | null>;
}) {
  const { db, clock, audit, bus, config } = deps;
  // The operator's list, joined by the one a hub admin keeps in the dashboard. The joined list is
  // read again before each check and send (refreshAllow), so a change counts in every process at once.
  const fromEnv = parseAllowList(config.outboundAllowHosts);
  let joined: { spec: string; list: AllowList } = { spec: '', list: fromEnv };
  const allow: AllowList = {
    get names() {
      return joined.list.names;
    },
    get ranges() {
      return joined.list.ranges;
    },
  };
  const refreshAllow = async () => {
    const spec = (await deps.hubAllowHosts?.()) ?? '';
    if (spec === joined.spec) return;
    let extra: AllowList;
    try {
      extra = parseAllowList(spec);
    } catch {
      extra = { names: new Set(), ranges: [] }; // the setting's check refuses a bad list at save; an old one counts as empty
    }
    joined = { spec, list: mergeAllowLists(fromEnv, extra) };
  };
  const mqtt = createMqttClients({ connectTimeoutMs: config.alerts.timeoutMs });
  const dispatcher = createDispatcher({
    db,
    clock,
    queue: deps.queue,
    metrics: deps.metrics,
    mail: deps.mail,
    secret: config.secret,
    config: config.alerts,
    allow,
    refreshAllow,
    mqtt,
    chunkAudio: deps.chunkAudio ?? (async () => null),
  });
  const streams = createDetectionStreams({
    db,
    clock,
    dispatcher,
    timeZone: deps.timeZone,
    isSensitive: deps.isSensitive,
    speciesThreshold: deps.speciesThreshold,
  });
  const engine = createAlertEngine({
    db,
    clock,
    dispatcher,
    metrics: deps.metrics,
    timeZone: deps.timeZone,
    locale: deps.locale,
    calibrated: deps.calibrated,
    categoryOf: deps.categoryOf,
    teamName: deps.teamName,
    sendToTeam: deps.sendToTeam,
    publicUrl: config.publicUrl,
    warn: deps.warn,
    isSensitive: deps.isSensitive,
    speciesThreshold: deps.speciesThreshold,
  });
  const scheduler = createAlertScheduler({
    db,
    clock,
    kv: deps.kv,
    engine,
    dispatcher,
    timeZone: deps.timeZone,
    locale: deps.locale,
    // Past every retry a delivery could still be waiting for (back-off and time-outs), with room.
    staleAfterMs: Math.max(
      10 * 60_000,
      config.alerts.backoffMs * 2 ** config.alerts.maxAttempts + config.alerts.timeoutMs * config.alerts.maxAttempts,
    ),
    onError: (err, ruleId) => deps.warn({ err, ruleId }, 'alerts: evaluating a scheduled rule failed'),
  });

  /** Listens on the bus (detections, offline satellites, rule changes) and takes delivery jobs. Returns the stop function. */
  async function start(opts: { schedule: boolean }) {
    const report = (what: string) => (err: unknown) => deps.warn({ err }, `alerts: ${what} failed`);
    const unsubscribe = [
      bus.subscribe('alerts.rules_changed', (e) => engine.forget(e.tenantId)),
      bus.subscribe('detection.announced', (e) => void engine.onDetection(e.trigger, e.detection).catch(report('evaluating a detection'))),
      // Stream channels (issue 38) take each new detection once; a later confirmation is not a new one.
      bus.subscribe('detection.announced', (e) => {
        if (e.trigger === 'announced') void streams.onDetection(e.detection).catch(report('streaming a detection'));
      }),
      bus.subscribe('satellite.offline', (e) => void engine.onOffline(e).catch(report('the offline alert'))),
    ];
    await dispatcher.start();
    const timer = opts.schedule ? setInterval(() => void scheduler.tick().catch(report('the alert schedule')), 60_000) : null;
    timer?.unref();
    return () => {
      if (timer) clearInterval(timer);
      for (const u of unsubscribe) u();
      mqtt.closeAll();
    };
  }

  return {
    alerts: deps.alerts,
    rules: createRulesService({ db, clock, audit, bus }),
    channels: createChannelsService({
      db,
      clock,
      audit,
      dispatcher,
      allow,
      refreshAllow,
      teamName: deps.teamName,
      locale: deps.locale,
      closeConnection: mqtt.close,
    }),
    files: createFileDelivery({ db, clock, dispatcher, mail: deps.mail, allow, refreshAllow, config: config.alerts }),
    engine,
    dispatcher,
    streams,
    scheduler,
    start,
  };
}

export type Alerting = ReturnType<typeof createAlerting>;
