import { Type } from 'typebox';
import { Open, Nullable } from '../../core/schemas.ts';
import { MembershipView } from '../teams/schemas.ts';
import { PasskeyView, RememberedDeviceView } from '../mfa/schemas.ts';
import { UserFields, UserView } from '../users/schemas.ts';
import { PendingEmailChange } from '../email-change/schemas.ts';

/**
 * GET /auth/me as users.me returns it: the response schema documents it for the dashboard's
 * generated client. Objects stay open (additionalProperties) so a field added to the service
 * still reaches the client; the credential members of a key are unknown-typed (null or absent).
 */

export const MeUser = Open(UserFields);

export const MeCredential = Open({
  kind: Type.String(),
  apiKeyId: Type.Optional(Type.Unknown()),
  satelliteId: Type.Optional(Type.Unknown()),
  tenantId: Type.Optional(Type.Unknown()),
  role: Type.Optional(Type.Unknown()),
});

export const MeMfa = Open({
  enabled: Type.Boolean(),
  enrolledAt: Nullable(Type.String()),
  backupCodesRemaining: Type.Integer(),
  enrollmentRequired: Type.Boolean(),
  available: Type.Boolean(),
  passkeys: Type.Array(PasskeyView),
  rememberedDevices: Type.Array(RememberedDeviceView),
});

/** Each preference resolved (own value, else the hub's, else the default): every key is present. */
export const PreferencesView = Open({
  primaryLanguage: Type.String(),
  secondaryLanguages: Type.Array(Type.String()),
  dateFormatPrimary: Type.String(),
  dateFormatSecondary: Type.String(),
  timeFormat: Type.String(),
  startOfWeek: Type.String(),
  paperSize: Type.String(),
  showVoting: Type.Boolean(),
});

export const PreferencesReply = Open({ preferences: PreferencesView });

/** The user as it is (the current email) and the address change waiting for its link, if any. */
export const ProfileReply = Open({ user: UserView, emailChange: PendingEmailChange });

export const MeView = Open({
  user: Nullable(MeUser),
  credential: Type.Optional(MeCredential),
  tenants: Type.Array(MembershipView),
  preferences: Nullable(PreferencesView),
  mfa: MeMfa,
  /** An address change waiting for the link mailed to the new address (issue 33 item 3), else null. */
  emailChange: PendingEmailChange,
});
