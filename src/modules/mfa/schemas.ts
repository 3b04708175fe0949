import { Type } from 'typebox';
import { Open } from '../../core/schemas.ts';
import { Password } from '../users/schemas.ts';

export const MfaToken = Type.String({ pattern: '^[0-9a-f]{64}$' });
export const TotpCode = Type.String({ pattern: '^[0-9]{6}$' });
/** Typed back by hand: case, spaces and dashes are ignored. */
export const BackupCode = Type.String({ minLength: 1, maxLength: 40 });
export const RememberDevice = Type.Optional(Type.Boolean());
export const PasswordBody = Type.Object({ password: Password }, { additionalProperties: false });

const B64url = Type.String({ minLength: 1, maxLength: 16_384, pattern: '^[A-Za-z0-9_-]+={0,2}$' });
// The JSON a browser's WebAuthn call produces; the WebAuthn library checks every field it needs.
const Extensions = Type.Optional(Type.Object({}, { additionalProperties: true }));

export const AssertionResponse = Type.Object(
  {
    id: B64url,
    rawId: B64url,
    type: Type.Literal('public-key'),
    response: Type.Object(
      { clientDataJSON: B64url, authenticatorData: B64url, signature: B64url, userHandle: Type.Optional(Type.String({ maxLength: 1024 })) },
      { additionalProperties: true },
    ),
    authenticatorAttachment: Type.Optional(Type.String({ maxLength: 40 })),
    clientExtensionResults: Extensions,
  },
  { additionalProperties: true },
);

export const AttestationResponse = Type.Object(
  {
    id: B64url,
    rawId: B64url,
    type: Type.Literal('public-key'),
    response: Type.Object(
      {
        clientDataJSON: B64url,
        attestationObject: B64url,
        transports: Type.Optional(Type.Array(Type.String({ maxLength: 40 }), { maxItems: 10 })),
      },
      { additionalProperties: true },
    ),
    authenticatorAttachment: Type.Optional(Type.String({ maxLength: 40 })),
    clientExtensionResults: Extensions,
  },
  { additionalProperties: true },
);

export const PasskeyView = Type.Object({
  id: Type.String(),
  name: Type.String(),
  createdAt: Type.String(),
  lastUsedAt: Type.Union([Type.String(), Type.Null()]),
});

export const RememberedDeviceView = Type.Object({
  id: Type.String(),
  userAgent: Type.Union([Type.String(), Type.Null()]),
  ip: Type.Union([Type.String(), Type.Null()]),
  createdAt: Type.String(),
  lastUsedAt: Type.Union([Type.String(), Type.Null()]),
  expiresAt: Type.String(),
});

export const BackupCodesView = Type.Object({ backupCodes: Type.Array(Type.String()) });

/** The WebAuthn options the browser passes to navigator.credentials (SimpleWebAuthn's JSON, kept whole). */
export const PasskeyRequestOptions = Open({ challenge: Type.String() });
export const PasskeyCreationOptions = Open({ challenge: Type.String() });
