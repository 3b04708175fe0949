/** Response bodies as the hub sends them (hand-written where the route has no response schema yet). */
import type { paths } from './schema';
export type Role = 'viewer' | 'member' | 'admin' | 'owner';

export interface User {
  id: string;
  email: string;
  name: string;
  isAdmin: boolean;
  status: 'active' | 'blocked';
  createdAt: string;
  lastLoginAt: string | null;
}

export interface TeamRef {
  id: string;
  name: string;
  slug: string;
  role: Role;
}

export interface Preferences {
  primaryLanguage: string;
  secondaryLanguages: string[];
  dateFormatPrimary: string;
  dateFormatSecondary: string;
  timeFormat: '24h' | '12h' | string;
  startOfWeek: string;
  paperSize: string;
  showVoting: boolean;
}

export interface Me {
  user: User;
  tenants: TeamRef[];
  preferences: Preferences;
  mfa: {
    enabled: boolean;
    enrolledAt: string | null;
    backupCodesRemaining: number;
    enrollmentRequired: boolean;
    available: boolean;
    passkeys: Array<{ id: string; name: string; createdAt: string; lastUsedAt: string | null }>;
    rememberedDevices: Array<{
      id: string;
      label?: string | null;
      createdAt?: string;
      lastUsedAt?: string | null;
      userAgent?: string | null;
    }>;
  };
}

export type LoginReply = { user: User; token?: string } | { mfaRequired: true; mfaToken: string; hasPasskeys: boolean };

export type VerificationStatus = 'pending_review' | 'confirmed' | 'rejected' | 'unverified';
export type Vote = 'confirm' | 'reject' | 'unsure';

export interface Detection {
  id: string;
  tenantId: string;
  satelliteId: string;
  satelliteName: string | null;
  audioChunkId: string;
  speciesCode: string;
  commonName: string;
  scientificName: string;
  category: string;
  confidence: number;
  calibrated_confidence: number;
  verificationStatus: VerificationStatus;
  tentative: boolean;
  promoted: boolean;
  isFirstOfDay: boolean;
  isFirstOfSeason: boolean;
  isRare: boolean;
  rareReason: string | null;
  detectedAt: string;
  createdAt: string;
}

export interface DetectionList {
  detections: Detection[];
  total: number | null;
  aggregation: Record<string, unknown>;
}

export interface Comment {
  id: string;
  text: string;
  userId?: string;
  userName?: string | null;
  createdAt: string;
}

export interface Satellite {
  id: string;
  tenantId: string;
  name: string;
  deviceId: string | null;
  registered_by: string | null;
  registered_by_name: string | null;
  registered_by_me: boolean;
  can_manage: boolean;
  configLocked: boolean;
  archived: boolean;
  online: boolean;
  lastSeenAt: string | null;
  version: string | null;
  stream: string | null;
  state: string | null;
  update_status: string | null;
  targetVersion: string | null;
  uptimeSeconds: number | null;
  noiseFloorRms: number | null;
  filterStats: Record<string, number> | null;
  outboxStats: Record<string, number> | null;
  createdAt: string;
}

export interface Registration {
  id: string;
  mqtt: { username: string; password: string; brokerUrl?: string; wsUrl?: string | null };
  apiKey: string;
}

export interface SettingEntry {
  key: string;
  value: unknown;
  source: 'hub' | 'team' | 'satellite' | 'default' | 'account';
  inherited: { value: unknown; from: string };
  lockedBy: 'hub' | 'team' | null;
  own: unknown;
  mayOverride?: boolean;
}

export interface EffectiveSettings {
  level: string;
  tenantId?: string;
  satelliteId?: string;
  settings: SettingEntry[];
}

export interface Member {
  id: string;
  userId: string;
  name: string;
  email: string;
  role: Role;
  joinedAt: string;
}

export interface Invite {
  id: string;
  tenantId: string;
  role: Role;
  email: string | null;
  createdByName: string | null;
  createdAt: string;
  expiresAt: string;
}

export interface ApiKey {
  id: string;
  name: string;
  role: Role;
  prefix: string;
  createdByName: string | null;
  createdAt: string;
  lastUsedAt: string | null;
  expiresAt: string | null;
}

export interface AdminUser extends User {
  lastLoginIp: string | null;
  failedLoginAttempts: number;
  lockedUntil: string | null;
  tenants: TeamRef[];
}

export interface AuditEntry {
  id: number;
  at: string;
  action: string;
  actorEmail: string | null;
  ip: string | null;
  tenantId: string | null;
  targetType: string | null;
  targetId: string | null;
  details: Record<string, unknown>;
}

export interface DeletionPreview {
  detections: number;
  promoted: number;
  chunks: number;
  audioBytes: number;
  alerts: number;
  fieldNotes: number;
}

export const ROLE_RANK: Record<Role, number> = { viewer: 0, member: 1, admin: 2, owner: 3 };
export const atLeast = (role: Role | undefined, min: Role) => role !== undefined && ROLE_RANK[role] >= ROLE_RANK[min];

/** The JSON body of a route's 200 answer, as the generated OpenAPI types describe it (routes with a response schema). */
type Ok<Op> = Op extends { responses: { 200: { content: { 'application/json': infer B } } } } ? B : never;

/** GET /api/admin/models: one model (presentModel in src/modules/models/service.ts). */
export type ModelInfo = Ok<paths['/api/admin/models']['get']>['models'][number];

/** One output of a model and the species it maps into (GET /api/admin/models/:id/labels). */
export type ModelLabel = Ok<paths['/api/admin/models/{id}/labels/{index}']['put']>;
