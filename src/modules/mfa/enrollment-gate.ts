/**
 * The hub switch `require_admin_mfa` (issue 33 item 8): while it is on, a hub admin without a
 * second factor reaches only their own account (where the second factor is enrolled) and
 * sign-out; everything else answers 403 MFA_ENROLLMENT_REQUIRED. Hub admins hold every team's
 * data, so a stolen password alone should not be enough. Keys are not people and pass; the
 * internal key is nobody in particular.
 */
import type { Auth } from '../../core/actor.ts';
import { forbidden } from '../../core/errors.ts';
import type { Permission } from '../../core/permissions.ts';
import type { SettingsService } from '../settings/service.ts';

/** What an unenrolled hub admin may still do: the own account (profile, password, MFA enrolment) and signing out. */
export const reachableWhileUnenrolled = (action: string): boolean => action.startsWith('account.') || action === 'auth.logout';

export function createEnrollmentGate(settings: Pick<SettingsService, 'hubSetting'>) {
  return async function enrollmentGate(auth: Auth, perm: Pick<Permission, 'action'>): Promise<void> {
    if (auth.kind !== 'session' && auth.kind !== 'jwt') return;
    // Only unenrolled hub admins read the switch: everyone else costs nothing.
    if (!auth.isPlatformAdmin || auth.person.mfaEnrolledAt || reachableWhileUnenrolled(perm.action)) return;
    if (!(await settings.hubSetting('require_admin_mfa'))) return;
    throw forbidden('This hub requires hub admins to enrol a second factor first (Account page)', 'MFA_ENROLLMENT_REQUIRED');
  };
}
