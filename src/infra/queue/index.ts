import type { Config } from '../../config.ts';
import { createMemoryQueue } from './memory.ts';
import { createBullmqQueue } from './bullmq.ts';
import { QUEUE_DEFAULTS, type JobQueue, type QueueOptions } from './types.ts';

export type { Job, JobHandler, JobQueue, QueueCounts, QueueOptions } from './types.ts';

/** In-process by default; BullMQ on Redis when `REDIS_URL` is set (keys under the kv prefix). */
export function createQueue(config: Pick<Config, 'redisUrl' | 'kvPrefix'>, opts: QueueOptions = {}): JobQueue {
  const options = { ...QUEUE_DEFAULTS, ...opts };
  return config.redisUrl ? createBullmqQueue(config.redisUrl, `${config.kvPrefix}bull`, options) : createMemoryQueue(options);
}
