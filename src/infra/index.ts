import type { Config } from '../config.ts';
import type { Infra } from '../app.ts';
import { type Clock, systemClock } from '../core/clock.ts';
import { createDb, type Db } from './db/index.ts';
import { migrate } from './db/migrate.ts';
import { createKv } from './kv/index.ts';
import { createMailer } from './mail/index.ts';
import { createBus } from './bus/index.ts';
import { createStorage } from './storage/index.ts';
import { createQueue } from './queue/index.ts';
import { type Broker, createBroker } from './broker/index.ts';
import { dbCredentialCheck } from './broker/credentials.ts';
import { createBusBroker } from './broker/bus-broker.ts';
import { syncSpeciesCatalog } from '../modules/species/catalog-sync.ts';
import { speciesCatalog } from '../inference/species-catalog.ts';

/** Builds every port from config: embedded parts by default, production peers by URL. */
/** For one-shot commands (CLI admin) that must not open broker listeners a running hub holds. */
function noBroker(): Broker {
  const refuse = async () => {
    throw new Error('this command has no broker connection');
  };
  return {
    kind: 'embedded',
    brokerUrl: '',
    wsUrl: null,
    provisionSatellite: refuse,
    revokeSatellite: refuse,
    publish: refuse,
    subscribe: refuse,
    close: async () => {},
  };
}

/** Migrations, then reference data kept like the schema: the species table follows the bundled catalog. */
export async function prepareDatabase(db: Db, now: Date): Promise<void> {
  await migrate(db);
  await syncSpeciesCatalog(db, speciesCatalog(), now);
}

export async function createInfra(
  config: Config,
  opts: { clock?: Clock; databaseSchema?: string | null; migrate?: boolean; broker?: boolean } = {},
): Promise<Infra> {
  const clock = opts.clock ?? systemClock;
  const db = await createDb({ ...config, databaseSchema: opts.databaseSchema ?? process.env.DATABASE_SCHEMA ?? null });
  if (opts.migrate !== false) await prepareDatabase(db, clock.now());
  const kv = createKv(config, clock);
  const mail = createMailer(config, () => clock.now());
  const bus = createBus(config);
  const storage = createStorage(config);
  const queue = createQueue(config);
  // Split mode: an api instance opens no broker listeners; the dispatcher runs its commands (bus-broker.ts).
  const broker =
    opts.broker === false
      ? noBroker()
      : config.mode === 'api' || config.mode === 'worker'
        ? createBusBroker(config, bus)
        : await createBroker(config, dbCredentialCheck(db), { failures: kv.limiter('mqtt-failures', config.limits.mqttFailures) });
  return { config, db, kv, mail, bus, storage, queue, broker, clock };
}

export async function closeInfra(infra: Infra): Promise<void> {
  // The queue first: its workers finish their running jobs while the other ports are still open.
  await infra.queue.close().catch(() => {});
  await Promise.allSettled([infra.broker.close(), infra.kv.close(), infra.mail.close(), infra.bus.close(), infra.storage.close()]);
  await infra.db.close();
}
