/**
 * Job payloads on the queue port: one queue name and one payload type per kind of job, so the
 * producer and the consumer cannot disagree about a field.
 */
export const INFERENCE_QUEUE = 'inference';

/** Classify one stored chunk (spec protocol §6: job id = chunkId, so a redelivered chunk is one job). */
export interface InferenceJob {
  chunkId: string;
  tenantId: string;
  satelliteId: string;
  storageKey: string;
  /** Looks so far of a window waiting for the chunk after this one (src/inference/windows.ts); absent on the first. */
  waits?: number;
}
