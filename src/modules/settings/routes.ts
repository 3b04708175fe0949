import { Type } from 'typebox';
import { access, defineRoute } from '../../core/permissions.ts';
import type { SettingsService } from './service.ts';

/** Hub-level settings. The full layered endpoints (team, satellite, effective) build on the same writer. */
export function settingsRoutes(settings: SettingsService) {
  return [
    defineRoute({
      method: 'GET',
      url: '/settings/platform',
      action: 'settings.platform.read',
      access: access.hubAdmin,
      audit: [],
      summary: 'Hub settings with their values in force',
      tags: ['settings'],
      schema: {},
      handler: async () => ({ settings: await settings.hubSettings() }),
    }),

    defineRoute({
      method: 'PUT',
      url: '/settings/platform',
      action: 'settings.platform.update',
      access: access.hubAdmin,
      audit: ['admin.platform_settings_updated'],
      summary: 'Changes the hub settings sent (null returns a setting to its default); 400 lists every refusal',
      tags: ['settings'],
      schema: { body: Type.Record(Type.String(), Type.Unknown()) },
      handler: async ({ actor, body }) => {
        await settings.updateHubSettings(actor, body as Record<string, unknown>);
        return { settings: await settings.hubSettings() };
      },
    }),
  ];
}
