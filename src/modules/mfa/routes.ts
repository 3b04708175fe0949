import { Type } from 'typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
import { access, defineRoute } from '../../core/permissions.ts';
import { IdParams, NoContent } from '../../core/schemas.ts';
import { SignedIn } from '../users/schemas.ts';
import { setRememberCookie, setSessionCookie } from '../../core/cookies.ts';
import type { CompletedSignIn, MfaService } from './service.ts';
import {
  AssertionResponse,
  AttestationResponse,
  BackupCode,
  BackupCodesView,
  MfaToken,
  PasskeyCreationOptions,
  PasskeyRequestOptions,
  PasskeyView,
  PasswordBody,
  RememberDevice,
  RememberedDeviceView,
  TotpCode,
} from './schemas.ts';

/** A passed challenge answers as login does: session cookie, and the JWT when login asked for one. */
function signedIn(req: FastifyRequest, reply: FastifyReply, done: CompletedSignIn) {
  setSessionCookie(req, reply, done.session);
  if (done.remember) setRememberCookie(req, reply, done.remember);
  return done.token ? { user: done.user, token: done.token } : { user: done.user };
}

/**
 * Multi-factor sign-in (spec §4 /auth/login/mfa/* and /auth/mfa/*, §5 "Login security" 5).
 * Completing a challenge is public (the mfaToken is the credential); managing one's own
 * factors needs a signed-in person (keys have no account); the reset is for hub admins.
 */
export function mfaRoutes(mfa: MfaService) {
  return [
    defineRoute({
      method: 'POST',
      url: '/auth/login/mfa/totp',
      action: 'auth.login.mfa.totp',
      access: access.public,
      audit: ['user.login', 'user.mfa_login_failed'],
      summary: 'Completes a sign-in challenge with a 6-digit TOTP code; rememberDevice sets the mfa-remember cookie',
      tags: ['auth'],
      schema: {
        body: Type.Object({ mfaToken: MfaToken, code: TotpCode, rememberDevice: RememberDevice }, { additionalProperties: false }),
        response: { 200: SignedIn },
      },
      handler: async ({ actor, body, req, reply }) => signedIn(req, reply, await mfa.completeWithTotp(actor, body)),
    }),

    defineRoute({
      method: 'POST',
      url: '/auth/login/mfa/backup',
      action: 'auth.login.mfa.backup',
      access: access.public,
      audit: ['user.login', 'user.mfa_login_failed', 'auth.mfa_backup_code_used'],
      summary: 'Completes a sign-in challenge with a single-use backup code',
      tags: ['auth'],
      schema: {
        body: Type.Object({ mfaToken: MfaToken, code: BackupCode, rememberDevice: RememberDevice }, { additionalProperties: false }),
        response: { 200: SignedIn },
      },
      handler: async ({ actor, body, req, reply }) => signedIn(req, reply, await mfa.completeWithBackupCode(actor, body)),
    }),

    defineRoute({
      method: 'POST',
      url: '/auth/login/mfa/passkey/begin',
      action: 'auth.login.mfa.passkey_begin',
      access: access.public,
      audit: ['user.mfa_login_failed'],
      summary: 'PublicKeyCredentialRequestOptionsJSON for the passkeys of the person signing in',
      tags: ['auth'],
      schema: { body: Type.Object({ mfaToken: MfaToken }, { additionalProperties: false }), response: { 200: PasskeyRequestOptions } },
      handler: async ({ actor, body }) => mfa.beginPasskeySignIn(actor, body.mfaToken),
    }),

    defineRoute({
      method: 'POST',
      url: '/auth/login/mfa/passkey/finish',
      action: 'auth.login.mfa.passkey_finish',
      access: access.public,
      audit: ['user.login', 'user.mfa_login_failed'],
      summary: 'Completes a sign-in challenge with a passkey assertion (signature and sign counter checked)',
      tags: ['auth'],
      schema: {
        body: Type.Object(
          { mfaToken: MfaToken, response: AssertionResponse, rememberDevice: RememberDevice },
          { additionalProperties: false },
        ),
        response: { 200: SignedIn },
      },
      handler: async ({ actor, body, req, reply }) =>
        signedIn(
          req,
          reply,
          await mfa.completeWithPasskey(actor, { ...body, response: body.response as unknown as AuthenticationResponseJSON }),
        ),
    }),

    defineRoute({
      method: 'POST',
      url: '/auth/mfa/totp/begin',
      action: 'account.mfa.totp_begin',
      access: access.session,
      audit: [],
      summary: 'Starts TOTP enrollment: QR code and manual key; the secret is held 10 minutes',
      tags: ['account'],
      schema: { response: { 200: Type.Object({ qrDataUrl: Type.String(), manualKey: Type.String(), expiresAt: Type.String() }) } },
      handler: async ({ actor }) => mfa.beginTotp(actor),
    }),

    defineRoute({
      method: 'POST',
      url: '/auth/mfa/totp/confirm',
      action: 'account.mfa.totp_confirm',
      access: access.session,
      audit: ['auth.mfa_enabled', 'auth.mfa_enrollment_failed'],
      summary: 'Confirms enrollment with a code from the new secret; answers the backup codes, shown once',
      tags: ['account'],
      schema: { body: Type.Object({ code: TotpCode }, { additionalProperties: false }), response: { 200: BackupCodesView } },
      handler: async ({ actor, body }) => mfa.confirmTotp(actor, body.code),
    }),

    defineRoute({
      method: 'POST',
      url: '/auth/mfa/totp/cancel',
      action: 'account.mfa.totp_cancel',
      access: access.session,
      audit: [],
      summary: 'Drops a pending TOTP enrollment',
      tags: ['account'],
      schema: { response: { 204: NoContent } },
      handler: async ({ actor }) => {
        await mfa.cancelTotp(actor);
        return undefined;
      },
    }),

    defineRoute({
      method: 'POST',
      url: '/auth/mfa/disable',
      action: 'account.mfa.disable',
      access: access.session,
      audit: ['auth.mfa_disabled_self'],
      summary: 'Turns MFA off with the password: secrets, backup codes, passkeys and remembered devices are wiped; hub admins may not',
      tags: ['account'],
      schema: { body: PasswordBody, response: { 204: NoContent } },
      handler: async ({ actor, body }) => {
        await mfa.disable(actor, body.password);
        return undefined;
      },
    }),

    defineRoute({
      method: 'POST',
      url: '/auth/mfa/backup-codes/regenerate',
      action: 'account.mfa.backup_codes_regenerate',
      access: access.session,
      audit: ['auth.mfa_backup_codes_regenerated'],
      summary: 'A new set of backup codes, shown once; the old set stops working',
      tags: ['account'],
      schema: { body: PasswordBody, response: { 200: BackupCodesView } },
      handler: async ({ actor, body }) => mfa.regenerateBackupCodes(actor, body.password),
    }),

    defineRoute({
      method: 'POST',
      url: '/auth/mfa/passkeys/register/begin',
      action: 'account.mfa.passkey_register_begin',
      access: access.session,
      audit: [],
      summary: 'PublicKeyCredentialCreationOptionsJSON for a new passkey (MFA must be on)',
      tags: ['account'],
      schema: { response: { 200: PasskeyCreationOptions } },
      handler: async ({ actor }) => mfa.beginPasskeyRegistration(actor),
    }),

    defineRoute({
      method: 'POST',
      url: '/auth/mfa/passkeys/register/finish',
      action: 'account.mfa.passkey_register_finish',
      access: access.session,
      audit: ['auth.mfa_passkey_added'],
      summary: 'Verifies the attestation and commits the passkey',
      tags: ['account'],
      schema: {
        body: Type.Object(
          { response: AttestationResponse, name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })) },
          { additionalProperties: false },
        ),
        response: { 201: PasskeyView },
      },
      handler: async ({ actor, body, reply }) => {
        const passkey = await mfa.finishPasskeyRegistration(actor, {
          ...body,
          response: body.response as unknown as RegistrationResponseJSON,
        });
        reply.code(201);
        return passkey;
      },
    }),

    defineRoute({
      method: 'GET',
      url: '/auth/mfa/passkeys',
      action: 'account.mfa.passkeys_list',
      access: access.session,
      audit: [],
      summary: "The caller's passkeys",
      tags: ['account'],
      schema: { response: { 200: Type.Object({ passkeys: Type.Array(PasskeyView) }) } },
      handler: async ({ actor }) => ({ passkeys: await mfa.listPasskeys(actor) }),
    }),

    defineRoute({
      method: 'DELETE',
      url: '/auth/mfa/passkeys/:id',
      action: 'account.mfa.passkey_remove',
      access: access.session,
      audit: ['auth.mfa_passkey_removed'],
      summary: 'Removes one of the caller’s passkeys',
      tags: ['account'],
      schema: { params: IdParams, response: { 204: NoContent } },
      handler: async ({ actor, params }) => {
        await mfa.removePasskey(actor, params.id);
        return undefined;
      },
    }),

    defineRoute({
      method: 'GET',
      url: '/auth/mfa/remembered-devices',
      action: 'account.mfa.devices_list',
      access: access.session,
      audit: [],
      summary: "The caller's remembered devices (sign-in skips the second factor on them)",
      tags: ['account'],
      schema: { response: { 200: Type.Object({ rememberedDevices: Type.Array(RememberedDeviceView) }) } },
      handler: async ({ actor }) => ({ rememberedDevices: await mfa.listDevices(actor) }),
    }),

    defineRoute({
      method: 'DELETE',
      url: '/auth/mfa/remembered-devices/:id',
      action: 'account.mfa.device_revoke',
      access: access.session,
      audit: ['auth.mfa_device_revoked'],
      summary: 'Forgets one remembered device; its next sign-in meets the second factor again',
      tags: ['account'],
      schema: { params: IdParams, response: { 204: NoContent } },
      handler: async ({ actor, params }) => {
        await mfa.revokeDevice(actor, params.id);
        return undefined;
      },
    }),

    defineRoute({
      method: 'POST',
      url: '/auth/mfa/admin/users/:id/reset',
      action: 'admin.users.mfa_reset',
      access: access.hubAdmin,
      audit: ['auth.mfa_reset_by_admin'],
      summary: 'Lost-device recovery: wipes the person’s TOTP secret, backup codes, passkeys and remembered devices',
      tags: ['admin'],
      schema: { params: IdParams, response: { 204: NoContent } },
      handler: async ({ actor, params }) => {
        await mfa.adminReset(actor, params.id);
        return undefined;
      },
    }),
  ];
}
