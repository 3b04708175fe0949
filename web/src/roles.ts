/** Team roles in rank order: what a page may offer depends on the caller's role in the active team. */
import type { Role } from './api/hooks/account';

export const ROLE_RANK: Record<Role, number> = { viewer: 0, member: 1, admin: 2, owner: 3 };
export const atLeast = (role: Role | undefined, min: Role) => role !== undefined && ROLE_RANK[role] >= ROLE_RANK[min];
