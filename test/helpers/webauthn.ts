/**
 * A software authenticator for tests: a P-256 key made with node:crypto that answers
 * WebAuthn registration with a real `none` attestation and sign-in with real ES256
 * assertions, built byte by byte as an authenticator and a browser would.
 */
import crypto from 'node:crypto';

const b64url = (b: Buffer | Uint8Array) => Buffer.from(b).toString('base64url');
const sha256 = (b: Buffer | string) => crypto.createHash('sha256').update(b).digest();

// ---------------------------------------------------------------- a tiny CBOR encoder

export type CborValue = number | string | Uint8Array | CborValue[] | Map<CborValue, CborValue> | { [k: string]: CborValue };

function head(major: number, n: number): Buffer {
  if (n < 24) return Buffer.from([(major << 5) | n]);
  if (n < 0x100) return Buffer.from([(major << 5) | 24, n]);
  if (n < 0x10000) {
    const b = Buffer.alloc(3);
    b[0] = (major << 5) | 25;
    b.writeUInt16BE(n, 1);
    return b;
  }
  const b = Buffer.alloc(5);
  b[0] = (major << 5) | 26;
  b.writeUInt32BE(n, 1);
  return b;
}

/** Maps, arrays, integers, byte strings and text strings: all COSE keys and attestation objects need. */
export function cbor(value: CborValue): Buffer {
  if (typeof value === 'number') {
    if (!Number.isInteger(value)) throw new Error('cbor: integers only');
    return value >= 0 ? head(0, value) : head(1, -1 - value);
  }
  if (typeof value === 'string') {
    const bytes = Buffer.from(value, 'utf8');
    return Buffer.concat([head(3, bytes.length), bytes]);
  }
  if (value instanceof Uint8Array) return Buffer.concat([head(2, value.length), Buffer.from(value)]);
  if (Array.isArray(value)) return Buffer.concat([head(4, value.length), ...value.map(cbor)]);
  const entries = value instanceof Map ? [...value.entries()] : Object.entries(value);
  return Buffer.concat([head(5, entries.length), ...entries.flatMap(([k, v]) => [cbor(k), cbor(v)])]);
}

// ---------------------------------------------------------------- the authenticator

const FLAG_UP = 0x01;
const FLAG_UV = 0x04;
const FLAG_AT = 0x40;

interface RegistrationOptions {
  challenge: string;
  rp: { id?: string; name: string };
}

interface RequestOptions {
  challenge: string;
  rpId?: string;
}

export class SoftAuthenticator {
  readonly credentialId = crypto.randomBytes(32);
  private readonly keys = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' });
  /** The signature counter the next assertion will carry (incremented before use). */
  counter = 0;

  constructor(private readonly origin: string) {}

  get id(): string {
    return b64url(this.credentialId);
  }

  /** COSE_Key for ES256: {kty: EC2, alg: -7, crv: P-256, x, y}. */
  private coseKey(): Buffer {
    const jwk = this.keys.publicKey.export({ format: 'jwk' });
    return cbor(
      new Map<CborValue, CborValue>([
        [1, 2],
        [3, -7],
        [-1, 1],
        [-2, Buffer.from(jwk.x!, 'base64url')],
        [-3, Buffer.from(jwk.y!, 'base64url')],
      ]),
    );
  }

  private authData(rpId: string, flags: number, counter: number, attested?: Buffer): Buffer {
    const count = Buffer.alloc(4);
    count.writeUInt32BE(counter);
    return Buffer.concat([sha256(rpId), Buffer.from([flags]), count, ...(attested ? [attested] : [])]);
  }

  private clientData(type: 'webauthn.create' | 'webauthn.get', challenge: string, origin = this.origin): Buffer {
    return Buffer.from(JSON.stringify({ type, challenge, origin, crossOrigin: false }));
  }

  /** navigator.credentials.create() with attestation `none`, as RegistrationResponseJSON. */
  register(options: RegistrationOptions, opts: { challenge?: string } = {}) {
    const rpId = options.rp.id!;
    const idLen = Buffer.alloc(2);
    idLen.writeUInt16BE(this.credentialId.length);
    const attested = Buffer.concat([Buffer.alloc(16), idLen, this.credentialId, this.coseKey()]);
    const authData = this.authData(rpId, FLAG_UP | FLAG_UV | FLAG_AT, this.counter, attested);
    const attestationObject = cbor({ fmt: 'none', attStmt: {}, authData });
    const clientDataJSON = this.clientData('webauthn.create', opts.challenge ?? options.challenge);
    return {
      id: this.id,
      rawId: this.id,
      type: 'public-key',
      authenticatorAttachment: 'platform',
      clientExtensionResults: {},
      response: { clientDataJSON: b64url(clientDataJSON), attestationObject: b64url(attestationObject), transports: ['internal'] },
    };
  }

  /**
   * navigator.credentials.get(), as AuthenticationResponseJSON. The signature is ES256 (DER)
   * over authenticatorData || SHA-256(clientDataJSON). `counter` forces the counter (replays),
   * `signWith` signs with another key (a wrong signature).
   */
  assert(options: RequestOptions, opts: { counter?: number; signWith?: crypto.KeyObject; origin?: string } = {}) {
    const counter = opts.counter ?? ++this.counter;
    const authData = this.authData(options.rpId!, FLAG_UP | FLAG_UV, counter);
    const clientDataJSON = this.clientData('webauthn.get', options.challenge, opts.origin);
    const signature = crypto.sign('sha256', Buffer.concat([authData, sha256(clientDataJSON)]), opts.signWith ?? this.keys.privateKey);
    return {
      id: this.id,
      rawId: this.id,
      type: 'public-key',
      authenticatorAttachment: 'platform',
      clientExtensionResults: {},
      response: { clientDataJSON: b64url(clientDataJSON), authenticatorData: b64url(authData), signature: b64url(signature) },
    };
  }
}

export const otherKey = () => crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
