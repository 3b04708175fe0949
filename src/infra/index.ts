import type { Config } from '../config.ts';
import type { Infra } from '../app.ts';
import { type Clock, systemClock } from '../core/clock.ts';
import { createDb } from './db/index.ts';
import { migrate } from './db/migrate.ts';
import { createKv } from './kv/index.ts';
import { createMailer } from './mail/index.ts';
import { createBus } from './bus/index.ts';
import { createStorage } from './storage/index.ts';
import { createQueue } from './queue/index.ts';

/** Builds every port from config: embedded parts by default, production peers by URL. */
export async function createInfra(config: Config, opts: { clock?: Clock; databaseSchema?: string | null; migrate?: boolean } = {}): Promise<Infra> {
  const clock = opts.clock ?? systemClock;
  const db = await createDb({ ...config, databaseSchema: opts.databaseSchema ?? process.env.DATABASE_SCHEMA ?? null });
  if (opts.migrate !== false) await migrate(db);
  const kv = createKv(config, clock);
  const mail = createMailer(config, () => clock.now());
  const bus = createBus(config);
  const storage = createStorage(config);
  const queue = createQueue(config);
  return { config, db, kv, mail, bus, storage, queue, clock };
}

export async function closeInfra(infra: Infra): Promise<void> {
  // The queue first: its workers finish their running jobs while the other ports are still open.
  await infra.queue.close().catch(() => {});
  await Promise.allSettled([infra.kv.close(), infra.mail.close(), infra.bus.close(), infra.storage.close()]);
  await infra.db.close();
}
