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

/** GET /settings/definitions: the registry as a form needs it (type, range, options, unit, description). */
export const SettingDefinitionView = Open({
  key: Type.String(),
  type: Type.String(),
  levels: Type.Array(Type.String()),
  default: Type.Unknown(),
  description: Type.String(),
  unit: Type.Optional(Type.String()),
  min: Type.Optional(Type.Number()),
  max: Type.Optional(Type.Number()),
  options: Type.Optional(Type.Array(Type.String())),
  maxItems: Type.Optional(Type.Integer()),
  maxLength: Type.Optional(Type.Integer()),
  placeholders: Type.Optional(Type.Array(Type.String())),
  streams: Type.Optional(Type.Array(Type.String())),
});
export const SettingDefinitions = Open({ settings: Type.Array(SettingDefinitionView) });
