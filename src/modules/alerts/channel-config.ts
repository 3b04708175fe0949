/**
 * A channel's config in three forms: what the admin sends, what is stored (a public part and a
 * sealed secret part), and what a delivery needs (ChannelTarget, secrets opened). Secrets are
 * the webhook signing secret, the Telegram bot token, and every URL that may carry a token
 * (the webhook URL itself: receivers often put a token in its path or query; chat webhook URLs
 * are the credential). Responses show only the public part.
 */
import { badRequest } from '../../core/errors.ts';
import type { ChannelConfigInput } from './schemas.ts';
import type { ChannelTarget, ChannelType } from './delivery/types.ts';

export interface ChannelSecrets {
  url?: string;
  secret?: string;
  webhookUrl?: string;
  botToken?: string;
}

/** The public part of a channel's config: what alert_channels.config stores and a response shows. */
export type ChannelConfig = {
  addresses?: string[];
  url?: string;
  chatId?: string;
  host?: string;
};

export interface SplitConfig {
  config: ChannelConfig;
  secrets: ChannelSecrets;
}

/** Which input members each type takes. */
const MEMBERS: Record<ChannelType, ReadonlyArray<keyof ChannelConfigInput>> = {
  email: ['addresses'],
  webhook: ['url', 'secret'],
  chat_blocks: ['webhookUrl'],
  chat_cards: ['webhookUrl'],
  chat_embeds: ['webhookUrl'],
  chat_bot: ['botToken', 'chatId'],
};

/** The URL without user part, query or fragment: enough to recognise the receiver, no token. */
export function redactUrl(raw: string): string {
  try {
    const u = new URL(raw);
    return `${u.protocol}//${u.host}${u.pathname}${u.search ? '?…' : ''}`;
  } catch {
    return '';
  }
}

/** Scheme and host only: receivers put tokens in paths too, and members below Admin need only know where alerts go. */
function hostOnlyUrl(stored: string): string {
  try {
    const u = new URL(stored);
    return `${u.protocol}//${u.host}/${u.pathname.length > 1 || u.search ? '…' : ''}`;
  } catch {
    return '';
  }
}

/** `anna@example.org` → `a***@example.org`: the receiving domain stays recognisable, the person does not. */
export function maskEmail(address: string): string {
  const at = address.lastIndexOf('@');
  if (at < 1) return '***';
  return `${Array.from(address)[0]}***${address.slice(at)}`;
}

const EMAIL_IN_TEXT = /[^\s@;:,<>()"']+@[^\s@;:,<>()"']+/g;

/** Email addresses inside free text (a delivery error names the address that failed), masked. */
export const maskEmailsIn = (text: string): string => text.replace(EMAIL_IN_TEXT, maskEmail);

/**
 * The config a member below Admin sees: the same fields, with the webhook URL cut to scheme and
 * host and email addresses masked. Admins, who may change the channel, see the stored form.
 */
export function configForViewer(config: ChannelConfig): ChannelConfig {
  return {
    ...config,
    ...(config.url !== undefined ? { url: hostOnlyUrl(config.url) } : {}),
    ...(config.addresses !== undefined ? { addresses: config.addresses.map(maskEmail) } : {}),
  };
}

const hostOf = (raw: string) => {
  try {
    return new URL(raw).host;
  } catch {
    return '';
  }
};

/**
 * Merges an update into the stored channel (null `previous` on create): members left out keep
 * their stored value, `secret: null` removes the signing secret. Refuses members the type does
 * not take and required ones missing.
 */
export function splitConfig(type: ChannelType, input: ChannelConfigInput, previous: SplitConfig | null): SplitConfig {
  const stray = (Object.keys(input) as Array<keyof ChannelConfigInput>).filter((k) => input[k] !== undefined && !MEMBERS[type].includes(k));
  if (stray.length > 0)
    throw badRequest(`config.${stray[0]} does not apply to a ${type} channel`, 'INVALID_CHANNEL_CONFIG', { fields: stray });
  const prev = previous?.secrets ?? {};
  const need = (value: string | undefined, name: string) => {
    if (!value) throw badRequest(`A ${type} channel needs config.${name}`, 'INVALID_CHANNEL_CONFIG');
    return value;
  };
  switch (type) {
    case 'email': {
      const addresses = input.addresses ?? previous?.config.addresses;
      if (!addresses?.length) throw badRequest('An email channel needs config.addresses', 'INVALID_CHANNEL_CONFIG');
      return { config: { addresses }, secrets: {} };
    }
    case 'webhook': {
      const url = need(input.url ?? prev.url, 'url');
      const secret = input.secret === null ? undefined : (input.secret ?? prev.secret);
      return { config: { url: redactUrl(url) }, secrets: { url, ...(secret ? { secret } : {}) } };
    }
    case 'chat_bot': {
      const botToken = need(input.botToken ?? prev.botToken, 'botToken');
      const chatId = need(input.chatId ?? previous?.config.chatId, 'chatId');
      return { config: { chatId }, secrets: { botToken } };
    }
    default: {
      const webhookUrl = need(input.webhookUrl ?? prev.webhookUrl, 'webhookUrl');
      return { config: { host: hostOf(webhookUrl) }, secrets: { webhookUrl } };
    }
  }
}

/** The URL an admin just sent, to check against the outbound address policy (null: none sent). */
export const urlToCheck = (input: ChannelConfigInput): string | null => input.url ?? input.webhookUrl ?? null;

/** Whether the response says a secret is kept (the signing secret for webhooks; the credential for chat kinds). */
export const hasSecret = (type: ChannelType, s: ChannelSecrets) =>
  type === 'webhook' ? Boolean(s.secret) : Boolean(s.webhookUrl ?? s.botToken);

export function targetOf(type: ChannelType, split: SplitConfig, payloadTemplate: string | null): ChannelTarget {
  const { config, secrets } = split;
  switch (type) {
    case 'email':
      return { type, addresses: config.addresses! };
    case 'webhook':
      return { type, url: secrets.url!, secret: secrets.secret ?? null, payloadTemplate };
    case 'chat_bot':
      return { type, botToken: secrets.botToken!, chatId: config.chatId! };
    default:
      return { type, webhookUrl: secrets.webhookUrl! };
  }
}
