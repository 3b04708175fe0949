import { Type } from 'typebox';
import { access, defineRoute } from '../../core/permissions.ts';
import { NoContent } from '../../core/schemas.ts';
import type { EmailChangeService } from './service.ts';
import { EmailChangeToken } from './schemas.ts';

/**
 * The links of an address change (issue 33 item 3). Confirm and undo are public: the 256-bit
 * token in the mail is the proof, and unknown tokens spend the guess limit (app.ts GUESS_RULES).
 * The change itself is requested through PUT /auth/me/profile.
 */
export function emailChangeRoutes(changes: EmailChangeService) {
  return [
    defineRoute({
      method: 'POST',
      url: '/auth/email-change/confirm',
      action: 'auth.email_change.confirm',
      access: access.public,
      audit: ['user.email_change_confirmed', 'user.email_change_failed'],
      summary: 'Confirms a new email address with the token of the link mailed to it (24 hours, single use); sessions stay',
      tags: ['account'],
      schema: {
        body: Type.Object({ token: EmailChangeToken }, { additionalProperties: false }),
        response: { 200: Type.Object({ email: Type.String() }) },
      },
      handler: ({ body, actor }) => changes.confirm(actor, body.token),
    }),

    defineRoute({
      method: 'POST',
      url: '/auth/email-change/undo',
      action: 'auth.email_change.undo',
      access: access.public,
      audit: ['user.email_change_undone', 'user.email_change_failed'],
      summary:
        'With the token mailed to the old address (7 days, single use): cancels the change or restores the old address, ends every session and replaces the password (reset it through forgot-password)',
      tags: ['account'],
      schema: { body: Type.Object({ token: EmailChangeToken }, { additionalProperties: false }), response: { 204: NoContent } },
      handler: async ({ body, actor }) => {
        await changes.undo(actor, body.token);
        return undefined;
      },
    }),

    defineRoute({
      method: 'DELETE',
      url: '/auth/me/email-change',
      action: 'account.email_change.cancel',
      access: access.session,
      audit: ['user.email_change_cancelled'],
      summary: 'Withdraws the address change waiting for confirmation; 204 also when none is waiting',
      tags: ['account'],
      schema: { response: { 204: NoContent } },
      handler: async ({ actor }) => {
        await changes.cancel(actor);
        return undefined;
      },
    }),
  ];
}
