/**
 * Start-up recovery of inference jobs. The in-process queue loses its waiting jobs when the hub
 * stops, and a crash between the chunk row and the enqueue leaves a row without a job; the
 * satellite got no ack then and will redeliver, but the redelivery finds the row and only acks.
 * So at start the hub enqueues again the chunks of the last 24 hours the worker never marked
 * classified (chunks.classified_at, detections or none; issue 32: a bird-free chunk was offered
 * again at every start before). The queue is idempotent on the job id (= chunkId), so chunks
 * whose job still exists gain nothing.
 */
import type { Clock } from '../core/clock.ts';
import type { JobQueue } from '../infra/queue/index.ts';
import { INFERENCE_QUEUE, type InferenceJob } from '../protocol/jobs.ts';
import type { AudioService } from '../modules/audio/service.ts';

export const REQUEUE_WINDOW_MS = 24 * 3600_000;
const PAGE = 1000;

export async function requeueRecentChunks(
  deps: { audio: Pick<AudioService, 'unclassifiedSince'>; clock: Clock; queue: Pick<JobQueue, 'enqueue'> },
  windowMs = REQUEUE_WINDOW_MS,
): Promise<number> {
  const since = new Date(deps.clock.now().getTime() - windowMs);
  let after: { receivedAt: Date; id: string } | null = null;
  let count = 0;
  for (;;) {
    const page = await deps.audio.unclassifiedSince(since, after, PAGE);
    for (const c of page) {
      const job: InferenceJob = { chunkId: c.id, tenantId: c.tenantId, satelliteId: c.satelliteId, storageKey: c.storageKey };
      await deps.queue.enqueue(INFERENCE_QUEUE, c.id, job);
      count++;
    }
    if (page.length < PAGE) return count;
    const last = page[page.length - 1];
    after = { receivedAt: last.receivedAt, id: last.id };
  }
}
