/**
 * The inference worker's handler over a test hub's parts, as the runtime builds it, for tests
 * that run one chunk through the worker by hand (a chosen classifier, a chunk made by makeChunk).
 */
import type { Hub } from './hub.ts';
import { createInferenceHandler, type InferenceWorkerDeps } from '../../src/inference/worker.ts';

/** `over` swaps parts: the classifier (loadClassifier), the team settings, the model id. */
export function inferenceHandler(hub: Hub, over: Partial<InferenceWorkerDeps> = {}) {
  return createInferenceHandler({
    detections: hub.services.detections,
    clock: hub.clock,
    storage: hub.infra.storage,
    queue: hub.infra.queue,
    broker: hub.infra.broker,
    live: hub.services.live,
    bus: hub.infra.bus,
    log: { warn: () => {} },
    ...over,
  });
}

/** Runs the worker once on a chunk, as its first attempt. */
export function classifyChunk(
  hub: Hub,
  chunk: { id: string; tenantId: string; satelliteId: string },
  over: Partial<InferenceWorkerDeps> = {},
) {
  return inferenceHandler(
    hub,
    over,
  )({
    id: chunk.id,
    attempt: 1,
    maxAttempts: 1,
    data: { chunkId: chunk.id, tenantId: chunk.tenantId, satelliteId: chunk.satelliteId },
  });
}
