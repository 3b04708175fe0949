/**
 * `chorus serve` and `chorus worker`: the hub process (DESIGN.md §3). Loaded by src/main.ts only
 * for these commands, so an operator command or `help` does not pay for the whole hub's modules.
 */
import type { Config } from '../config.ts';
import { buildApp } from '../app.ts';
import { closeInfra, createInfra } from '../infra/index.ts';
import { prepareOrCheckDatabase } from '../database.ts';
import { satelliteCredentialCheck } from '../modules/satellites/broker-credentials.ts';
import { ensureFirstAdmin, type BootstrapResult } from '../bootstrap.ts';
import { startRuntime } from '../runtime.ts';
import { describeTrustProxy } from '../core/client-address.ts';
import { lockDataDir } from '../ops/data-dir-lock.ts';
import { answerBackupRequests } from '../ops/online-backup.ts';
import { createLogger, msSince, type Log } from '../core/log.ts';
import type { Broker } from '../infra/broker/types.ts';

/** `config` was read by src/main.ts before this module loaded, so a bad setting is refused at once. */
export async function serve(config: Config) {
  // One logger for the whole process (src/core/log.ts): these lines, HTTP, ingest, queue, shutdown.
  const log = createLogger({ level: config.logLevel, mode: config.mode });
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
  // Drain in order (ingest stops taking chunks and finishes its acks, queue workers finish their
  // running jobs, then HTTP and the ports close), within a bound: a stuck step never keeps the
  // process (and its port) alive past SHUTDOWN_TIMEOUT_MS.
  const stop = async (signal: NodeJS.Signals) => {
    const stopping = performance.now();
    // The step under way, named when the bound runs out (Redis away: closing the queue waits for it).
    let now = 'ingest and queue workers';
    log.info({ signal, boundMs: config.shutdownTimeoutMs }, `shutdown: ${signal} received; draining within ${config.shutdownTimeoutMs} ms`);
    setTimeout(() => {
      log.error(
        { ms: msSince(stopping), step: now },
        `shutdown took longer than ${config.shutdownTimeoutMs} ms, stuck closing the ${now}; exiting anyway`,
      );
      process.exit(1);
    }, config.shutdownTimeoutMs).unref();
    await stopRuntime();
    now = 'HTTP server';
    const step = performance.now();
    await app.close();
    log.info({ step: 'http', ms: msSince(step) }, 'shutdown: HTTP and WebSockets closed');
    now = 'online backups';
    await stopBackups?.();
    await closeInfra(infra, { logSteps: true, onStep: (what) => (now = what) });
    lock?.release();
    log.info({ ms: msSince(stopping) }, `shutdown: complete in ${msSince(stopping)} ms; exiting`);
    process.exit(0);
  };
  // A second Ctrl-C (or SIGTERM) during the drain must not cut it short: ended half-way, the
  // embedded database is left unclosed. It is noted; SHUTDOWN_TIMEOUT_MS still bounds the drain.
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      log.warn({ signal }, `shutdown: ${signal} received again; still draining (done within ${config.shutdownTimeoutMs} ms at most)`);
      return;
    }
    stopping = true;
    void stop(signal);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  // Announced only once the signals are ours: a supervisor (or a test) that stops the hub as soon as
  // it reads "start-up complete" must meet the drain, not the signal's default action (seen once
  // under load). The start-up lines are written under LOG_LEVEL=warn or error too: they hold the URL
  // and the first admin's one-time credentials (only LOG_LEVEL=silent hides them).
  const startup = config.logLevel === 'silent' || log.isLevelEnabled('info') ? log : log.child({}, { level: 'info' });
  logBanner(startup, config, address, infra.broker, first);
  startup.info({ ms: msSince(startedAt) }, `start-up complete in ${msSince(startedAt)} ms`);
}

/**
 * The start-up lines (README "First run"), one log line each whose msg is the sentence a person
 * reads. The generated first admin's password is written once, here, when it was created; a later
 * start finds an admin and names nobody's password.
 */
function logBanner(log: Log, config: Config, address: string, b: Broker, first: BootstrapResult): void {
  const url = config.publicUrl;
  const at = { component: 'start-up' };
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
