import type { Config } from '../config.ts';
import type { Clock } from '../core/clock.ts';
import type { Log } from '../core/log.ts';
import type { Db } from './db/types.ts';
import type { Kv } from './kv/index.ts';
import type { Mailer } from './mail/index.ts';
import type { Bus } from './bus/index.ts';
import type { ObjectStorage } from './storage/types.ts';
import type { JobQueue } from './queue/types.ts';
import type { Broker } from './broker/types.ts';

/** The infrastructure ports, built once at start-up from config (DESIGN.md §2). */
export interface Infra {
  config: Config;
  db: Db;
  kv: Kv;
  mail: Mailer;
  bus: Bus;
  storage: ObjectStorage;
  queue: JobQueue;
  broker: Broker;
  clock: Clock;
  /** The process's logger (src/core/log.ts); silent unless the composition passes one. */
  log: Log;
}
