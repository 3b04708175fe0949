import type { Db } from '../../infra/db/index.ts';
import type { ObjectStorage } from '../../infra/storage/index.ts';
import { AppError, notFound } from '../../core/errors.ts';
import { batched } from '../../core/batch.ts';
import { createAudioRepo } from './repo.ts';
import { createUsageRepo } from './usage-repo.ts';
import { createInferenceFailuresRepo } from './inference-failures-repo.ts';

export type { SatelliteUsageRow } from './usage-repo.ts';

/** Where a chunk's WAV lives (DESIGN.md §5), dated by its recording day in UTC. */
export function chunkStorageKey(tenantId: string, satelliteId: string, chunkId: string, recordedAt: Date): string {
  const d = recordedAt.toISOString();
  return `audio/${tenantId}/${satelliteId}/${d.slice(0, 4)}/${d.slice(5, 7)}/${d.slice(8, 10)}/${chunkId}.wav`;
}

/**
 * The byte range a `Range` header asks for, against an object of `size` bytes (RFC 9110 §14).
 * - null: no usable single range (absent, another unit, several ranges, bad syntax): send it all;
 * - 'unsatisfiable': a well-formed range that lies outside the object (416);
 * - otherwise the inclusive range, clamped to the object.
 */
export function parseRange(header: string | undefined, size: number): { start: number; end: number } | 'unsatisfiable' | null {
  if (!header) return null;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) return null;
  if (m[1] === '') {
    // Suffix range: the last N bytes.
    const n = Number(m[2]);
    if (!Number.isSafeInteger(n)) return null;
    if (n === 0 || size === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - n), end: size - 1 };
  }
  const start = Number(m[1]);
  const end = m[2] === '' ? Infinity : Number(m[2]);
  if (!Number.isSafeInteger(start) || (end !== Infinity && !Number.isSafeInteger(end)) || end < start) return null;
  if (start >= size) return 'unsatisfiable';
  return { start, end: Math.min(end, size - 1) };
}

export interface AudioResponse {
  status: 200 | 206 | 416;
  headers: Record<string, string>;
  body: Buffer | null;
}

export function createAudioService(deps: { db: Db; storage: Pick<ObjectStorage, 'stat' | 'get' | 'getRange' | 'delete'> }) {
  const { storage } = deps;
  const repo = createAudioRepo(deps.db);
  const markClassified = batched(async (marks: Array<{ tenantId: string; chunkId: string; at: Date }>) => {
    await repo.markClassified(marks);
    return marks.map(() => undefined);
  });
  const usage = createUsageRepo(deps.db);
  return {
    /** The failure marks of chunks' inference jobs, for the jobs module's re-drives and list (inference-failures-repo.ts). */
    inferenceFailures: createInferenceFailuresRepo(deps.db),

    /** Stored audio per satellite of a team, with the net bytes since `since` (0024 aggregates). */
    usageOfTeam: usage.ofTeam,

    /** Stored audio per satellite of every team, with the net bytes since `since` (hub admins). */
    usageOfHub: usage.ofHub,

    /** Ingest: chunk rows in one statement, each answered with what it found (repo.ts storeMany). */
    storeChunks: repo.storeMany,

    /** Ingest: whether the satellite exists in that team and who holds the chunk id. */
    ingestFacts: repo.ingestFacts,

    /** Chunks received since a time that were never classified, in pages (start-up re-enqueueing). */
    unclassifiedSince: repo.unclassifiedSince,

    /**
     * The inference worker classified the chunk, with or without detections. Marks made while one
     * is being written go together as the next statement: on PostgreSQL each was a commit of its
     * own (4.5–7 ms here, bench ingest-sql), on PGlite ~1 ms of the hub's one thread per chunk.
     */
    markClassified: (tenantId: string, chunkId: string, at: Date) => markClassified({ tenantId, chunkId, at }),

    /** The guard's team resolver for `chunk` resources. */
    teamOfChunk: repo.teamOfChunk,

    /** A chunk's stored WAV bytes as GET /audio/:chunkId serves them, or null (exports with audio). */
    async bytesOf(tenantId: string, chunkId: string): Promise<Buffer | null> {
      const chunk = await repo.find(tenantId, chunkId);
      return chunk && !chunk.audioDeletedAt ? storage.get(chunk.storageKey) : null;
    },

    /**
     * Voice privacy (issue 31): removes a chunk's audio object because a human voice was heard in
     * it, and marks the row (it stays: detections keep their chunk, removals stay countable). The
     * object goes first, so a crash in between leaves a row pointing at nothing, never a playable
     * voice; deleting a missing key is fine, so a retried job does it again harmlessly.
     */
    async removeVoiceAudio(tenantId: string, chunkId: string, at: Date): Promise<boolean> {
      const chunk = await repo.find(tenantId, chunkId);
      if (!chunk || chunk.audioRemovedReason === 'human_voice') return false;
      await storage.delete(chunk.storageKey);
      return repo.markVoiceRemoved(tenantId, chunkId, at);
    },

    /** A chunk's WAV, whole or the range asked for. */
    async read(tenantId: string, chunkId: string, range: string | undefined): Promise<AudioResponse> {
      const chunk = await repo.find(tenantId, chunkId);
      if (!chunk) throw notFound('No such chunk');
      // Removed for a voice heard in it, or by audio retention (retention.ts): the row stays, the object is gone.
      if (chunk.audioRemovedReason === 'human_voice') {
        throw new AppError(404, 'AUDIO_REMOVED_HUMAN_VOICE', 'The audio of this chunk was removed: a human voice was heard in it');
      }
      if (chunk.audioDeletedAt) throw notFound('The audio of this chunk is no longer stored');
      const stat = await storage.stat(chunk.storageKey);
      if (!stat) throw notFound('The audio of this chunk is no longer stored');
      const common = { 'content-type': 'audio/wav', 'accept-ranges': 'bytes', 'cache-control': 'private, max-age=86400' };
      const wanted = parseRange(range, stat.size);
      if (wanted === 'unsatisfiable') {
        return { status: 416, headers: { ...common, 'content-range': `bytes */${stat.size}` }, body: null };
      }
      if (!wanted) {
        const body = await storage.get(chunk.storageKey);
        if (!body) throw notFound('The audio of this chunk is no longer stored');
        return { status: 200, headers: common, body };
      }
      const body = await storage.getRange(chunk.storageKey, wanted.start, wanted.end);
      if (!body) throw notFound('The audio of this chunk is no longer stored');
      return {
        status: 206,
        headers: { ...common, 'content-range': `bytes ${wanted.start}-${wanted.start + body.length - 1}/${stat.size}` },
        body,
      };
    },
  };
}

export type AudioService = ReturnType<typeof createAudioService>;
