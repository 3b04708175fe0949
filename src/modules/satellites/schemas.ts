import { Type } from 'typebox';
import { Open, Nullable } from '../../core/schemas.ts';

/**
 * Satellites as present() (service.ts) shows them, and their config history: response schemas,
 * so OpenAPI documents them for the dashboard's generated client. Objects stay open
 * (additionalProperties) so a field added to the service still reaches the client; reported
 * JSON (stats, config, changes) is unknown-typed and passes through as stored.
 */

export const SatelliteView = Open({
  id: Type.String(),
  tenantId: Type.String(),
  name: Type.String(),
  deviceId: Nullable(Type.String()),
  registered_by: Nullable(Type.String()),
  registered_by_name: Nullable(Type.String()),
  registered_by_me: Type.Boolean(),
  can_manage: Type.Boolean(),
  configLocked: Type.Boolean(),
  archived: Type.Boolean(),
  online: Type.Boolean(),
  lastSeenAt: Nullable(Type.String()),
  version: Nullable(Type.String()),
  stream: Nullable(Type.String()),
  state: Nullable(Type.String()),
  update_status: Nullable(Type.String()),
  targetVersion: Nullable(Type.String()),
  latitude: Nullable(Type.Number()),
  longitude: Nullable(Type.Number()),
  uptimeSeconds: Nullable(Type.Number()),
  noiseFloorRms: Nullable(Type.Number()),
  filterStats: Type.Unknown(),
  outboxStats: Type.Unknown(),
  createdAt: Nullable(Type.String()),
});

export const SatelliteList = Open({ satellites: Type.Array(SatelliteView), total: Type.Integer() });

export const ConfigHistoryEntry = Open({
  id: Type.String(),
  changedAt: Nullable(Type.String()),
  source: Type.String(),
  changedBy: Nullable(Type.String()),
  changes: Type.Unknown(),
  config: Type.Unknown(),
});

export const ConfigHistory = Open({ history: Type.Array(ConfigHistoryEntry) });
