/**
 * Absence and trend rules, evaluated once a minute by one process at a time: each minute's run
 * is claimed in the key-value store (Redis in split mode), so two api instances never evaluate
 * the same minute. The same run queues again deliveries a stopped process left open.
 */
import type { Clock } from '../../core/clock.ts';
import type { Db } from '../../infra/db/index.ts';
import { createAlertsRepo, type RuleRow } from './repo.ts';
import { inWindow } from './conditions.ts';
import type { AlertEngine } from './engine.ts';
import type { Dispatcher } from './dispatch.ts';
import { DEFAULT_LOCALE, formatCount, formatPercent, formatSpan, wordsOf, type TeamLocale } from './words.ts';

export const SCHEDULE_INTERVAL_MS = 60_000;

interface Kv {
  setIfAbsent(key: string, value: string, ttlSeconds: number): Promise<boolean>;
}

export function createAlertScheduler(deps: {
  db: Db;
  clock: Clock;
  kv: Kv;
  engine: Pick<AlertEngine, 'fire'>;
  dispatcher: Pick<Dispatcher, 'recover'>;
  timeZone: (tenantId: string) => Promise<string>;
  /** The team's language (and zone): the words of absence and trend alerts. */
  locale?: (tenantId: string) => Promise<TeamLocale>;
  /** How long an open delivery may go untouched before it is queued again. */
  staleAfterMs: number;
  onError: (err: unknown, ruleId: string) => void;
}) {
  const { clock, engine } = deps;
  const repo = createAlertsRepo(deps.db);
  const languageOf = async (tenantId: string) => (deps.locale ? await deps.locale(tenantId) : DEFAULT_LOCALE).language;

  async function absence(rule: RuleRow, now: Date) {
    const c = rule.conditions;
    if (c.window && !inWindow(c.window, now, await deps.timeZone(rule.tenantId))) return 0;
    const names = new Map((await repo.satelliteNames(rule.tenantId)).map((s) => [s.id, s.name]));
    const scopes: Array<string | null> = c.satelliteIds?.length ? c.satelliteIds : [null];
    const species = c.species?.length ? c.species.map((s) => s.toLowerCase()) : null;
    let fired = 0;
    for (const satelliteId of scopes) {
      if (satelliteId && !names.has(satelliteId)) continue;
      const last = await repo.lastActivity(rule.tenantId, satelliteId, species);
      // Silence counts from the last detection, or from when the rule was last saved.
      const since = new Date(Math.max(last ? new Date(last).getTime() : 0, new Date(rule.updatedAt).getTime()));
      const silentMin = (now.getTime() - since.getTime()) / 60_000;
      if (silentMin < (c.minutes ?? Infinity)) continue;
      const language = await languageOf(rule.tenantId);
      const w = wordsOf(language);
      const what = species ? c.species!.join(', ') : null;
      const span = formatSpan(Math.floor(silentMin), language);
      const a = await engine.fire(rule, {
        satelliteId,
        satelliteName: satelliteId ? names.get(satelliteId)! : null,
        detectionId: null,
        speciesCode: c.species?.length === 1 ? c.species[0]! : null,
        species: null,
        commonName: null,
        confidence: null,
        message: w.absence(what, satelliteId ? names.get(satelliteId)! : null, span),
        messageWithoutSatellite: w.absence(what, null, span),
        speciesCodes: c.species ?? [],
        eventKey: `absence:${satelliteId ?? 'team'}:${since.toISOString()}`,
      });
      if (a) fired++;
    }
    return fired;
  }

  async function trend(rule: RuleRow, now: Date) {
    const c = rule.conditions;
    const w = (c.windowMinutes ?? 1440) * 60_000;
    const ids = c.satelliteIds?.length ? c.satelliteIds : null;
    const [current, previous] = await Promise.all([
      repo.windowCounts(rule.tenantId, ids, new Date(now.getTime() - w), now),
      repo.windowCounts(rule.tenantId, ids, new Date(now.getTime() - 2 * w), new Date(now.getTime() - w)),
    ]);
    const key = c.metric === 'diversity' ? 'species' : 'detections';
    const before = previous[key];
    const after = current[key];
    if (before < Math.max(1, c.minBaseline ?? 1)) return 0;
    const change = ((after - before) / before) * 100;
    const hit = c.direction === 'fall' ? change <= -(c.percent ?? 100) : change >= (c.percent ?? 100);
    if (!hit) return 0;
    // At most once per window length, counted from the last alert: a bucket of the clock alone would
    // fire again a minute later when the run crosses a bucket's edge.
    if (await repo.ruleAlertedSince(rule.id, new Date(now.getTime() - w))) return 0;
    const language = await languageOf(rule.tenantId);
    const a = await engine.fire(rule, {
      satelliteId: ids?.length === 1 ? ids[0]! : null,
      satelliteName: null,
      detectionId: null,
      speciesCode: null,
      species: null,
      commonName: null,
      confidence: null,
      message: wordsOf(language).trend(
        c.metric === 'diversity' ? 'diversity' : 'detections',
        c.direction === 'fall' ? 'fall' : 'rise',
        formatPercent(Math.abs(Math.round(change)), language),
        formatCount(before, language),
        formatCount(after, language),
        formatSpan(c.windowMinutes ?? 1440, language),
      ),
      // Two runs of the same minute store one alert.
      eventKey: `trend:${Math.floor(now.getTime() / w)}`,
    });
    return a ? 1 : 0;
  }

  /** One run; false when another process holds this minute. */
  async function tick(): Promise<{ ran: boolean; fired: number; recovered: number }> {
    const now = clock.now();
    const minute = Math.floor(now.getTime() / SCHEDULE_INTERVAL_MS);
    if (!(await deps.kv.setIfAbsent(`alerts:schedule:${minute}`, String(process.pid), 120))) return { ran: false, fired: 0, recovered: 0 };
    let fired = 0;
    for (const rule of await repo.enabledRules(['absence', 'trend'])) {
      if (rule.type === 'absence' && rule.conditions.system) continue; // the offline monitor fires those
      try {
        fired += rule.type === 'absence' ? await absence(rule, now) : await trend(rule, now);
      } catch (err) {
        // One broken rule never stops the others.
        deps.onError(err, rule.id);
      }
    }
    const recovered = await deps.dispatcher.recover(new Date(now.getTime() - deps.staleAfterMs));
    return { ran: true, fired, recovered };
  }

  return { tick };
}

export type AlertScheduler = ReturnType<typeof createAlertScheduler>;
