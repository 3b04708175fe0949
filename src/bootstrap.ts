import type { Config } from './config.ts';
import { randomHex } from './core/crypto.ts';
import { systemActor } from './core/actor.ts';
import type { Services } from './services.ts';

export type BootstrapResult =
  { kind: 'existing' } | { kind: 'from_env'; email: string } | { kind: 'generated'; email: string; password: string };

/** The account exists: found before inserting, or inserted by another process in the meantime (unique index). */
const emailTaken = (err: unknown) => ['EMAIL_TAKEN', '23505'].includes((err as { code?: string })?.code ?? '');

/**
 * A hub always has a hub admin. With CHORUS_ADMIN_EMAIL/PASSWORD the first start creates
 * (or promotes) that account; without them it creates one and the caller prints the
 * one-time credentials.
 *
 * Safe when several processes start at once on an empty database (issue 21): whoever loses the
 * race to insert the account finds it there (EMAIL_TAKEN, or the unique index's 23505 when both
 * looked before either inserted) and promotes it, or, for the generated account, reports it as
 * existing (the process that created it prints the credentials).
 */
export async function ensureFirstAdmin(config: Config, services: Services): Promise<BootstrapResult> {
  if ((await services.users.countHubAdmins()) > 0) return { kind: 'existing' };
  const actor = systemActor();
  if (config.admin.email && config.admin.password) {
    try {
      await services.users.createUser(
        { email: config.admin.email, name: 'Hub admin', password: config.admin.password, isAdmin: true },
        actor,
      );
    } catch (err) {
      if (!emailTaken(err)) throw err;
      await services.users.setHubAdmin(config.admin.email, true, actor);
    }
    return { kind: 'from_env', email: config.admin.email };
  }
  const email = 'admin@chorus.local';
  const password = randomHex(10);
  try {
    await services.users.createUser({ email, name: 'Hub admin', password, isAdmin: true }, actor);
  } catch (err) {
    if (emailTaken(err) && (await services.users.countHubAdmins()) > 0) return { kind: 'existing' };
    throw err;
  }
  return { kind: 'generated', email, password };
}
