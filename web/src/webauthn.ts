/**
 * Passkeys through the browser's WebAuthn JSON helpers (parse…OptionsFromJSON, toJSON), so
 * the options the hub sends and the response it verifies need no hand-written base64url.
 */
import { tActive } from './i18n';

type PKC = typeof PublicKeyCredential & {
  parseCreationOptionsFromJSON?: (o: unknown) => PublicKeyCredentialCreationOptions;
  parseRequestOptionsFromJSON?: (o: unknown) => PublicKeyCredentialRequestOptions;
};

export const passkeysSupported = () =>
  typeof window !== 'undefined' &&
  'PublicKeyCredential' in window &&
  typeof (PublicKeyCredential as PKC).parseRequestOptionsFromJSON === 'function';

function toJSON(cred: Credential | null): unknown {
  if (!cred) throw new Error(tActive('error.noPasskey'));
  return (cred as PublicKeyCredential & { toJSON(): unknown }).toJSON();
}

export async function getAssertion(optionsJSON: unknown): Promise<unknown> {
  const publicKey = (PublicKeyCredential as PKC).parseRequestOptionsFromJSON!(optionsJSON);
  return toJSON(await navigator.credentials.get({ publicKey }));
}

export async function createCredential(optionsJSON: unknown): Promise<unknown> {
  const publicKey = (PublicKeyCredential as PKC).parseCreationOptionsFromJSON!(optionsJSON);
  return toJSON(await navigator.credentials.create({ publicKey }));
}
