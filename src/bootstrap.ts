import type { Config } from './config.ts';
import { randomHex } from './core/crypto.ts';
import { systemActor } from './core/actor.ts';
import type { Services } from './app.ts';

export type BootstrapResult =
  { kind: 'existing' } | { kind: 'from_env'; email: string } | { kind: 'generated'; email: string; password: string };

/**
 * A hub always has a hub admin. With CHORUS_ADMIN_EMAIL/PASSWORD the first start creates
 * (or promotes) that account; without them it creates one and the caller prints the
 * one-time credentials.
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
      if ((err as { code?: string }).code !== 'EMAIL_TAKEN') throw err;
      await services.users.setHubAdmin(config.admin.email, true, actor);
    }
    return { kind: 'from_env', email: config.admin.email };
  }
  const email = 'admin@chorus.local';
  const password = randomHex(10);
  await services.users.createUser({ email, name: 'Hub admin', password, isAdmin: true }, actor);
  return { kind: 'generated', email, password };
}
