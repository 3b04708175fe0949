import { Type } from 'typebox';
import { Nullable, Open, Uuid } from '../../core/schemas.ts';

/** GET /satellites/storage and GET /system/storage (issue 23 "Storage in sight"). */

/** Why the hub's free space is unknown: `object_storage_s3` (a bucket has no free space to ask about), `unavailable` (the file system did not answer). */
const FreeUnknown = Nullable(Type.Union([Type.Literal('object_storage_s3'), Type.Literal('unavailable')]));

/** Where the hub writes audio: free space, the days it lasts at the hub's growth, and the warning of storage_warning_days. */
export const HubDisk = Open({
  storage: Type.Union([Type.Literal('files'), Type.Literal('s3')]),
  freeBytes: Nullable(Type.Integer()),
  totalBytes: Nullable(Type.Integer()),
  freeUnknownReason: FreeUnknown,
  /** Net audio bytes per day over the hub's last 7 days (all teams: they share the disk); null before minHistoryDays of data. */
  growthBytesPerDay: Nullable(Type.Integer()),
  /** freeBytes ÷ growthBytesPerDay; null when either is unknown or the hub is not growing. */
  daysRemaining: Nullable(Type.Number()),
  warningDays: Type.Integer(),
  warning: Type.Boolean(),
  /** With the warning: the audio_retention_days that keep the audio within the disk at the current rate. */
  suggestedRetentionDays: Nullable(Type.Integer()),
});

export const SatelliteStorage = Open({
  id: Uuid,
  name: Type.String(),
  archived: Type.Boolean(),
  storedBytes: Type.Integer(),
  chunks: Type.Integer(),
  growthBytesPerDay: Nullable(Type.Integer()),
  /** The satellite's own free space from its latest telemetry that reported it. */
  freeBytes: Nullable(Type.Integer()),
  freeReportedAt: Nullable(Type.String({ format: 'date-time' })),
  lowFreeSpace: Type.Boolean(),
});

export const TeamStorage = Open({
  tenantId: Uuid,
  totalBytes: Type.Integer(),
  chunks: Type.Integer(),
  growthBytesPerDay: Nullable(Type.Integer()),
  /** The growth window in days (7) and the team setting satellite_storage_warning_mb in bytes. */
  windowDays: Type.Integer(),
  /** Days of data before any growth rate is given (null before). */
  minHistoryDays: Type.Integer(),
  satelliteWarningBytes: Type.Integer(),
  satellites: Type.Array(SatelliteStorage),
  hub: HubDisk,
});

export const HubStorage = Open({
  totalBytes: Type.Integer(),
  chunks: Type.Integer(),
  windowDays: Type.Integer(),
  minHistoryDays: Type.Integer(),
  disk: HubDisk,
  teams: Type.Array(
    Open({
      tenantId: Uuid,
      name: Type.String(),
      storedBytes: Type.Integer(),
      chunks: Type.Integer(),
      satellites: Type.Integer(),
      growthBytesPerDay: Nullable(Type.Integer()),
    }),
  ),
});
