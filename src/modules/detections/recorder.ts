/**
 * Recording what the model heard in one chunk (issue 5): the rows, their first-of-day/season and
 * rare flags, stitching and the team's aggregation rule, and the detection messages the worker
 * then sends (satellite protocol "Detection message", WebSocket `detection` event).
 *
 * - Idempotent per chunk: a chunk that already has detections stores nothing (checked again
 *   under a per-team lock inside the transaction, which also serialises the first-of-day/season
 *   decisions of one team).
 * - First of day / of season: firsts.ts. Rare: judged from the team's own record before the
 *   detection (rarity.ts). Tentative or promoted: aggregation.ts.
 * - Below its species threshold (src/modules/species-thresholds): stored tentative with the
 *   threshold in below_threshold, never announced, stitched or promoted.
 * - One call, several recorders (observations.ts): a row the page starts listing may join another
 *   satellite's observation of the call; it is then not announced (one alert per observation).
 */
import type { Db } from '../../infra/db/index.ts';
import type { AnnouncedDetection } from '../../infra/bus/index.ts';
import type { Clock } from '../../core/clock.ts';
import { newId } from '../../core/crypto.ts';
import { createDetectionsRepo, type ChunkToClassify, type FollowingChunk, type NewDetection } from './repo.ts';
import { aggregate, type AggregationRule } from './aggregation.ts';
import { FEW_RECORDS, judgeRarity } from './rarity.ts';
import { dayOf, seasonOf } from './firsts.ts';
import { mergeObservations, OBSERVATIONS_OFF, type ObservationRule } from './observations.ts';

export type { ChunkToClassify, FollowingChunk, NewDetection };

/** The detection message (satellite protocol "Detection message"). */
export interface DetectionMessage {
  id: string;
  tenantId: string;
  satelliteId: string;
  satelliteName: string;
  speciesCode: string;
  commonName: string;
  scientificName: string;
  confidence: number;
  isRare: boolean;
  isFirstOfDay: boolean;
  isFirstOfSeason: boolean;
  rareReason: string | null;
  detectedAt: string;
  audioChunkId: string;
}

/** The fields alert rules read of a detection (bus `detection.announced`), from a detection message or a stored row. */
export function announcement(
  d: Pick<
    DetectionMessage,
    | 'id'
    | 'tenantId'
    | 'satelliteId'
    | 'speciesCode'
    | 'scientificName'
    | 'commonName'
    | 'confidence'
    | 'isRare'
    | 'isFirstOfDay'
    | 'isFirstOfSeason'
    | 'detectedAt'
  > & {
    satelliteName: string | null;
  },
  modelId: string | null,
): AnnouncedDetection {
  return {
    id: d.id,
    tenantId: d.tenantId,
    satelliteId: d.satelliteId,
    satelliteName: d.satelliteName ?? '',
    speciesCode: d.speciesCode,
    scientificName: d.scientificName,
    commonName: d.commonName,
    modelId,
    confidence: d.confidence,
    isRare: d.isRare,
    isFirstOfDay: d.isFirstOfDay,
    isFirstOfSeason: d.isFirstOfSeason,
    detectedAt: d.detectedAt,
  };
}

/** One species the model heard in the chunk: its most confident window. */
export interface HeardSpecies {
  speciesCode: string;
  scientificName: string;
  commonName: string;
  category: string;
  confidence: number;
  /** Where its window starts inside the chunk. */
  startMs: number;
  /** Where its window ends, from the chunk's start (absent: 3 s after startMs, within the chunk). */
  endMs?: number;
  /** The chunks a window longer than the chunk spans, this chunk first (absent: this chunk alone). */
  spanChunkIds?: readonly string[];
  /** The window ran past the chunks that came and was completed with silence. */
  padded?: boolean;
  /** The window's embedding (models with an embedding output), stored beside the detection. */
  embedding?: Float32Array | null;
  /** The range filter's verdict (src/modules/range): out of range at the satellite that week. */
  outOfRange?: boolean;
  /** What judged it: the range model, eBird's recent reports, or a team list (null: nothing). */
  rangeSource?: 'range_model' | 'ebird' | 'team_list' | null;
  /** The range model's score for the species there (null: no range model judged it). */
  rangeScore?: number | null;
}

/** What recording one chunk did: the rows it stored, and the detection messages to send. */
export interface RecordedChunk {
  stored: NewDetection[];
  announced: DetectionMessage[];
  /** Of the announced, the ids flagged out of range: no alert rule hears of them. */
  outOfRange?: string[];
}

const NOTHING: RecordedChunk = Object.freeze({ stored: [], announced: [] }) as RecordedChunk;

export function createDetectionRecorder(deps: {
  db: Db;
  clock: Clock;
  aggregationRule: (tenantId: string) => Promise<AggregationRule>;
  /** The team's per-species thresholds in force for these codes (none: no thresholds). */
  speciesThresholds?: (tenantId: string, codes: readonly string[]) => Promise<Map<string, number>>;
  /** The team's rule for merging one call heard by several satellites (absent: never merged). */
  observationRule?: (tenantId: string) => Promise<ObservationRule>;
}) {
  const { db, clock } = deps;
  const repo = createDetectionsRepo(db);

  return {
    /** The chunk a job names (null when taken back, or its team or satellite deleted). */
    chunkToClassify: (tenantId: string, chunkId: string): Promise<ChunkToClassify | null> => repo.chunkToClassify(tenantId, chunkId),

    /** The satellite's chunks recorded in (after, before), oldest first: a long window's neighbours (src/inference/windows.ts). */
    followingChunks: (tenantId: string, satelliteId: string, after: Date, before: Date): Promise<FollowingChunk[]> =>
      repo.followingChunks(tenantId, satelliteId, after, before),

    /**
     * Stores the species heard in one chunk (most confident first, one per species code) and
     * returns the rows stored and the messages the Detections page's new entries warrant.
     */
    async recordChunk(input: {
      tenantId: string;
      chunkId: string;
      chunk: Pick<ChunkToClassify, 'satelliteId' | 'satelliteName' | 'recordedAt' | 'durationMs'>;
      modelId: string;
      heard: HeardSpecies[];
      /** Read with the worker's other settings; null: read here. */
      rule: AggregationRule | null;
      /** Categories the team shows (null: every category). */
      visibleCategories: readonly string[] | null;
      /** Read with the worker's other settings; absent or null: read here. */
      observations?: ObservationRule | null;
    }): Promise<RecordedChunk> {
      const { tenantId, chunkId, chunk, modelId } = input;
      const chunkStart = new Date(chunk.recordedAt).getTime();
      const found: Array<Omit<NewDetection, 'isFirstOfDay' | 'isFirstOfSeason'>> = input.heard.map((h) => ({
        id: newId(),
        tenantId,
        satelliteId: chunk.satelliteId,
        chunkId,
        speciesCode: h.speciesCode,
        scientificName: h.scientificName,
        commonName: h.commonName,
        category: h.category,
        confidence: h.confidence,
        // The detection starts where its window does inside the chunk.
        detectedAt: new Date(chunkStart + h.startMs),
        startMs: h.startMs,
        // A window spanning later chunks ends past this one's end: its end is the window's.
        endMs: h.endMs ?? Math.min(chunk.durationMs, h.startMs + 3000),
        modelId,
        isRare: false,
        rareReason: null,
        createdAt: clock.now(),
        padded: h.padded ?? false,
        spanChunkIds: h.spanChunkIds && h.spanChunkIds.length > 1 ? [...h.spanChunkIds] : null,
        outOfRange: h.outOfRange ?? false,
        rangeSource: h.rangeSource ?? null,
        rangeScore: h.rangeScore ?? null,
      }));
      if (found.length === 0) return NOTHING;
      const detectedAt = new Date(chunkStart);
      // Read before the transaction opens: on PGlite a read outside it would wait for it forever.
      const rule = input.rule ?? (await deps.aggregationRule(tenantId));
      const observations = input.observations ?? (await deps.observationRule?.(tenantId)) ?? OBSERVATIONS_OFF;
      const thresholds =
        (await deps.speciesThresholds?.(tenantId, [...new Set(found.map((d) => d.speciesCode))])) ?? new Map<string, number>();
      const below = new Map<string, number>();
      for (const d of found) {
        const t = thresholds.get(d.speciesCode);
        if (t !== undefined && d.confidence < t) below.set(d.id, t);
      }

      const { rows: stored, outcome } = await db.tx(async (tx) => {
        // One team at a time: the idempotence check and the first-of-day/season reads see every
        // earlier commit of the team. (PGlite is one session: its transactions never overlap.)
        if (tx.kind === 'postgres') await tx.run('SELECT pg_advisory_xact_lock(hashtext($1))', [`detections:${tenantId}`]);
        const codes = found.map((d) => d.speciesCode);
        const record = await repo.teamRecord(tx, {
          tenantId,
          chunkId,
          codes,
          day: dayOf(detectedAt),
          season: seasonOf(detectedAt),
          few: FEW_RECORDS,
        });
        if (record.done) return { rows: [] as NewDetection[], outcome: null };
        const { seenToday, seenSeason } = record;
        const rarity = record;
        const rows: NewDetection[] = found.map((d) => ({
          ...d,
          isFirstOfDay: !seenToday.has(d.speciesCode),
          isFirstOfSeason: !seenSeason.has(d.speciesCode),
          ...judgeRarity(d, rarity),
        }));
        await repo.insertMany(tx, rows);
        // found (and so rows) is in the order of input.heard.
        await repo.insertEmbeddings(
          tx,
          rows.flatMap((r, i) => {
            const vector = input.heard[i].embedding;
            return vector ? [{ detectionId: r.id, tenantId, modelId, vector }] : [];
          }),
        );
        await repo.holdBelowThreshold(tx, below);
        // Stitching and the team's aggregation rule (aggregation.ts) decide tentative or promoted.
        const outcome = await aggregate(tx, { tenantId, satelliteId: chunk.satelliteId, rows, rule, held: new Set(below.keys()) });
        // Earlier tentative rows this insert promoted are announced now, as the page lists them now.
        const promotedHeads = outcome.promoted.length > 0 ? await repo.callHeadsAmong(tx, outcome.promoted) : [];
        // What the page lists from now on may be another satellite's recording of a listed call.
        const tentative = new Set(outcome.tentative);
        const listed = [...rows.filter((r) => !tentative.has(r.id) && !outcome.stitched.has(r.id) && !below.has(r.id)), ...promotedHeads];
        const joined = await mergeObservations(tx, { tenantId, rows: listed, rule: observations });
        return { rows: [...rows, ...promotedHeads], outcome: { ...outcome, joined } };
      });
      if (!outcome) return NOTHING;

      // The satellite and the team's sockets hear of each detection the Detections page now lists
      // (docs/decisions.md "Announcements"): not tentative ones, not a stitched call's
      // continuations, not another satellite's recording of an observation, not categories the team hides.
      const silent = new Set([...outcome.tentative, ...outcome.stitched.keys(), ...below.keys(), ...outcome.joined]);
      const visible = input.visibleCategories;
      const announced = stored.filter((d) => !silent.has(d.id) && (visible === null || visible.includes(d.category)));
      const messages = announced.map<DetectionMessage>((d) => ({
        id: d.id,
        tenantId,
        satelliteId: d.satelliteId,
        satelliteName: chunk.satelliteName ?? '',
        speciesCode: d.speciesCode,
        commonName: d.commonName,
        scientificName: d.scientificName,
        confidence: d.confidence,
        isRare: d.isRare,
        isFirstOfDay: d.isFirstOfDay,
        isFirstOfSeason: d.isFirstOfSeason,
        rareReason: d.rareReason,
        detectedAt: new Date(d.detectedAt).toISOString(),
        audioChunkId: d.chunkId,
      }));
      return {
        stored: stored.filter((d) => d.chunkId === chunkId),
        announced: messages,
        outOfRange: announced.filter((d) => d.outOfRange).map((d) => d.id),
      };
    },
  };
}

export type DetectionRecorder = ReturnType<typeof createDetectionRecorder>;
