import type { Config } from '../../config.ts';
import { createMemoryQueue } from './memory.ts';
import { createBullmqQueue } from './bullmq.ts';
import { QUEUE_DEFAULTS, type JobQueue, type QueueOptions } from './types.ts';

export type { Job, JobHandler, JobQueue, QueueCounts, QueueLog, QueueOptions } from './types.ts';

/** In-process by default; BullMQ on Redis when `REDIS_URL` is set (keys under the kv prefix). */
export function createQueue(
  config: Pick<Config, 'redisUrl' | 'kvPrefix'> & Partial<Pick<Config, 'queueAttempts' | 'queueBackoffMs' | 'queueLockMs'>>,
  opts: QueueOptions = {},
): JobQueue {
  const fromConfig: QueueOptions = {
    ...(config.queueAttempts ? { attempts: config.queueAttempts } : {}),
    ...(config.queueBackoffMs ? { backoffMs: config.queueBackoffMs } : {}),
    ...(config.queueLockMs ? { lockMs: config.queueLockMs } : {}),
  };
  const options = { ...QUEUE_DEFAULTS, ...fromConfig, ...opts };
  return config.redisUrl ? createBullmqQueue(config.redisUrl, `${config.kvPrefix}bull`, options) : createMemoryQueue(options);
}
