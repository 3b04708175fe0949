import { Type, type Static } from 'typebox';
import { Nullable, Open } from '../../core/schemas.ts';
import type { UserRow, UserTeam } from './repo.ts';

export const Email = Type.String({ format: 'email', minLength: 3, maxLength: 254 });
export const Password = Type.String({ minLength: 1, maxLength: 256 });
export const PersonName = Type.String({ minLength: 1, maxLength: 120 });

/** A person as every response shows them: sign-in, registration, /auth/me and the admin list. */
export const UserFields = {
  id: Type.String(),
  email: Type.String(),
  name: Type.String(),
  isAdmin: Type.Boolean(),
  status: Type.Union([Type.Literal('active'), Type.Literal('blocked')]),
  createdAt: Type.String(),
  lastLoginAt: Nullable(Type.String()),
};
export const UserView = Type.Object(UserFields);
export type UserView = Static<typeof UserView>;

/** A completed sign-in: the person, and the JWT when ?returnToken=true asked for it. */
export const SignedIn = Open({ user: UserView, token: Type.Optional(Type.String()) });

/** Password accepted but a second factor is due: the token to complete it with. */
export const MfaChallenge = Open({ mfaRequired: Type.Boolean(), mfaToken: Type.String(), hasPasskeys: Type.Boolean() });

/** What the admin user list adds to a person (its teams come beside them). */
export const AdminUserFields = {
  lastLoginIp: Nullable(Type.String()),
  failedLoginAttempts: Type.Integer(),
  lockedUntil: Nullable(Type.String()),
};

const iso = (d: Date | null) => (d ? new Date(d).toISOString() : null);

export const presentUser = (u: Pick<UserRow, 'id' | 'email' | 'name' | 'isAdmin' | 'status' | 'createdAt' | 'lastLoginAt'>): UserView => ({
  id: u.id,
  email: u.email,
  name: u.name,
  isAdmin: u.isAdmin,
  status: u.status,
  createdAt: iso(u.createdAt)!,
  lastLoginAt: iso(u.lastLoginAt),
});

export const presentAdminUser = (u: UserRow, teams: UserTeam[]) => ({
  ...presentUser(u),
  lastLoginIp: u.lastLoginIp,
  failedLoginAttempts: u.failedLoginAttempts,
  lockedUntil: iso(u.lockedUntil),
  tenants: teams.map((t) => ({ id: t.id, name: t.name, slug: t.slug, role: t.role })),
});
