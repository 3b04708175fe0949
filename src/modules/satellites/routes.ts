import { Type } from 'typebox';
import type { Clock } from '../../core/clock.ts';
import { readableTeams } from '../../core/actor.ts';
import { access, defineRoute } from '../../core/permissions.ts';
import { IdParams, NoContent, Nullable, Paging, Uuid } from '../../core/schemas.ts';
import type { SettingsService } from '../settings/service.ts';
import { type SettingKey, settingValue } from '../settings/values.ts';
import { resolveSchedule } from '../../protocol/schedule.ts';
import type { SatellitesService } from './service.ts';
import {
  ConfigHistory,
  DeletionPreview,
  LogsRequested,
  ProfilePushed,
  Registration,
  RotatedApiKey,
  SatelliteConfig,
  SatelliteList,
  SatelliteLogs,
  SatelliteView,
  Schedule,
  Telemetry,
  UpdateRequested,
} from './schemas.ts';

const ofSatellite = { resource: 'satellite', param: 'id' } as const;
const viewer = { access: access.role('viewer'), team: ofSatellite, tags: ['satellites'] };
const device = { access: access.device, team: ofSatellite, tags: ['satellites'] };

const Name = Type.String({ minLength: 1, maxLength: 100 });

export function satellitesRoutes(
  satellites: SatellitesService,
  settings: SettingsService,
  clock: Clock,
  latestOf: (stream: string) => Promise<string | null>,
) {
  return [
    defineRoute({
      method: 'GET',
      url: '/satellites',
      action: 'satellites.list',
      access: access.role('viewer'),
      team: { in: 'query', key: 'tenantId', optional: true },
      audit: [],
      summary: 'Satellites with ownership fields and online state; archived ones only with ?includeArchived=1',
      tags: ['satellites'],
      schema: {
        querystring: Type.Object(
          {
            tenantId: Type.Optional(Uuid),
            search: Type.Optional(Type.String({ maxLength: 100 })),
            includeArchived: Type.Optional(Type.Union([Type.Literal('1'), Type.Literal('true'), Type.Literal('0'), Type.Literal('false')])),
            registeredByMe: Type.Optional(Type.Boolean()),
            stream: Type.Optional(Type.String({ maxLength: 20 })),
            state: Type.Optional(
              Type.Union([Type.Literal('recording'), Type.Literal('paused'), Type.Literal('scheduled_off'), Type.Literal('error')]),
            ),
            sortBy: Type.Optional(Type.Union([Type.Literal('name'), Type.Literal('lastSeen'), Type.Literal('created')])),
            sortDir: Type.Optional(Type.Union([Type.Literal('asc'), Type.Literal('desc')])),
            ...Paging,
          },
          { additionalProperties: false },
        ),
        response: { 200: SatelliteList },
      },
      handler: ({ actor, query }) => {
        return satellites.list(actor, {
          tenantIds: readableTeams(actor),
          search: query.search,
          includeArchived: query.includeArchived === '1' || query.includeArchived === 'true',
          registeredBy: query.registeredByMe ? (actor.userId ?? undefined) : undefined,
          stream: query.stream,
          state: query.state,
          sortBy: query.sortBy ?? 'name',
          sortDir: query.sortDir ?? (query.sortBy === 'name' || !query.sortBy ? 'asc' : 'desc'),
          limit: query.limit ?? 50,
          offset: query.offset ?? 0,
        });
      },
    }),

    defineRoute({
      ...viewer,
      method: 'GET',
      url: '/satellites/:id',
      action: 'satellites.read',
      audit: [],
      summary: 'One satellite with ownership fields',
      schema: { params: IdParams, response: { 200: SatelliteView } },
      handler: ({ actor, params }) => satellites.get(actor, actor.teamId, params.id),
    }),

    defineRoute({
      method: 'POST',
      url: '/satellites',
      action: 'satellites.register',
      access: access.role('member'),
      team: { in: 'body', key: 'tenantId' },
      audit: [
        'device.satellite_registered',
        'device.satellite_reregistered',
        'device.satellite_replaced',
        'device.satellite_unarchived_by_heartbeat',
      ],
      summary:
        'Registers a device (201), re-registers by deviceId (200, rotates credentials) or replaces an entry; MQTT password and apiKey are shown once',
      tags: ['satellites'],
      schema: {
        body: Type.Object(
          {
            tenantId: Uuid,
            name: Name,
            deviceId: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
            replaceSatelliteId: Type.Optional(Uuid),
            latitude: Type.Optional(Type.Number({ minimum: -90, maximum: 90 })),
            longitude: Type.Optional(Type.Number({ minimum: -180, maximum: 180 })),
          },
          { additionalProperties: false },
        ),
        response: { 200: Registration, 201: Registration },
      },
      handler: async ({ actor, body, reply }) => {
        const { status, body: out } = await satellites.register(actor, body);
        reply.code(status);
        return out;
      },
    }),

    defineRoute({
      ...device,
      method: 'POST',
      url: '/satellites/:id/rotate-api-key',
      action: 'satellites.rotate_api_key',
      satelliteKey: true,
      audit: ['admin.satellite_api_key_rotated'],
      summary: 'New satellite API key; previous keys of that satellite expire',
      schema: { params: IdParams, response: { 200: RotatedApiKey } },
      handler: ({ actor, params }) => satellites.rotateApiKey(actor, actor.teamId, params.id),
    }),

    defineRoute({
      ...device,
      method: 'PATCH',
      url: '/satellites/:id',
      action: 'satellites.rename',
      satelliteKey: true,
      audit: ['admin.satellite_renamed'],
      summary: 'Renames',
      schema: { params: IdParams, body: Type.Object({ name: Name }, { additionalProperties: false }), response: { 200: SatelliteView } },
      handler: ({ actor, params, body }) => satellites.rename(actor, actor.teamId, params.id, body.name.trim()),
    }),

    defineRoute({
      ...device,
      method: 'PUT',
      url: '/satellites/:id/position',
      action: 'satellites.set_position',
      satelliteKey: true,
      audit: ['admin.satellite_position_changed'],
      summary: "Sets the satellite's position (both null clears it); a later registration with --latitude/--longitude replaces it",
      schema: {
        params: IdParams,
        body: Type.Object(
          {
            latitude: Nullable(Type.Number({ minimum: -90, maximum: 90 })),
            longitude: Nullable(Type.Number({ minimum: -180, maximum: 180 })),
          },
          { additionalProperties: false },
        ),
        response: { 200: SatelliteView },
      },
      handler: ({ actor, params, body }) => satellites.setPosition(actor, actor.teamId, params.id, body),
    }),

    defineRoute({
      ...device,
      method: 'POST',
      url: '/satellites/:id/profile',
      action: 'satellites.push_profile',
      satelliteKey: true,
      audit: ['admin.satellite_profile_changed'],
      summary: 'Pushes the recording profile (the whole effective config) over the broker',
      schema: { params: IdParams, response: { 200: ProfilePushed } },
      handler: ({ actor, params }) => satellites.pushProfile(actor, actor.teamId, params.id),
    }),

    defineRoute({
      ...device,
      method: 'POST',
      url: '/satellites/:id/update',
      action: 'satellites.request_update',
      audit: ['admin.satellite_update_requested'],
      summary: "Sends the update message naming targetVersion, the latest release of the satellite's stream (hub version without a stream)",
      schema: { params: IdParams, response: { 200: UpdateRequested } },
      handler: ({ actor, params }) => satellites.requestUpdate(actor, actor.teamId, params.id, latestOf),
    }),

    defineRoute({
      ...device,
      method: 'POST',
      url: '/satellites/:id/logs/request',
      action: 'satellites.request_logs',
      audit: ['admin.satellite_logs_requested'],
      summary: 'Asks the satellite for the tail of its journal (default 200 lines)',
      schema: {
        params: IdParams,
        body: Type.Optional(
          Type.Object({ tail: Type.Optional(Type.Integer({ minimum: 1, maximum: 5000 })) }, { additionalProperties: false }),
        ),
        response: { 202: LogsRequested },
      },
      handler: async ({ actor, params, body, reply }) => {
        reply.code(202);
        return satellites.requestLogs(actor, actor.teamId, params.id, body?.tail ?? 200);
      },
    }),

    defineRoute({
      ...device,
      method: 'GET',
      url: '/satellites/:id/logs',
      action: 'satellites.read_logs',
      audit: [],
      summary: 'The latest log response (null lines until the satellite answered)',
      schema: { params: IdParams, response: { 200: SatelliteLogs } },
      handler: async ({ actor, params }) => ({ logs: await satellites.logs(actor.teamId, params.id) }),
    }),

    defineRoute({
      ...viewer,
      method: 'GET',
      url: '/satellites/:id/config',
      action: 'satellites.config.read',
      audit: [],
      summary: 'Effective config: configLocked, recordingProfile, effective, overrides',
      schema: { params: IdParams, response: { 200: SatelliteConfig } },
      handler: ({ actor, params }) => satellites.config(actor.teamId, params.id),
    }),

    defineRoute({
      ...device,
      method: 'PUT',
      url: '/satellites/:id/config',
      action: 'satellites.config.update',
      audit: ['admin.satellite_config_changed'],
      summary: 'Replaces the whole override row (a field left out is cleared); configLocked is for team admins',
      schema: {
        params: IdParams,
        body: Type.Object(
          { configLocked: Type.Optional(Type.Boolean()), overrides: Type.Optional(Type.Record(Type.String(), Type.Unknown())) },
          { additionalProperties: false },
        ),
        response: { 200: SatelliteConfig },
      },
      handler: ({ actor, params, body }) => satellites.putConfig(actor, actor.teamId, params.id, body),
    }),

    defineRoute({
      ...viewer,
      method: 'GET',
      url: '/satellites/:id/config/history',
      action: 'satellites.config.history',
      audit: [],
      summary: 'Config history, newest first',
      schema: {
        params: IdParams,
        querystring: Type.Object({ limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200 })) }),
        response: { 200: ConfigHistory },
      },
      handler: ({ actor, params, query }) => satellites.history(actor.teamId, params.id, query.limit ?? 50),
    }),

    defineRoute({
      ...viewer,
      method: 'GET',
      url: '/satellites/:id/telemetry',
      action: 'satellites.telemetry.read',
      audit: [],
      summary: 'Recent telemetry samples (battery, storage, temperature, network), oldest first',
      schema: {
        params: IdParams,
        querystring: Type.Object({ limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })) }),
        response: { 200: Telemetry },
      },
      handler: ({ actor, params, query }) => satellites.telemetry(actor.teamId, params.id, query.limit ?? 100),
    }),

    defineRoute({
      ...device,
      method: 'POST',
      url: '/satellites/:id/archive',
      action: 'satellites.archive',
      audit: ['admin.satellite_archived'],
      summary: 'Archives: hidden from the fleet list, never offline-alerted, data and credentials kept',
      schema: { params: IdParams, response: { 200: SatelliteView } },
      handler: ({ actor, params }) => satellites.setArchived(actor, actor.teamId, params.id, true),
    }),

    defineRoute({
      ...device,
      method: 'POST',
      url: '/satellites/:id/unarchive',
      action: 'satellites.unarchive',
      audit: ['admin.satellite_unarchived'],
      summary: 'Unarchives',
      schema: { params: IdParams, response: { 200: SatelliteView } },
      handler: ({ actor, params }) => satellites.setArchived(actor, actor.teamId, params.id, false),
    }),

    defineRoute({
      ...viewer,
      method: 'GET',
      url: '/satellites/:id/deletion-preview',
      action: 'satellites.deletion_preview',
      audit: [],
      summary: 'What a deletion removes or unlinks',
      schema: { params: IdParams, response: { 200: DeletionPreview } },
      handler: ({ actor, params }) => satellites.deletionPreview(actor.teamId, params.id),
    }),

    defineRoute({
      ...device,
      method: 'DELETE',
      url: '/satellites/:id',
      action: 'satellites.delete',
      audit: ['admin.satellite_deleted'],
      summary: 'Deletes: audio objects, then rows; broker access revoked; 400 CONFIRM_NAME_MISMATCH',
      schema: {
        params: IdParams,
        body: Type.Optional(Type.Object({ confirmName: Type.Optional(Type.String({ maxLength: 200 })) }, { additionalProperties: false })),
        response: { 204: NoContent },
      },
      handler: async ({ actor, params, body }) => {
        await satellites.delete(actor, actor.teamId, params.id, body?.confirmName);
        return undefined;
      },
    }),

    defineRoute({
      ...viewer,
      method: 'GET',
      url: '/satellites/:id/schedule',
      action: 'satellites.schedule',
      audit: [],
      summary: 'The recording schedule for a day (?date=YYYY-MM-DD, default today, UTC) with sun times at the satellite position',
      schema: {
        params: IdParams,
        querystring: Type.Object({ date: Type.Optional(Type.String({ format: 'date' })) }),
        response: { 200: Schedule },
      },
      handler: async ({ actor, params, query }) => {
        const s = await satellites.get(actor, actor.teamId, params.id);
        const eff = await settings.effective({ level: 'satellite', tenantId: actor.teamId, satelliteId: params.id });
        const value = <K extends SettingKey>(k: K) => settingValue(k, eff.settings.find((e) => e.key === k)!.value);
        return resolveSchedule({
          profile: value('recording_profile'),
          windows: value('recording_schedule'),
          latitude: s.latitude,
          longitude: s.longitude,
          day: query.date ? new Date(`${query.date}T12:00:00Z`) : clock.now(),
        });
      },
    }),
  ];
}
