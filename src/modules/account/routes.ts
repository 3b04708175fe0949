import { Type } from 'typebox';
import { access, defineRoute } from '../../core/permissions.ts';
import { Email, Password, PersonName } from '../users/schemas.ts';
import type { UsersService } from '../users/service.ts';
import type { SettingsService } from '../settings/service.ts';
import { NoContent } from '../../core/schemas.ts';
import { clearSessionCookie } from '../../core/cookies.ts';
import { MeView, PreferencesReply, ProfileReply } from './schemas.ts';

const Preferences = Type.Object(
  {
    primaryLanguage: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    secondaryLanguages: Type.Optional(Type.Union([Type.Array(Type.String(), { maxItems: 10 }), Type.Null()])),
    dateFormatPrimary: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    dateFormatSecondary: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    timeFormat: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    startOfWeek: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    paperSize: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    showVoting: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
  },
  { additionalProperties: false },
);

/** The signed-in person's own account (spec "Auth and account"). Keys have no account: mutations need a person. */
export function accountRoutes(users: UsersService, settings: SettingsService) {
  return [
    defineRoute({
      method: 'GET',
      url: '/auth/me',
      action: 'account.read',
      access: access.authenticated,
      audit: [],
      summary: 'The caller: user, teams, preferences (own value, else hub default) and MFA state',
      tags: ['account'],
      schema: { response: { 200: MeView } },
      handler: ({ actor }) => users.me(actor),
    }),

    defineRoute({
      method: 'PUT',
      url: '/auth/me/preferences',
      action: 'account.preferences.update',
      access: access.session,
      audit: ['user.preferences_updated'],
      summary: 'Sets preferences by name; null follows the hub default; values outside the options answer 400',
      tags: ['account'],
      schema: { body: Preferences, response: { 200: PreferencesReply } },
      handler: async ({ actor, body }) => {
        await settings.write(actor, { level: 'account', userId: actor.userId! }, { values: body as Record<string, unknown> });
        return { preferences: await settings.preferences(actor.userId!) };
      },
    }),

    defineRoute({
      method: 'PUT',
      url: '/auth/me/profile',
      action: 'account.profile.update',
      access: access.session,
      audit: ['user.profile_updated', 'user.email_change_requested'],
      summary:
        'Changes the name at once; a new email takes effect once confirmed through the link mailed to it (24 h), and the old address is told, with a 7-day undo link. The answer shows the current address and emailChange (the change waiting, or null)',
      tags: ['account'],
      schema: {
        body: Type.Object(
          { name: Type.Optional(PersonName), email: Type.Optional(Email) },
          { additionalProperties: false, minProperties: 1 },
        ),
        response: { 200: ProfileReply },
      },
      handler: ({ actor, body }) => users.updateProfile(actor, body),
    }),

    defineRoute({
      method: 'PUT',
      url: '/auth/me/password',
      action: 'account.password.update',
      access: access.session,
      audit: ['user.password_changed'],
      summary: 'Changes the password; other sessions end',
      tags: ['account'],
      schema: {
        body: Type.Object({ currentPassword: Password, newPassword: Password }, { additionalProperties: false }),
        response: { 204: NoContent },
      },
      handler: async ({ actor, body }) => {
        await users.changePassword(actor, body);
        return undefined;
      },
    }),

    defineRoute({
      method: 'DELETE',
      url: '/auth/me',
      action: 'account.delete',
      access: access.session,
      audit: ['user.account_deleted'],
      summary: 'Deletes the own account (password required); sole owners and hub admins are refused',
      tags: ['account'],
      schema: { body: Type.Object({ password: Password }, { additionalProperties: false }), response: { 204: NoContent } },
      handler: async ({ actor, body, reply }) => {
        await users.deleteSelf(actor, body.password);
        clearSessionCookie(reply);
        return undefined;
      },
    }),
  ];
}
