import { Type, type Static } from 'typebox';
import type { UserRow, UserTeam } from './repo.ts';

export const Email = Type.String({ format: 'email', minLength: 3, maxLength: 254 });
export const Password = Type.String({ minLength: 1, maxLength: 256 });
export const PersonName = Type.String({ minLength: 1, maxLength: 120 });

export const UserView = Type.Object({
  id: Type.String(),
  email: Type.String(),
  name: Type.String(),
  isAdmin: Type.Boolean(),
  status: Type.Union([Type.Literal('active'), Type.Literal('blocked')]),
  createdAt: Type.String(),
  lastLoginAt: Type.Union([Type.String(), Type.Null()]),
});
export type UserView = Static<typeof UserView>;

export const TeamRef = Type.Object({
  id: Type.String(),
  name: Type.String(),
  slug: Type.String(),
  role: Type.String(),
});

export const AdminUserView = Type.Object({
  id: Type.String(),
  email: Type.String(),
  name: Type.String(),
  isAdmin: Type.Boolean(),
  status: Type.Union([Type.Literal('active'), Type.Literal('blocked')]),
  createdAt: Type.String(),
  lastLoginAt: Type.Union([Type.String(), Type.Null()]),
  lastLoginIp: Type.Union([Type.String(), Type.Null()]),
  failedLoginAttempts: Type.Integer(),
  lockedUntil: Type.Union([Type.String(), Type.Null()]),
  tenants: Type.Array(TeamRef),
});
export type AdminUserView = Static<typeof AdminUserView>;

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

export const presentAdminUser = (u: UserRow, teams: UserTeam[]): AdminUserView => ({
  ...presentUser(u),
  lastLoginIp: u.lastLoginIp,
  failedLoginAttempts: u.failedLoginAttempts,
  lockedUntil: iso(u.lockedUntil),
  tenants: teams.map((t) => ({ id: t.id, name: t.name, slug: t.slug, role: t.role })),
});
