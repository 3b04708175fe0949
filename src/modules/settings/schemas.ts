import { Type } from 'typebox';
import { JsonObject, Nullable, Open } from '../../core/schemas.ts';

/**
 * Settings as the service shows them (resolve.ts SettingEntry): response schemas, so OpenAPI
 * documents them for the dashboard's generated client. Values are unknown-typed: each setting
 * has its own type (registry.ts).
 */

export const SettingEntryView = Open({
  key: Type.String(),
  value: Type.Optional(Type.Unknown()),
  source: Type.String(),
  inherited: Open({ value: Type.Optional(Type.Unknown()), from: Type.String() }),
  lockedBy: Nullable(Type.String()),
  own: Type.Optional(Type.Unknown()),
  mayOverride: Type.Optional(Type.Boolean()),
});

export const EffectiveSettings = Open({
  level: Type.String(),
  tenantId: Type.Optional(Type.String()),
  satelliteId: Type.Optional(Type.String()),
  settings: Type.Array(SettingEntryView),
});

export const PlatformSettings = Open({ settings: JsonObject });
