import { Type } from 'typebox';
import type { Actor } from '../../core/actor.ts';
import { badRequest } from '../../core/errors.ts';
import { access, defineRoute, type AccessVariant } from '../../core/permissions.ts';
import { JsonObject, Uuid } from '../../core/schemas.ts';
import { LOCK_ALIASES, SETTINGS, type Level, type SettingDef } from './registry.ts';
import type { Scope, SettingsService, SettingsWrite } from './service.ts';
import { EffectiveSettings, PlatformSettings, SettingDefinitions } from './schemas.ts';

const AGGREGATION_KEYS: Record<string, string> = {
  enabled: 'aggregation_enabled',
  count: 'aggregation_count',
  windowMinutes: 'aggregation_window_minutes',
  confidenceHigh: 'aggregation_confidence_high',
  retentionHours: 'aggregation_retention_hours',
};

/** Flat bodies of the platform and team endpoints → the writer's {values, mayOverride}. */
export function flatToWrite(level: Level, body: Record<string, unknown>): SettingsWrite {
  const values: Record<string, unknown> = {};
  const mayOverride: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(body)) {
    const alias = LOCK_ALIASES[key];
    if (alias && alias.level === level) mayOverride[alias.key] = value;
    else if (key === 'aggregation' && level === 'team' && value && typeof value === 'object' && !Array.isArray(value)) {
      for (const [k, v] of Object.entries(value)) values[AGGREGATION_KEYS[k] ?? `aggregation.${k}`] = v;
    } else values[key] = value;
  }
  return { values, mayOverride };
}

const Selector = Type.Object(
  {
    satelliteId: Type.Optional(Uuid),
    tenantId: Type.Optional(Uuid),
    level: Type.Optional(Type.Union([Type.Literal('hub'), Type.Literal('account')])),
  },
  { additionalProperties: false },
);

const readVariants: AccessVariant[] = [
  { when: { query: 'level', equals: 'hub' }, access: access.hubAdmin },
  { when: { query: 'level', equals: 'account' }, access: access.session },
  { when: { query: 'satelliteId' }, access: access.role('viewer'), team: { resource: 'satellite', query: 'satelliteId' } },
  { when: { query: 'tenantId' }, access: access.role('viewer'), team: { in: 'query', key: 'tenantId' } },
];

const writeVariants: AccessVariant[] = [
  { when: { query: 'level', equals: 'hub' }, access: access.hubAdmin },
  { when: { query: 'level', equals: 'account' }, access: access.session },
  { when: { query: 'satelliteId' }, access: access.device, team: { resource: 'satellite', query: 'satelliteId' } },
  { when: { query: 'tenantId' }, access: access.role('admin'), team: { in: 'query', key: 'tenantId' } },
];

function scopeOf(actor: Actor, q: { satelliteId?: string; tenantId?: string; level?: 'hub' | 'account' }): Scope {
  if (q.level === 'hub') return { level: 'hub' };
  if (q.level === 'account') return { level: 'account', userId: actor.userId! };
  // The satelliteId and tenantId variants name a team, so the guard has set teamId for them.
  const team = actor.teamId;
  if (q.satelliteId && team) return { level: 'satellite', tenantId: team, satelliteId: q.satelliteId };
  if (team) return { level: 'team', tenantId: team };
  throw badRequest('Choose one scope: satelliteId, tenantId, level=hub or level=account', 'SCOPE_REQUIRED');
}

/** One registry entry as the dashboard's editors read it; the write rules stay on the server. */
function definitionView(d: SettingDef) {
  const { key, type, levels, description, unit } = d;
  return {
    key,
    type,
    levels: [...levels],
    default: d.default,
    description,
    ...(unit ? { unit } : {}),
    ...(d.type === 'integer' || d.type === 'number' ? { min: d.min, max: d.max } : {}),
    ...(d.type === 'enum' || d.type === 'enumList' ? { options: [...d.options] } : {}),
    ...(d.type === 'enumList' || d.type === 'schedule' || d.type === 'speciesList' ? { maxItems: d.maxItems } : {}),
    ...(d.type === 'text' ? { maxLength: d.maxLength } : {}),
    ...(d.type === 'releases' ? { streams: [...d.streams] } : {}),
    ...(d.type === 'urlTemplate' ? { placeholders: [...d.placeholders] } : {}),
  };
}
const DEFINITIONS = { settings: SETTINGS.map(definitionView) };

export function settingsRoutes(settings: SettingsService) {
  return [
    defineRoute({
      method: 'GET',
      url: '/settings/definitions',
      action: 'settings.definitions',
      access: access.authenticated,
      audit: [],
      summary: 'Every setting of the registry with its type, levels, range or options, unit and description',
      tags: ['settings'],
      schema: { response: { 200: SettingDefinitions } },
      handler: async () => DEFINITIONS,
    }),

    defineRoute({
      method: 'GET',
      url: '/settings/effective',
      action: 'settings.effective.read',
      access: access.authenticated,
      variants: readVariants,
      audit: [],
      summary: 'Settings in force at one scope (?satelliteId, ?tenantId, ?level=hub or ?level=account), in registry order',
      tags: ['settings'],
      schema: { querystring: Selector, response: { 200: EffectiveSettings } },
      handler: ({ actor, query }) => settings.effective(scopeOf(actor, query)),
    }),

    defineRoute({
      method: 'PATCH',
      url: '/settings/effective',
      action: 'settings.effective.update',
      access: access.authenticated,
      variants: writeVariants,
      audit: [
        'admin.platform_settings_updated',
        'admin.tenant_settings_updated',
        'admin.satellite_config_changed',
        'user.preferences_updated',
      ],
      summary: 'Sets values (null follows the level above) and locks at one scope; all or nothing',
      tags: ['settings'],
      schema: {
        querystring: Selector,
        body: Type.Object(
          {
            values: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
            mayOverride: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
          },
          { additionalProperties: false },
        ),
        response: { 200: EffectiveSettings },
      },
      handler: async ({ actor, query, body }) => {
        const scope = scopeOf(actor, query);
        await settings.write(actor, scope, body);
        return settings.effective(scope);
      },
    }),

    defineRoute({
      method: 'GET',
      url: '/settings/tenant',
      action: 'settings.tenant.read',
      access: access.role('viewer'),
      team: { in: 'query', key: 'tenantId' },
      audit: [],
      summary: "The team's settings in force (team fields, satellite defaults, aggregation rule)",
      tags: ['settings'],
      schema: { querystring: Type.Object({ tenantId: Type.Optional(Uuid) }), response: { 200: JsonObject } },
      handler: ({ actor }) => settings.teamSettings(actor.teamId),
    }),

    defineRoute({
      method: 'PUT',
      url: '/settings/tenant',
      action: 'settings.tenant.update',
      access: access.role('admin'),
      team: { in: 'query', key: 'tenantId' },
      audit: ['admin.tenant_settings_updated'],
      summary: 'Changes only the fields sent (null follows the hub); device_inference_devices_may_override is accepted',
      tags: ['settings'],
      schema: {
        querystring: Type.Object({ tenantId: Type.Optional(Uuid) }),
        body: Type.Record(Type.String(), Type.Unknown()),
        response: { 200: JsonObject },
      },
      handler: async ({ actor, body }) => {
        await settings.write(actor, { level: 'team', tenantId: actor.teamId }, flatToWrite('team', body as Record<string, unknown>));
        return settings.teamSettings(actor.teamId);
      },
    }),

    defineRoute({
      method: 'GET',
      url: '/settings/platform',
      action: 'settings.platform.read',
      access: access.hubAdmin,
      audit: [],
      summary: 'Hub settings in force',
      tags: ['settings'],
      schema: { response: { 200: PlatformSettings } },
      handler: async () => ({ settings: await settings.hubSettings() }),
    }),

    defineRoute({
      method: 'PUT',
      url: '/settings/platform',
      action: 'settings.platform.update',
      access: access.hubAdmin,
      audit: ['admin.platform_settings_updated'],
      summary: 'Changes the hub settings sent; reaches every satellite of every team; device_inference_teams_may_override is accepted',
      tags: ['settings'],
      schema: { body: Type.Record(Type.String(), Type.Unknown()), response: { 200: PlatformSettings } },
      handler: async ({ actor, body }) => {
        await settings.write(actor, { level: 'hub' }, flatToWrite('hub', body as Record<string, unknown>));
        return { settings: await settings.hubSettings() };
      },
    }),
  ];
}
