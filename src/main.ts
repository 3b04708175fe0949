import { parseArgs } from 'node:util';
import { type Config, ConfigError, loadConfig } from './config.ts';
import { buildApp } from './app.ts';
import { createServices } from './services.ts';
import { closeInfra, createInfra } from './infra/index.ts';
import { createDb } from './infra/db/index.ts';
import { prepareDatabase, prepareOrCheckDatabase, SchemaBehindError } from './database.ts';
import { satelliteCredentialCheck } from './modules/satellites/broker-credentials.ts';
import { ensureFirstAdmin, type BootstrapResult } from './bootstrap.ts';
import { startRuntime } from './runtime.ts';
import { systemActor } from './core/actor.ts';
import { AppError, notFound } from './core/errors.ts';
import { describeTrustProxy } from './core/client-address.ts';
import { DataDirInUse, lockDataDir } from './ops/data-dir-lock.ts';
import { MODELS_USAGE, modelsCommand, type ModelsCommandDeps } from './modules/models/cli.ts';
import { answerBackupRequests } from './ops/online-backup.ts';
import { createLogger, msSince, type Log } from './core/log.ts';
import type { Broker } from './infra/broker/types.ts';

const USAGE = `chorus <command>

  serve                         start the hub (default)
  worker                        run inference workers only (CHORUS_MODE=worker; needs REDIS_URL and DATABASE_URL)
  migrate                       apply database migrations and exit (the species catalog too)
  jobs failed [--limit N]       list chunks whose inference job failed all its attempts
  jobs retry [CHUNK_ID ...]     retry failed inference jobs (all of them when no id is given)
  backup --out FILE [--data DIR] [--force]
                                archive the embedded database, objects and secret (the hub may run)
  restore FILE [--data DIR] [--force]
                                restore such an archive into an empty data dir (hub stopped)
  admin create-user --email E --name N --password P [--admin]
  admin make-admin --email E [--revoke]
  admin reset-password --email E [--password P]   (prints a generated one when omitted)
${MODELS_USAGE}
  satellite --hub URL --token BEARER --tenant ID [--name NAME] [--source synthetic|FILE.wav|FOLDER]
            [--chunks N] [--credentials FILE] [--data DIR] [--ws]
                                run the reference satellite (chorus satellite --help for all options)

Configuration comes from the environment; see README.md.`;

async function serve(mode?: 'worker') {
  const config = loadConfig(mode ? { ...process.env, CHORUS_MODE: mode } : process.env);
  // One logger for the whole process (src/core/log.ts): these lines, HTTP, ingest, queue, shutdown.
  const log = createLogger({ level: config.logLevel });
  const startedAt = performance.now();
  // One process per embedded database: PGlite keeps no lock of its own (docs/operations.md).
  const lock = config.databaseUrl
    ? null
    : lockDataDir(config.dataDir, {
        purpose: 'serve',
        takeForeign: true,
        // `chorus backup` may run beside this hub: the hub dumps its own database on request.
        onlineBackup: true,
        onForeign: (h) =>
          log.warn(
            { dataDir: config.dataDir, holderPid: h.pid, holderHost: h.hostname },
            `Taking over ${config.dataDir}/chorus.lock left by process ${h.pid} on host ${h.hostname}`,
          ),
      });
  const infra = await createInfra(config, { credentialCheck: satelliteCredentialCheck, log });
  // CHORUS_MIGRATE=off (rolling upgrades): `chorus migrate` ran first; refuse to start on an older schema.
  const prepared = await prepareOrCheckDatabase(infra.db, infra.clock.now(), config.migrate).catch(async (err) => {
    await closeInfra(infra);
    throw err;
  });
  if (prepared === null) log.info('database: schema is current (CHORUS_MIGRATE=off)');
  else if (prepared.applied.length > 0)
    log.info({ migrations: prepared.applied }, `database: applied ${prepared.applied.length} migration(s): ${prepared.applied.join(', ')}`);
  if (prepared && prepared.species > 0) log.info({ species: prepared.species }, `species catalog: ${prepared.species} species written`);
  // Mode (DESIGN.md §3): a dispatcher serves only /api/health; an api opens no broker listeners.
  const { app, services } = await buildApp(infra);
  const first =
    config.mode === 'dispatcher' || config.mode === 'worker' ? ({ kind: 'existing' } as const) : await ensureFirstAdmin(config, services);
  const address = await app.listen({ port: config.port, host: config.host });
  const stopRuntime = startRuntime(infra, services, log);
  const dumpDataDir = infra.db.dumpDataDir;
  const stopBackups =
    lock && dumpDataDir
      ? answerBackupRequests({ dataDir: config.dataDir, checkpoint: () => infra.db.exec('CHECKPOINT'), dump: dumpDataDir, log })
      : null;
  // The start-up lines are written under LOG_LEVEL=warn or error too: they hold the URL and the first
  // admin's one-time credentials (only LOG_LEVEL=silent hides them).
  const startup = config.logLevel === 'silent' || log.isLevelEnabled('info') ? log : log.child({}, { level: 'info' });
  logBanner(startup, config, address, infra.broker, first);
  startup.info({ mode: config.mode, ms: msSince(startedAt) }, `start-up complete in ${msSince(startedAt)} ms`);
  // Drain in order (ingest stops taking chunks and finishes its acks, queue workers finish their
  // running jobs, then HTTP and the ports close), within a bound: a stuck step never keeps the
  // process (and its port) alive past SHUTDOWN_TIMEOUT_MS.
  const stop = async (signal: NodeJS.Signals) => {
    const stopping = performance.now();
    log.info({ signal, boundMs: config.shutdownTimeoutMs }, `shutdown: ${signal} received; draining within ${config.shutdownTimeoutMs} ms`);
    setTimeout(() => {
      log.error({ ms: msSince(stopping) }, `shutdown took longer than ${config.shutdownTimeoutMs} ms; exiting anyway`);
      process.exit(1);
    }, config.shutdownTimeoutMs).unref();
    await stopRuntime();
    const step = performance.now();
    await app.close();
    log.info({ step: 'http', ms: msSince(step) }, 'shutdown: HTTP and WebSockets closed');
    await stopBackups?.();
    await closeInfra(infra, { logSteps: true });
    lock?.release();
    log.info({ ms: msSince(stopping) }, `shutdown: complete in ${msSince(stopping)} ms; exiting`);
    process.exit(0);
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

/**
 * The start-up lines (README "First run"), one log line each whose msg is the sentence a person
 * reads. The generated first admin's password is written once, here, when it was created; a later
 * start finds an admin and names nobody's password.
 */
function logBanner(log: Log, config: Config, address: string, b: Broker, first: BootstrapResult): void {
  const url = config.publicUrl;
  const at = { component: 'start-up', mode: config.mode };
  if (config.mode === 'worker')
    log.info(
      { ...at, address },
      `Chorus inference worker is running (health at ${address}/api/health); it takes jobs from the queue on Redis`,
    );
  else if (config.mode === 'dispatcher')
    log.info(
      { ...at, address },
      `Chorus dispatcher is running (health at ${address}/api/health); it executes the api instances' broker commands from the event bus`,
    );
  else
    log.info(
      { ...at, address, url },
      `Chorus${config.mode === 'full' ? '' : ` (${config.mode})`} is listening on ${address} — open ${url}  (API ${url}/api, docs ${url}/api/docs)`,
    );
  log.info(
    { ...at, broker: b.kind, brokerUrl: b.brokerUrl },
    `MQTT: ${b.kind === 'embedded' ? `embedded broker at ${b.brokerUrl} and ${b.wsUrl}` : b.kind === 'bus' ? `through the dispatcher (satellites dial ${b.brokerUrl})` : `Mosquitto at ${b.brokerUrl}`}`,
  );
  log.info(
    { ...at, database: config.databaseUrl ? 'postgresql' : 'pglite', kv: config.redisUrl ? 'redis' : 'memory' },
    `Database: ${config.databaseUrl ? 'PostgreSQL' : `embedded PGlite in ${config.dataDir}/db`}; key-value: ${config.redisUrl ? 'Redis' : 'in-memory'}; mail: ${config.smtpUrl ? 'SMTP' : 'recorded and dropped'}`,
  );
  // Which peers may name the client address (rate limits and audit entries depend on it).
  if (config.mode === 'full' || config.mode === 'api') log.info(at, `Proxy trust: ${describeTrustProxy(config.trustProxy)}`);
  if (first.kind === 'generated') {
    log.info(
      { ...at, email: first.email },
      `First start: a hub admin was created. These credentials are shown once: email ${first.email} password ${first.password} ` +
        '— sign in and change the password (PUT /api/auth/me/password).',
    );
  } else if (first.kind === 'from_env') {
    log.info({ ...at, email: first.email }, `Hub admin ${first.email} created from CHORUS_ADMIN_EMAIL.`);
  }
}

async function runMigrate() {
  const config = loadConfig();
  const db = await createDb({ ...config, databaseSchema: process.env.DATABASE_SCHEMA ?? null });
  const { applied, species } = await prepareDatabase(db, new Date());
  console.log(applied.length ? `Applied: ${applied.join(', ')}` : 'Database is up to date');
  if (species > 0) console.log(`Species catalog: ${species} species written`);
  await db.close();
}

async function admin(args: string[]) {
  const { positionals, values } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      email: { type: 'string' },
      name: { type: 'string' },
      password: { type: 'string' },
      admin: { type: 'boolean', default: false },
      revoke: { type: 'boolean', default: false },
    },
  });
  const [sub] = positionals;
  if (!values.email) throw new Error('--email is required');
  const config = loadConfig();
  const infra = await createInfra(config, { broker: false });
  await prepareOrCheckDatabase(infra.db, infra.clock.now(), config.migrate);
  const services = createServices(infra);
  const actor = systemActor();
  try {
    if (sub === 'create-user') {
      if (!values.password) throw new Error('--password is required');
      const u = await services.users.createUser(
        { email: values.email, name: values.name ?? values.email, password: values.password, isAdmin: values.admin },
        actor,
      );
      console.log(`Created ${u.email} (${u.id})${u.isAdmin ? ' as hub admin' : ''}`);
    } else if (sub === 'make-admin') {
      await services.users.setHubAdmin(values.email, !values.revoke, actor);
      console.log(`${values.email} is ${values.revoke ? 'no longer' : 'now'} a hub admin`);
    } else if (sub === 'reset-password') {
      const user = await services.accounts.findByEmail(values.email);
      if (!user) throw notFound(`No user with email ${values.email}`);
      const result = await services.users.adminResetPassword(actor, user.id, values.password);
      console.log(
        'temporaryPassword' in result
          ? `New password for ${values.email}: ${result.temporaryPassword}`
          : `Password of ${values.email} changed`,
      );
    } else {
      throw new Error(`Unknown admin command "${sub ?? ''}"\n\n${USAGE}`);
    }
  } finally {
    await closeInfra(infra);
  }
}

/**
 * Failed inference jobs (issue 21, docs/operations-jobs.md), on the database directly as the other
 * operator commands. A retry on the in-process queue cannot reach the hub's worker: the chunks are
 * marked as asked for and the running hub enqueues them at its next re-drive tick (or start).
 */
async function jobs(args: string[]) {
  const { positionals, values } = parseArgs({ args, allowPositionals: true, options: { limit: { type: 'string' } } });
  const [sub, ...ids] = positionals;
  if (sub !== 'failed' && sub !== 'retry') throw new Error(`Unknown jobs command "${sub ?? ''}"\n\n${USAGE}`);
  const limit = values.limit === undefined ? 100 : Number(values.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100_000) throw new Error('--limit must be a whole number from 1 to 100000');
  const bad = ids.find((id) => !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id));
  if (bad) throw new Error(`"${bad}" is not a chunk id (a UUID)`);
  const config = loadConfig();
  const infra = await createInfra(config, { broker: false });
  try {
    await prepareOrCheckDatabase(infra.db, infra.clock.now(), config.migrate);
    const services = createServices(infra);
    if (sub === 'failed') {
      const failed = await services.jobs.list(limit);
      if (failed.length === 0) console.log('No failed inference jobs');
      for (const j of failed) {
        console.log(
          `${j.failedAt}  chunk ${j.chunkId}  team ${j.tenantId}  satellite ${j.satelliteId}  re-drives ${j.redrives}  ${j.error ?? ''}`.trimEnd(),
        );
      }
      return;
    }
    const shared = infra.queue.kind === 'bullmq';
    const { retried } = await services.jobs.retry(systemActor(), ids.length > 0 ? ids : null, { enqueue: shared });
    console.log(
      `Retried ${retried} failed inference job${retried === 1 ? '' : 's'}` +
        (retried > 0 && !shared ? ' (the running hub enqueues them within 5 minutes, or when it starts)' : ''),
    );
  } finally {
    await closeInfra(infra);
  }
}

/**
 * `chorus models …` (src/modules/models/cli.ts) on the hub's own database and object store. On
 * embedded PGlite it holds the data dir's lock, as backup does: a running hub owns the database,
 * and then its dashboard or POST /api/admin/models/install is the way in.
 */
async function models(args: string[]) {
  const open = async (): Promise<ModelsCommandDeps> => {
    const config = loadConfig();
    let lock: ReturnType<typeof lockDataDir> | null = null;
    try {
      lock = config.databaseUrl ? null : lockDataDir(config.dataDir, { purpose: 'models' });
    } catch (err) {
      if (!(err instanceof DataDirInUse)) throw err;
      throw new Error(
        `${err.message}\nWhile the hub runs, install from its dashboard (Admin → Install a model) or with POST /api/admin/models/install.`,
        { cause: err },
      );
    }
    const infra = await createInfra(config, { broker: false });
    try {
      await prepareOrCheckDatabase(infra.db, infra.clock.now(), config.migrate);
    } catch (err) {
      await closeInfra(infra);
      lock?.release();
      throw err;
    }
    const services = createServices(infra);
    return {
      installer: services.modelInstaller,
      models: services.models,
      close: async () => {
        await closeInfra(infra);
        lock?.release();
      },
    };
  };
  process.exit(await modelsCommand(args, open));
}

async function main() {
  const [command = 'serve', ...rest] = process.argv.slice(2);
  if (command === 'serve') return serve();
  // DESIGN.md §3: `chorus worker` is `serve` in mode worker (inference only; needs REDIS_URL and DATABASE_URL).
  if (command === 'worker') return serve('worker');
  if (command === 'migrate') return runMigrate();
  if (command === 'admin') return admin(rest);
  if (command === 'jobs') return jobs(rest);
  if (command === 'models') return models(rest);
  if (command === 'backup' || command === 'restore') {
    const { backupCommand, restoreCommand } = await import('./ops/backup.ts');
    process.exit(await (command === 'backup' ? backupCommand : restoreCommand)(rest));
  }
  if (command === 'satellite') {
    const { satelliteCommand } = await import('./satellite/cli.ts');
    // The satellite speaks the protocol alone; its optional sound classifier is the hub's ONNX runner, lent here.
    const { loadSoundClassifier } = await import('./inference/sound-classifier.ts');
    process.exit(await satelliteCommand(rest, { loadSoundClassifier }));
  }
  if (command === 'help' || command === '--help') return console.log(USAGE);
  throw new Error(`Unknown command "${command}"\n\n${USAGE}`);
}

main().catch((err) => {
  const message =
    err instanceof ConfigError
      ? `Configuration error: ${err.message}`
      : err instanceof SchemaBehindError
        ? err.message
        : err instanceof AppError
          ? `${err.code}: ${err.message}`
          : String(err instanceof Error ? err.message : err);
  // A hub that cannot start says so in its log's format (one JSON line); a command, in plain words.
  const hub = ['serve', 'worker'].includes(process.argv[2] ?? 'serve');
  if (!hub) console.error(message);
  else if (err instanceof ConfigError || err instanceof SchemaBehindError) createLogger({ level: 'info' }).fatal(message);
  else createLogger({ level: 'info' }).fatal({ err }, message);
  process.exit(1);
});
