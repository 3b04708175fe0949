import { Type } from 'typebox';
import { access, defineRoute } from '../../core/permissions.ts';
import { MFA_REMEMBER_COOKIE, clearSessionCookie, setSessionCookie } from '../../core/cookies.ts';
import { NoContent } from '../../core/schemas.ts';
import { Email, MfaChallenge, Password, PersonName, SignedIn, UserView } from '../users/schemas.ts';
import type { AuthService } from './service.ts';

export function authRoutes(auth: AuthService) {
  return [
    defineRoute({
      method: 'POST',
      url: '/auth/login',
      action: 'auth.login',
      access: access.public,
      audit: ['user.login', 'user.login_failed', 'user.mfa_challenge_issued'],
      summary:
        'Sign in with email and password; sets the session cookie (after the second factor when MFA is on), and with ?returnToken=true also returns a JWT',
      tags: ['auth'],
      schema: {
        querystring: Type.Object({ returnToken: Type.Optional(Type.Boolean()) }),
        body: Type.Object({ email: Type.String({ minLength: 1, maxLength: 254 }), password: Password }, { additionalProperties: false }),
        response: { 200: Type.Union([SignedIn, MfaChallenge]) },
      },
      handler: async ({ body, query, actor, req, reply }) => {
        const outcome = await auth.login(actor, {
          email: body.email,
          password: body.password,
          wantToken: query.returnToken === true,
          userAgent: req.headers['user-agent'] ?? null,
          rememberToken: req.cookies?.[MFA_REMEMBER_COOKIE] ?? null,
        });
        if (outcome.kind === 'mfa_required') {
          return { mfaRequired: true, mfaToken: outcome.mfaToken, hasPasskeys: outcome.hasPasskeys };
        }
        setSessionCookie(req, reply, outcome.session);
        return outcome.token ? { user: outcome.user, token: outcome.token } : { user: outcome.user };
      },
    }),

    defineRoute({
      method: 'POST',
      url: '/auth/logout',
      action: 'auth.logout',
      access: access.authenticated,
      audit: ['user.logout'],
      summary: 'Ends the session (cookie and the JWTs issued with it); keeps the mfa-remember cookie',
      tags: ['auth'],
      schema: { response: { 204: NoContent } },
      handler: async ({ actor, reply }) => {
        await auth.logout(actor);
        clearSessionCookie(reply);
        return undefined;
      },
    }),

    defineRoute({
      method: 'POST',
      url: '/auth/register',
      action: 'auth.register',
      access: access.public,
      audit: ['user.register', 'member.joined_team'],
      summary: 'Creates an account; with inviteToken the person joins the team with the invite role',
      tags: ['auth'],
      schema: {
        body: Type.Object(
          { email: Email, password: Password, name: PersonName, inviteToken: Type.Optional(Type.String({ pattern: '^[0-9a-f]{64}$' })) },
          { additionalProperties: false },
        ),
        response: {
          201: Type.Object({
            user: UserView,
            joined: Type.Union([Type.Object({ tenantId: Type.String(), role: Type.String() }), Type.Null()]),
          }),
        },
      },
      handler: async ({ body, actor, reply }) => {
        const result = await auth.register(actor, body);
        reply.code(201);
        return result;
      },
    }),

    defineRoute({
      method: 'POST',
      url: '/auth/forgot-password',
      action: 'auth.forgot_password',
      access: access.public,
      audit: ['user.password_reset_requested'],
      summary: 'Mails a 60-minute single-use reset link; always 204',
      tags: ['auth'],
      schema: {
        body: Type.Object({ email: Type.String({ minLength: 1, maxLength: 254 }) }, { additionalProperties: false }),
        response: { 204: NoContent },
      },
      handler: async ({ body, actor }) => {
        await auth.forgotPassword(actor, body.email);
        return undefined;
      },
    }),

    defineRoute({
      method: 'POST',
      url: '/auth/reset-password',
      action: 'auth.reset_password',
      access: access.public,
      audit: ['user.password_reset_completed', 'user.password_reset_failed'],
      summary: 'Sets a new password with the token from the reset link; clears the lock',
      tags: ['auth'],
      schema: {
        body: Type.Object({ token: Type.String({ minLength: 1, maxLength: 200 }), password: Password }, { additionalProperties: false }),
        response: { 204: NoContent },
      },
      handler: async ({ body, actor }) => {
        await auth.resetPassword(actor, body);
        return undefined;
      },
    }),
  ];
}
