/**
 * The operator's commands on the hub's database (migrate, admin, jobs, models), run beside or
 * instead of a hub. Loaded by src/main.ts only when one of them is asked for.
 */
import { parseArgs } from 'node:util';
import { type Config, loadConfig } from '../config.ts';
import { createServices } from '../services.ts';
import { closeInfra, createInfra } from '../infra/index.ts';
import { createDb } from '../infra/db/index.ts';
import { prepareDatabase, prepareOrCheckDatabase } from '../database.ts';
import { systemActor } from '../core/actor.ts';
import { notFound } from '../core/errors.ts';
import { DataDirInUse, lockDataDir } from '../ops/data-dir-lock.ts';
import { modelsCommand, type ModelsCommandDeps } from '../modules/models/cli.ts';

export async function runMigrate(config: Config) {
  const db = await createDb({ ...config, databaseSchema: process.env.DATABASE_SCHEMA ?? null });
  const { applied, species } = await prepareDatabase(db, new Date());
  console.log(applied.length ? `Applied: ${applied.join(', ')}` : 'Database is up to date');
  if (species > 0) console.log(`Species catalog: ${species} species written`);
  await db.close();
}

export async function admin(args: string[], usage: string, config: Config) {
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
  if (sub !== 'create-user' && sub !== 'make-admin' && sub !== 'reset-password')
    throw new Error(`Unknown admin command "${sub ?? ''}"\n\n${usage}`);
  if (!values.email) throw new Error('--email is required');
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
    } else {
      const user = await services.accounts.findByEmail(values.email);
      if (!user) throw notFound(`No user with email ${values.email}`);
      const result = await services.users.adminResetPassword(actor, user.id, values.password);
      console.log(
        'temporaryPassword' in result
          ? `New password for ${values.email}: ${result.temporaryPassword}`
          : `Password of ${values.email} changed`,
      );
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
export async function jobs(args: string[], usage: string, config: Config) {
  const { positionals, values } = parseArgs({ args, allowPositionals: true, options: { limit: { type: 'string' } } });
  const [sub, ...ids] = positionals;
  if (sub !== 'failed' && sub !== 'retry') throw new Error(`Unknown jobs command "${sub ?? ''}"\n\n${usage}`);
  const limit = values.limit === undefined ? 100 : Number(values.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100_000) throw new Error('--limit must be a whole number from 1 to 100000');
  const bad = ids.find((id) => !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id));
  if (bad) throw new Error(`"${bad}" is not a chunk id (a UUID)`);
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
export async function models(args: string[]) {
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
