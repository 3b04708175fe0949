import { type Auth, type Role, isPerson, roleAtLeast } from './actor.ts';

/** What the device rule needs to know about one satellite. */
export interface ManagedDevice {
  id: string;
  registeredBy: string | null;
  devicePolicy: string;
}

/**
 * The device rule (spec §5), the one place it is written: hub admins and admin+ of the
 * device's team manage it; so does the member who registered it while the team's
 * device_policy is members. A satellite's own key manages only its own satellite, and only
 * on the routes declared for satellite keys (`satelliteKeyRoute`). The guard enforces it;
 * satellite responses carry it as `can_manage`.
 *
 * `role` is the caller's role in the device's team (null when none).
 */
export function canManageDevice(auth: Auth, role: Role | null, device: ManagedDevice, opts: { satelliteKeyRoute: boolean }): boolean {
  if (auth.kind === 'api_key' && auth.satelliteId) return opts.satelliteKeyRoute && auth.satelliteId === device.id;
  if (auth.isPlatformAdmin || roleAtLeast(role, 'admin')) return true;
  return isPerson(auth) && roleAtLeast(role, 'member') && device.devicePolicy === 'members' && device.registeredBy === auth.userId;
}
