import { Type } from 'typebox';
import { JsonObject, Open, Nullable } from '../../core/schemas.ts';

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

/** A registration: the MQTT password and the API key are shown this once. */
export const Registration = Open({
  id: Type.String(),
  mqtt: Open({ username: Type.String(), password: Type.String(), brokerUrl: Type.String(), wsUrl: Type.Optional(Nullable(Type.String())) }),
  apiKey: Type.String(),
});

export const RotatedApiKey = Open({ apiKey: Type.String() });

export const ProfilePushed = Open({ pushed: Type.Boolean() });

export const UpdateRequested = Open({ targetVersion: Type.String(), update_status: Type.String() });

export const LogsRequested = Open({ requestId: Type.String() });

export const SatelliteLogs = Open({
  logs: Nullable(
    Open({
      requestId: Type.String(),
      requestedAt: Nullable(Type.String()),
      receivedAt: Nullable(Type.String()),
      lines: Nullable(Type.Array(Type.String())),
    }),
  ),
});

/** The effective config (settings resolved for the satellite) beside its own overrides. */
export const SatelliteConfig = Open({
  configLocked: Type.Boolean(),
  recordingProfile: Type.Unknown(),
  effective: JsonObject,
  overrides: JsonObject,
});

export const TelemetrySample = Open({
  at: Nullable(Type.String()),
  batteryLevel: Nullable(Type.Number()),
  storageFreeBytes: Nullable(Type.Number()),
  cpuTemp: Nullable(Type.Number()),
  networkLatencyMs: Nullable(Type.Number()),
  packetLossPct: Nullable(Type.Number()),
  uptimeSeconds: Nullable(Type.Number()),
});

export const Telemetry = Open({ telemetry: Type.Array(TelemetrySample) });

export const DeletionPreview = Open({
  detections: Type.Number(),
  promoted: Type.Number(),
  chunks: Type.Number(),
  audioBytes: Type.Number(),
  alerts: Type.Number(),
  fieldNotes: Type.Number(),
});

/** resolveSchedule (src/protocol/schedule.ts): the day's windows with their times, and the sun at the position. */
export const Schedule = Open({
  date: Type.String(),
  profile: Type.String(),
  latitude: Nullable(Type.Number()),
  longitude: Nullable(Type.Number()),
  sun: Nullable(
    Open({
      dawn: Nullable(Type.String()),
      sunrise: Nullable(Type.String()),
      solarNoon: Nullable(Type.String()),
      sunset: Nullable(Type.String()),
      dusk: Nullable(Type.String()),
    }),
  ),
  windows: Type.Array(
    Open({
      start: Type.Union([Type.String(), Type.Number()]),
      end: Type.Union([Type.String(), Type.Number()]),
      reference: Type.String(),
      startsAt: Nullable(Type.String()),
      endsAt: Nullable(Type.String()),
    }),
  ),
});
