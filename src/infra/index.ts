import type { Config } from '../config.ts';
import type { Infra } from './types.ts';
import { type Clock, systemClock } from '../core/clock.ts';
import { type Log, msSince, silentLog } from '../core/log.ts';
import { createDb, type Db } from './db/index.ts';
import { createKv } from './kv/index.ts';
import { createMailer } from './mail/index.ts';
import { createBus } from './bus/index.ts';
import { createStorage } from './storage/index.ts';
import { createQueue } from './queue/index.ts';
import { createBroker } from './broker/index.ts';
import type { Broker, SatelliteCredentialCheck } from './broker/types.ts';
import { createBusBroker } from './broker/bus-broker.ts';

export interface InfraOptions {
  clock?: Clock;
  /** A database the caller opened (the test hub: a PGlite from a snapshot, a PostgreSQL schema); closeInfra closes it. */
  db?: Db;
  databaseSchema?: string | null;
  /** false: no broker connection (one-shot commands). */
  broker?: boolean;
  /** How the embedded broker checks a satellite's login; the satellites module knows the table (composition passes it). */
  credentialCheck?: (db: Db) => SatelliteCredentialCheck;
  /** The process's logger, handed to every port that logs (queue, broker); silent by default. */
  log?: Log;
}

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

async function createBrokerPort(config: Config, db: Db, bus: Infra['bus'], kv: Infra['kv'], opts: InfraOptions): Promise<Broker> {
  if (opts.broker === false) return noBroker();
  // Split mode: an api instance opens no broker listeners; the dispatcher runs its commands (bus-broker.ts).
  if (config.mode === 'api' || config.mode === 'worker') return createBusBroker(config, bus);
  // Mosquitto checks logins itself (dynamic security); the embedded broker asks the check.
  if (!opts.credentialCheck && !config.mqttUrl) throw new Error('createInfra: the embedded broker needs a credentialCheck');
  const refuseAll: SatelliteCredentialCheck = async () => null;
  return createBroker(config, opts.credentialCheck?.(db) ?? refuseAll, {
    log: (opts.log ?? silentLog).child({ component: 'broker' }),
    failures: kv.limiter('mqtt-failures', config.limits.mqttFailures),
  });
}

/**
 * Builds every port from config: embedded parts by default, production peers by URL. The schema
 * is the caller's business (src/database.ts prepares it).
 */
export async function createInfra(config: Config, opts: InfraOptions = {}): Promise<Infra> {
  const clock = opts.clock ?? systemClock;
  const log = opts.log ?? silentLog;
  const db = opts.db ?? (await createDb({ ...config, databaseSchema: opts.databaseSchema ?? process.env.DATABASE_SCHEMA ?? null }));
  const kv = createKv(config, clock);
  const mail = createMailer(config, () => clock.now());
  const bus = createBus(config);
  const storage = createStorage(config);
  const queue = createQueue(config, { log: log.child({ component: 'queue' }) });
  const broker = await createBrokerPort(config, db, bus, kv, opts);
  return { config, db, kv, mail, bus, storage, queue, broker, clock, log };
}

/** Closes every port; with `logSteps`, each step is logged with its duration (shutdown, docs/operations.md). */
export async function closeInfra(infra: Infra, opts: { logSteps?: boolean; onStep?: (what: string) => void } = {}): Promise<void> {
  const step = async (what: string, run: () => Promise<unknown>) => {
    opts.onStep?.(what);
    const start = performance.now();
    await run();
    if (opts.logSteps) infra.log.info({ step: what, ms: msSince(start) }, `shutdown: ${what} closed`);
  };
  // The queue first: its workers finish their running jobs while the other ports are still open.
  await step('queue', () => infra.queue.close().catch((err) => infra.log.warn({ err }, 'shutdown: closing the queue failed')));
  await step('broker, key-value store, mail, bus and object storage', () =>
    Promise.allSettled([infra.broker.close(), infra.kv.close(), infra.mail.close(), infra.bus.close(), infra.storage.close()]),
  );
  await step('database', () => infra.db.close());
}
