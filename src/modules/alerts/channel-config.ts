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
  /** The MQTT broker's password (mqtt_home_assistant). */
  password?: string;
  /** The BirdWeather station token: whoever has it posts as the station. */
  stationToken?: string;
}

/** The public part of a channel's config: what alert_channels.config stores and a response shows. */
export type ChannelConfig = {
  addresses?: string[];
  url?: string;
  chatId?: string;
  host?: string;
  brokerUrl?: string;
  username?: string;
  topicPrefix?: string;
  discoveryPrefix?: string;
  apiUrl?: string;
  minConfidence?: number;
};

export const DEFAULT_TOPIC_PREFIX = 'chorus';
export const DEFAULT_DISCOVERY_PREFIX = 'homeassistant';
export const DEFAULT_BIRDWEATHER_API_URL = 'https://app.birdweather.com';
const BROKER_SCHEMES = new Set(['mqtt:', 'mqtts:', 'ws:', 'wss:']);
const BROKER_PORTS: Record<string, number> = { 'mqtt:': 1883, 'mqtts:': 8883, 'ws:': 80, 'wss:': 443 };

/**
 * A broker URL as stored: scheme mqtt, mqtts, ws or wss, a host, no credentials (they go in
 * username and password, the password sealed). Throws the channel form's 400 otherwise.
 */
export function parseBrokerUrl(raw: string): URL {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw badRequest('config.brokerUrl is not a valid URL', 'INVALID_CHANNEL_CONFIG', { fields: ['brokerUrl'] });
  }
  if (!BROKER_SCHEMES.has(u.protocol))
    throw badRequest('config.brokerUrl must start with mqtt://, mqtts://, ws:// or wss://', 'INVALID_CHANNEL_CONFIG', {
      fields: ['brokerUrl'],
    });
  if (u.username !== '' || u.password !== '')
    throw badRequest(
      'config.brokerUrl must not carry a user name or password: use config.username and config.password',
      'INVALID_CHANNEL_CONFIG',
      {
        fields: ['brokerUrl'],
      },
    );
  if (u.hostname === '') throw badRequest('config.brokerUrl has no host', 'INVALID_CHANNEL_CONFIG', { fields: ['brokerUrl'] });
  return u;
}

/** The http URL of the broker's host and port: what the outbound address policy judges (it speaks http only). */
export const brokerPolicyUrl = (u: URL): string =>
  `http://${u.hostname.includes(':') && !u.hostname.startsWith('[') ? `[${u.hostname}]` : u.hostname}:${u.port || BROKER_PORTS[u.protocol]}/`;

function parseApiUrl(raw: string): string {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw badRequest('config.apiUrl is not a valid URL', 'INVALID_CHANNEL_CONFIG', { fields: ['apiUrl'] });
  }
  if ((u.protocol !== 'http:' && u.protocol !== 'https:') || u.username !== '' || u.password !== '' || u.search !== '')
    throw badRequest('config.apiUrl must be an http(s) URL without credentials or query', 'INVALID_CHANNEL_CONFIG', { fields: ['apiUrl'] });
  return `${u.protocol}//${u.host}${u.pathname.replace(/\/+$/, '')}`;
}

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
  mqtt_home_assistant: ['brokerUrl', 'username', 'password', 'topicPrefix', 'discoveryPrefix', 'minConfidence'],
  birdweather: ['stationToken', 'apiUrl', 'minConfidence'],
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
    ...(config.brokerUrl !== undefined ? { brokerUrl: hostOnlyUrl(config.brokerUrl) } : {}),
    ...(config.username !== undefined ? { username: '***' } : {}),
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
    case 'mqtt_home_assistant': {
      const old = previous?.config ?? {};
      const brokerUrl = parseBrokerUrl(need(input.brokerUrl ?? old.brokerUrl, 'brokerUrl')).href;
      const username = input.username === null ? undefined : (input.username ?? old.username);
      const password = input.password === null ? undefined : (input.password ?? prev.password);
      const minConfidence = input.minConfidence === null ? undefined : (input.minConfidence ?? old.minConfidence);
      const config: ChannelConfig = {
        brokerUrl,
        ...(username ? { username } : {}),
        topicPrefix: input.topicPrefix ?? old.topicPrefix ?? DEFAULT_TOPIC_PREFIX,
        discoveryPrefix: input.discoveryPrefix ?? old.discoveryPrefix ?? DEFAULT_DISCOVERY_PREFIX,
        ...(minConfidence !== undefined ? { minConfidence } : {}),
      };
      return { config, secrets: password ? { password } : {} };
    }
    case 'birdweather': {
      const old = previous?.config ?? {};
      const stationToken = need(input.stationToken ?? prev.stationToken, 'stationToken');
      const apiUrl = parseApiUrl(input.apiUrl ?? old.apiUrl ?? DEFAULT_BIRDWEATHER_API_URL);
      const minConfidence = input.minConfidence === null ? undefined : (input.minConfidence ?? old.minConfidence);
      return { config: { apiUrl, ...(minConfidence !== undefined ? { minConfidence } : {}) }, secrets: { stationToken } };
    }
    default: {
      const webhookUrl = need(input.webhookUrl ?? prev.webhookUrl, 'webhookUrl');
      return { config: { host: hostOf(webhookUrl) }, secrets: { webhookUrl } };
    }
  }
}

/** The URL an admin just sent, to check against the outbound address policy (null: none sent). */
export const urlToCheck = (input: ChannelConfigInput): string | null =>
  input.url ?? input.webhookUrl ?? input.apiUrl ?? (input.brokerUrl ? brokerPolicyUrl(parseBrokerUrl(input.brokerUrl)) : null);

/** Whether the response says a secret is kept (the signing secret for webhooks; the credential for chat kinds and streams). */
export const hasSecret = (type: ChannelType, s: ChannelSecrets) =>
  type === 'webhook'
    ? Boolean(s.secret)
    : type === 'mqtt_home_assistant'
      ? Boolean(s.password)
      : type === 'birdweather'
        ? Boolean(s.stationToken)
        : Boolean(s.webhookUrl ?? s.botToken);

export function targetOf(type: ChannelType, split: SplitConfig, payloadTemplate: string | null): ChannelTarget {
  const { config, secrets } = split;
  switch (type) {
    case 'email':
      return { type, addresses: config.addresses! };
    case 'webhook':
      return { type, url: secrets.url!, secret: secrets.secret ?? null, payloadTemplate };
    case 'chat_bot':
      return { type, botToken: secrets.botToken!, chatId: config.chatId! };
    case 'mqtt_home_assistant':
      return {
        type,
        brokerUrl: config.brokerUrl!,
        username: config.username ?? null,
        password: secrets.password ?? null,
        topicPrefix: config.topicPrefix ?? DEFAULT_TOPIC_PREFIX,
        discoveryPrefix: config.discoveryPrefix ?? DEFAULT_DISCOVERY_PREFIX,
      };
    case 'birdweather':
      return { type, apiUrl: config.apiUrl ?? DEFAULT_BIRDWEATHER_API_URL, stationToken: secrets.stationToken! };
    default:
      return { type, webhookUrl: secrets.webhookUrl! };
  }
}
