/**
 * The detection stream (issue 38): every detection a team's Detections page starts listing goes
 * to each of the team's stream channels (Home Assistant, BirdWeather), not only when a rule
 * fires. It is fed from the bus event the alert rules hear (`detection.announced`, trigger
 * `announced`: a vote confirming a detection later is not a new one), and each delivery is a
 * row in alert_deliveries sent by the same queue as webhooks, with the same retries.
 *
 * Every api process hears the event; the delivery's id is derived from (channel, detection), so
 * the first process stores it and the others find it there. What leaves the team follows the
 * alert payload's rules for sensitive species: the time is the hour, never audio; BirdWeather
 * (a public map) gets nothing about them at all.
 */
import crypto from 'node:crypto';
import type { Db } from '../../infra/db/index.ts';
import type { Clock } from '../../core/clock.ts';
import type { AnnouncedDetection } from '../../infra/bus/index.ts';
import { coarsenTime } from '../sensitive/service.ts';
import type { Dispatcher } from './dispatch.ts';
import type { StreamPayload } from './delivery/types.ts';
import { createStreamRepo } from './stream-repo.ts';

/** A UUID from (channel, detection): the same delivery whichever process stores it. */
export function streamDeliveryId(channelId: string, detectionId: string): string {
  const h = crypto.createHash('sha256').update(`stream:${channelId}:${detectionId}`).digest();
  h[6] = (h[6] & 0x0f) | 0x80; // version 8: a name-based id of our own making
  h[8] = (h[8] & 0x3f) | 0x80;
  const hex = h.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export function createDetectionStreams(deps: {
  db: Db;
  clock: Clock;
  dispatcher: Pick<Dispatcher, 'enqueue'>;
  timeZone: (tenantId: string) => Promise<string>;
  isSensitive?: (tenantId: string, speciesCode: string) => Promise<boolean>;
  /** The species' threshold in force for the team: below it a detection is not trusted yet (as for alert rules). */
  speciesThreshold?: (tenantId: string, speciesCode: string) => Promise<number | null>;
}) {
  const repo = createStreamRepo(deps.db);

  /** Queues the detection to each stream channel of the team that takes it; returns the delivery ids this call stored. */
  async function onDetection(d: AnnouncedDetection): Promise<string[]> {
    const channels = await repo.streamChannelsOf(d.tenantId);
    if (channels.length === 0) return [];
    const threshold = (await deps.speciesThreshold?.(d.tenantId, d.speciesCode)) ?? null;
    if (threshold !== null && d.confidence < threshold) return [];
    const wanted = channels.filter((c) => c.config.minConfidence === undefined || d.confidence >= c.config.minConfidence);
    if (wanted.length === 0) return [];
    const sensitive = (await deps.isSensitive?.(d.tenantId, d.speciesCode)) ?? false;
    const takers = sensitive ? wanted.filter((c) => c.type !== 'birdweather') : wanted;
    if (takers.length === 0) return [];
    const facts = await repo.facts(d.tenantId, d.id);
    if (!facts) return [];
    const detectedAt = new Date(d.detectedAt);
    const countToday = await repo.countToday(d.tenantId, d.satelliteId, detectedAt, await deps.timeZone(d.tenantId));
    const payload: StreamPayload = {
      stream: 'detection',
      detectionId: d.id,
      satelliteId: d.satelliteId,
      satelliteName: d.satelliteName,
      speciesCode: d.speciesCode,
      scientificName: d.scientificName,
      commonName: d.commonName,
      confidence: d.confidence,
      detectedAt: sensitive ? coarsenTime(detectedAt, 'outside').start : detectedAt.toISOString(),
      countToday,
      sensitive,
      // No audio, and no time finer than the hour, about a sensitive species.
      chunkId: sensitive ? null : facts.chunkId,
      chunkStartedAt: sensitive || !facts.chunkStartedAt ? null : new Date(facts.chunkStartedAt).toISOString(),
      chunkDurationMs: sensitive ? null : facts.chunkDurationMs,
      startMs: sensitive ? 0 : facts.startMs,
      endMs: sensitive ? 0 : facts.endMs,
      latitude: sensitive ? null : facts.latitude,
      longitude: sensitive ? null : facts.longitude,
    };
    const at = deps.clock.now();
    const ids = await repo.insertOnce(
      takers.map((c) => ({ id: streamDeliveryId(c.id, d.id), tenantId: d.tenantId, channelId: c.id, payload, at })),
    );
    await deps.dispatcher.enqueue(ids);
    return ids;
  }

  return { onDetection };
}

export type DetectionStreams = ReturnType<typeof createDetectionStreams>;
