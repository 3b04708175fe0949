import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import { parseAddressList, parseTrustProxy, type TrustProxy } from './core/client-address.ts';
import type { RateRule } from './core/rate-limit.ts';
import { AUDIO_PACKET_MAX_BYTES, MQTT_MAX_PACKET_BYTES } from './protocol/limits.ts';
import { parseAllowList } from './core/outbound-allow-list.ts';

export type HubMode = 'full' | 'dispatcher' | 'api' | 'worker';

export interface Config {
  readonly port: number;
  readonly host: string;
  readonly mode: HubMode;
  readonly dataDir: string;
  readonly databaseUrl: string | null;
  readonly redisUrl: string | null;
  readonly smtpUrl: string | null;
  readonly mailFrom: string;
  readonly internalKey: string | null;
  readonly secret: string;
  readonly publicUrl: string;
  readonly admin: { readonly email: string | null; readonly password: string | null };
  /** Which peers may name the client address through X-Forwarded-For (core/client-address.ts). */
  readonly trustProxy: TrustProxy;
  /** Browser origins besides the public URL's that may open the WebSocket (`CHORUS_ALLOWED_ORIGINS`). */
  readonly allowedOrigins: readonly string[];
  /** Client addresses (CIDRs) that may read GET /metrics without a key (`METRICS_ALLOW`); empty: the key only. */
  readonly metricsAllow: readonly string[];
  /** Abuse limits (docs/security.md), each tunable through its `LIMIT_*` variable. */
  readonly limits: AbuseLimits;
  readonly bodyLimitBytes: number;
  readonly logLevel: string;
  readonly jwtTtlSeconds: number;
  readonly sessionTtlSeconds: number;
  /** `SHUTDOWN_TIMEOUT_MS`: the bound on draining at SIGTERM before the process exits anyway. */
  readonly shutdownTimeoutMs: number;
  /** Outbound alert delivery (issue 17, docs/alerts.md). */
  readonly alerts: AlertDeliveryConfig;
  /**
   * `OUTBOUND_ALLOW_HOSTS` (joined with its older name `WEBHOOK_ALLOW_HOSTS`): host names, addresses
   * or CIDRs that webhook deliveries and the photo fetcher may reach although private (default none).
   */
  readonly outboundAllowHosts: string;
  /** Prefix for every key-value key, so several hubs (or test runs) can share one Redis. */
  readonly kvPrefix: string;
  /** S3-compatible endpoint (`S3_URL`); null keeps audio objects as files under the data dir. */
  readonly s3Url: string | null;
  readonly s3Bucket: string;
  readonly s3Region: string;
  /** From `S3_ACCESS_KEY_ID` / `S3_SECRET_ACCESS_KEY`, else the user:pass of `S3_URL`. */
  readonly s3AccessKeyId: string | null;
  readonly s3SecretAccessKey: string | null;
  /** Embedded broker listeners (`MQTT_PORT`, `MQTT_WS_PORT` at /mqtt, bound to `MQTT_HOST`). */
  readonly mqttPort: number;
  readonly mqttWsPort: number;
  readonly mqttHost: string;
  /**
   * Where satellites and browsers reach the embedded broker's WebSocket listener
   * (`MQTT_WS_PUBLIC_URL`, e.g. wss://hub.example.org/mqtt behind the TLS proxy); null: on
   * MQTT_WS_PORT at the advertised host.
   */
  readonly mqttWsPublicUrl: string | null;
  /** External Mosquitto 2 with dynamic security (`MQTT_URL`); null runs the embedded broker. */
  readonly mqttUrl: string | null;
  readonly mqttAdminUsername: string | null;
  readonly mqttAdminPassword: string | null;
  /**
   * Largest MQTT packet a logged-in satellite may send to the embedded broker
   * (`MQTT_MAX_PACKET_BYTES`, default 512 KiB; not below the largest legal audio chunk).
   */
  readonly mqttMaxPacketBytes: number;
  /** This dispatcher's name among the hub's dispatchers on one external broker (its ingest session's client id). */
  readonly dispatcherId: string | null;
  /** Largest mobile app package an upload may carry (`MOBILE_MAX_BYTES`, default 200 MB). */
  readonly mobileMaxBytes: number;
  /**
   * `CHORUS_MIGRATE` (on by default): off, a process does not migrate at start; it checks that the
   * schema is current and refuses to start when it is behind (`chorus migrate` runs first).
   */
  readonly migrate: boolean;
  /** Job queue: runs per job before it fails for good (`QUEUE_ATTEMPTS`, default 3). */
  readonly queueAttempts: number;
  /** Job queue: retry n waits this · 2^(n-1) ms (`QUEUE_BACKOFF_MS`, default 1000). */
  readonly queueBackoffMs: number;
  /** Job queue on Redis: a dead worker's job is handed over once its lock of this many ms lapses (`QUEUE_LOCK_MS`, default 30000). */
  readonly queueLockMs: number;
  /**
   * A model window longer than a chunk waits this long for the chunk after it, from the chunk's
   * arrival by the hub's clock, before it is padded with silence (`INFERENCE_WINDOW_WAIT_MS`, default 30000).
   */
  readonly inferenceWindowWaitMs: number;
  /** A waiting window looks again this often (`INFERENCE_WINDOW_RECHECK_MS`, default 3000: one chunk). */
  readonly inferenceWindowRecheckMs: number;
  /**
   * Inference jobs a worker process runs side by side (`INFERENCE_JOBS_IN_FLIGHT`, default 8): the
   * next chunks are read and the last recorded while the model runs, and chunks waiting for the
   * model together run as one batch. 1: one job at a time.
   */
  readonly inferenceJobsInFlight: number;
  /** Species photos (issue 20): providers, their base URLs and the caps on what they send. */
  readonly images: ImagesConfig;
  /** Weather and eBird services behind the statistics (issue 19). */
  readonly statsSources: StatsSourcesConfig;
}

export interface AbuseLimits {
  /** Self-registrations per client address. */
  readonly register: RateRule;
  /** Password-reset mails per account (the per-address limit is the login-attempt ledger's). */
  readonly resetMail: RateRule;
  /** Invite acceptances per person. */
  readonly inviteAccept: RateRule;
  /** Refused share links and invite tokens per client address. */
  readonly tokenGuesses: RateRule;
  /** API keys created per person. */
  readonly apiKeys: RateRule;
  /** Refused MQTT logins per client id and client address on the embedded broker. */
  readonly mqttFailures: RateRule;
}

export class ConfigError extends Error {}

type Env = Record<string, string | undefined>;

function readInt(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(`${name} must be a whole number, got "${raw}"`);
  const n = Number(raw);
  if (n < min || n > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${n}`);
  return n;
}

function readUrl(env: Env, name: string, protocols: string[]): string | null {
  const raw = env[name];
  if (!raw) return null;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`${name} is not a valid URL: "${redact(raw)}"`);
  }
  if (!protocols.includes(url.protocol)) {
    throw new ConfigError(`${name} must use ${protocols.join(' or ')}, got "${url.protocol}"`);
  }
  return raw;
}

function redact(raw: string): string {
  return raw.replace(/\/\/([^:@/]+):([^@/]+)@/, '//$1:***@');
}

function readOneOf<T extends string>(env: Env, name: string, options: readonly T[], fallback: T): T {
  const raw = env[name];
  if (!raw) return fallback;
  if (!options.includes(raw as T)) throw new ConfigError(`${name} must be one of ${options.join(', ')}, got "${raw}"`);
  return raw as T;
}

const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 };

/** A limit written as `COUNT/WINDOW`, the window in s, m, h or d: `10/1h`, `50/15m`. */
function readRate(env: Env, name: string, fallback: string): RateRule {
  const raw = env[name] || fallback;
  const m = /^(\d+)\/(\d+)([smhd])$/.exec(raw.trim());
  const points = m ? Number(m[1]) : 0;
  const durationSec = m ? Number(m[2]) * UNIT_SECONDS[m[3]] : 0;
  if (!m || points < 1 || durationSec < 1 || durationSec > 30 * 86_400) {
    throw new ConfigError(`${name} must be COUNT/WINDOW with a window in s, m, h or d up to 30d (e.g. ${fallback}), got "${raw}"`);
  }
  return Object.freeze({ points, durationSec });
}

function readLimits(env: Env): AbuseLimits {
  return Object.freeze({
    register: readRate(env, 'LIMIT_REGISTER', '10/1h'),
    resetMail: readRate(env, 'LIMIT_RESET_MAIL', '10/1d'),
    inviteAccept: readRate(env, 'LIMIT_INVITE_ACCEPT', '20/1h'),
    tokenGuesses: readRate(env, 'LIMIT_TOKEN_GUESSES', '50/15m'),
    apiKeys: readRate(env, 'LIMIT_API_KEYS', '30/1h'),
    mqttFailures: readRate(env, 'LIMIT_MQTT_FAILURES', '20/10m'),
  });
}

/** Browser origins (scheme://host[:port]) for the WebSocket check, beside the public URL's. */
function readOrigins(env: Env, name: string): readonly string[] {
  const raw = env[name];
  if (!raw) return [];
  return Object.freeze(
    raw
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean)
      .map((item) => {
        let url: URL | null = null;
        try {
          url = new URL(item);
        } catch {
          // reported below
        }
        if (!url || !['http:', 'https:'].includes(url.protocol) || url.origin !== item.replace(/\/$/, '')) {
          throw new ConfigError(`${name} takes origins like https://app.example.org (no path), got "${item}"`);
        }
        return url.origin;
      }),
  );
}

/** S3 settings: credentials from their own variables win over the user:pass of the URL. */
function readS3(env: Env) {
  const s3Url = readUrl(env, 'S3_URL', ['http:', 'https:']);
  const fromUrl = s3Url ? new URL(s3Url) : null;
  const s3AccessKeyId = env.S3_ACCESS_KEY_ID || (fromUrl?.username ? decodeURIComponent(fromUrl.username) : null);
  const s3SecretAccessKey = env.S3_SECRET_ACCESS_KEY || (fromUrl?.password ? decodeURIComponent(fromUrl.password) : null);
  if ((s3AccessKeyId === null) !== (s3SecretAccessKey === null)) {
    throw new ConfigError(
      'S3 credentials need both an access key id and a secret (S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY, or user:pass in S3_URL)',
    );
  }
  const s3Bucket = env.S3_BUCKET || 'chorus';
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(s3Bucket)) {
    throw new ConfigError(`S3_BUCKET must be 3-63 lowercase letters, digits, dots or hyphens, got "${s3Bucket}"`);
  }
  return { s3Url, s3Bucket, s3Region: env.S3_REGION || 'us-east-1', s3AccessKeyId, s3SecretAccessKey };
}

/**
 * MQTT broker: embedded listeners, or an external Mosquitto with its dynsec admin login. Only the
 * processes that dial the broker (modes full and dispatcher) need that login; api and worker
 * processes send their broker commands over the bus, so the superuser password stays off them.
 */
function readMqtt(env: Env, mode: HubMode) {
  const mqttUrl = readUrl(env, 'MQTT_URL', ['mqtt:', 'mqtts:', 'ws:', 'wss:']);
  const dials = mode === 'full' || mode === 'dispatcher';
  const mqttAdminUsername = (dials && env.MQTT_ADMIN_USERNAME) || null;
  const mqttAdminPassword = (dials && env.MQTT_ADMIN_PASSWORD) || null;
  if (dials && mqttUrl !== null && (mqttAdminUsername === null || mqttAdminPassword === null)) {
    throw new ConfigError(`MQTT_URL needs MQTT_ADMIN_USERNAME and MQTT_ADMIN_PASSWORD (the dynamic-security admin) in CHORUS_MODE=${mode}`);
  }
  const mqttPort = readInt(env, 'MQTT_PORT', 1884, 0, 65535);
  const mqttWsPort = readInt(env, 'MQTT_WS_PORT', 8084, 0, 65535);
  if (mqttPort !== 0 && mqttPort === mqttWsPort) throw new ConfigError(`MQTT_PORT and MQTT_WS_PORT must differ, both are ${mqttPort}`);
  const mqttHost = env.MQTT_HOST || '0.0.0.0';
  if (/[\s/]/.test(mqttHost)) throw new ConfigError(`MQTT_HOST must be a host name or address, got "${mqttHost}"`);
  const mqttWsPublicUrl = readUrl(env, 'MQTT_WS_PUBLIC_URL', ['ws:', 'wss:']);
  const mqttMaxPacketBytes = readInt(env, 'MQTT_MAX_PACKET_BYTES', MQTT_MAX_PACKET_BYTES, AUDIO_PACKET_MAX_BYTES, 256 * 1024 * 1024);
  const dispatcherId = env.CHORUS_DISPATCHER_ID || null;
  if (dispatcherId !== null && !/^[0-9A-Za-z_-]{1,32}$/.test(dispatcherId)) {
    throw new ConfigError(`CHORUS_DISPATCHER_ID must be 1 to 32 letters, digits, _ or -, got "${dispatcherId}"`);
  }
  return {
    mqttPort,
    mqttWsPort,
    mqttHost,
    mqttWsPublicUrl,
    mqttUrl,
    mqttAdminUsername,
    mqttAdminPassword,
    mqttMaxPacketBytes,
    dispatcherId,
  };
}

/**
 * The secret signs JWTs, share links and encrypts MFA secrets. When the operator does not
 * provide one we generate it once and keep it in the data dir, so restarts keep sessions valid.
 */
function resolveSecret(env: Env, dataDir: string): string {
  if (env.CHORUS_SECRET) {
    if (env.CHORUS_SECRET.length < 32) throw new ConfigError('CHORUS_SECRET must be at least 32 characters');
    return env.CHORUS_SECRET;
  }
  const file = path.join(dataDir, 'secret');
  if (fs.existsSync(file)) return fs.readFileSync(file, 'utf8').trim();
  fs.mkdirSync(dataDir, { recursive: true });
  const secret = crypto.randomBytes(32).toString('hex');
  fs.writeFileSync(file, secret + '\n', { mode: 0o600 });
  return secret;
}

export interface AlertDeliveryConfig {
  /** `WEBHOOK_TIMEOUT_MS`: one attempt, connect to last byte. */
  readonly timeoutMs: number;
  /** `WEBHOOK_MAX_ATTEMPTS`: attempts before a delivery is failed for good. */
  readonly maxAttempts: number;
  /** `WEBHOOK_BACKOFF_MS`: retry n waits this · 2^(n-1), or the receiver's Retry-After when longer. */
  readonly backoffMs: number;
  /** `TELEGRAM_API_URL`: the Bot API base (tests point it at a local server). */
  readonly telegramApiUrl: string;
}

function readOutboundAllowHosts(env: Env): string {
  const joined = [env.OUTBOUND_ALLOW_HOSTS, env.WEBHOOK_ALLOW_HOSTS].filter((v) => v && v.trim() !== '').join(',');
  try {
    parseAllowList(joined);
  } catch (err) {
    throw new ConfigError((err as Error).message);
  }
  return joined;
}

function readAlerts(env: Env): AlertDeliveryConfig {
  return Object.freeze({
    timeoutMs: readInt(env, 'WEBHOOK_TIMEOUT_MS', 10_000, 50, 120_000),
    maxAttempts: readInt(env, 'WEBHOOK_MAX_ATTEMPTS', 5, 1, 20),
    backoffMs: readInt(env, 'WEBHOOK_BACKOFF_MS', 2_000, 1, 3_600_000),
    telegramApiUrl: (readUrl(env, 'TELEGRAM_API_URL', ['http:', 'https:']) ?? 'https://api.telegram.org').replace(/\/$/, ''),
  });
}

export interface StatsSourcesConfig {
  /** `WEATHER_API_URL`: Open-Meteo's forecast API base (`/v1/forecast`). */
  readonly weatherForecastUrl: string;
  /** `WEATHER_ARCHIVE_URL`, else `WEATHER_API_URL` when set, else Open-Meteo's archive host (`/v1/archive`). */
  readonly weatherArchiveUrl: string;
  /** `EBIRD_API_URL`: eBird API 2.0 base. */
  readonly ebirdApiUrl: string;
  /** `EBIRD_API_KEY`; null: expected-species answers that it is unavailable. */
  readonly ebirdApiKey: string | null;
  /** `STATS_SOURCE_TIMEOUT_MS`: one request to either service. */
  readonly timeoutMs: number;
}

function readStatsSources(env: Env): StatsSourcesConfig {
  const base = (name: string) => readUrl(env, name, ['http:', 'https:'])?.replace(/\/$/, '') ?? null;
  const forecast = base('WEATHER_API_URL');
  return Object.freeze({
    weatherForecastUrl: forecast ?? 'https://api.open-meteo.com',
    // One local server plays both in tests: a set WEATHER_API_URL serves the archive too.
    weatherArchiveUrl: base('WEATHER_ARCHIVE_URL') ?? forecast ?? 'https://archive-api.open-meteo.com',
    ebirdApiUrl: base('EBIRD_API_URL') ?? 'https://api.ebird.org',
    ebirdApiKey: env.EBIRD_API_KEY || null,
    timeoutMs: readInt(env, 'STATS_SOURCE_TIMEOUT_MS', 10_000, 50, 120_000),
  });
}

export function loadConfig(env: Env = process.env): Config {
  const dataDir = path.resolve(env.CHORUS_DATA_DIR || './data');
  const port = readInt(env, 'PORT', 8080, 0, 65535);
  const host = env.HOST || '0.0.0.0';
  const publicUrl = readUrl(env, 'CHORUS_PUBLIC_URL', ['http:', 'https:']) ?? `http://localhost:${port}`;
  const adminEmail = env.CHORUS_ADMIN_EMAIL || null;
  const adminPassword = env.CHORUS_ADMIN_PASSWORD || null;
  if ((adminEmail === null) !== (adminPassword === null)) {
    throw new ConfigError('CHORUS_ADMIN_EMAIL and CHORUS_ADMIN_PASSWORD must be set together');
  }
  if (adminPassword !== null && adminPassword.length < 10) {
    throw new ConfigError('CHORUS_ADMIN_PASSWORD must be at least 10 characters');
  }
  const internalKey = env.CHORUS_INTERNAL_KEY || null;
  if (internalKey !== null && internalKey.length < 32) {
    throw new ConfigError('CHORUS_INTERNAL_KEY must be at least 32 characters');
  }
  const trustProxy = parseTrustProxy(env.TRUST_PROXY);
  if (typeof trustProxy === 'string') throw new ConfigError(`TRUST_PROXY: ${trustProxy}`);
  const metricsAllow = parseAddressList(env.METRICS_ALLOW);
  if (typeof metricsAllow === 'string') throw new ConfigError(`METRICS_ALLOW: ${metricsAllow}`);
  const mode = readOneOf(env, 'CHORUS_MODE', ['full', 'dispatcher', 'api', 'worker'] as const, 'full');
  if (mode === 'api' || mode === 'dispatcher' || mode === 'worker') {
    // Split mode (DESIGN.md §3): api and dispatcher talk over Redis pub/sub and share one database.
    const missing = [!env.REDIS_URL && 'REDIS_URL', !env.DATABASE_URL && 'DATABASE_URL'].filter(Boolean);
    if (missing.length) {
      throw new ConfigError(
        `CHORUS_MODE=${mode} is split mode and needs ${missing.join(' and ')}: api and dispatcher talk over Redis and share one PostgreSQL database (use CHORUS_MODE=full for a single process)`,
      );
    }
  }
  return Object.freeze({
    port,
    host,
    mode,
    dataDir,
    databaseUrl: readUrl(env, 'DATABASE_URL', ['postgres:', 'postgresql:']),
    redisUrl: readUrl(env, 'REDIS_URL', ['redis:', 'rediss:']),
    smtpUrl: readUrl(env, 'SMTP_URL', ['smtp:', 'smtps:']),
    mailFrom: env.MAIL_FROM || 'Chorus <chorus@localhost>',
    internalKey,
    secret: resolveSecret(env, dataDir),
    publicUrl: publicUrl.replace(/\/$/, ''),
    admin: Object.freeze({ email: adminEmail, password: adminPassword }),
    trustProxy,
    allowedOrigins: readOrigins(env, 'CHORUS_ALLOWED_ORIGINS'),
    metricsAllow,
    limits: readLimits(env),
    bodyLimitBytes: readInt(env, 'BODY_LIMIT_BYTES', 1_048_576, 1024, 512 * 1024 * 1024),
    logLevel: readOneOf(env, 'LOG_LEVEL', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const, 'info'),
    jwtTtlSeconds: readInt(env, 'JWT_TTL_SECONDS', 7 * 24 * 3600, 60, 365 * 24 * 3600),
    sessionTtlSeconds: readInt(env, 'SESSION_TTL_SECONDS', 30 * 24 * 3600, 60, 365 * 24 * 3600),
    kvPrefix: env.CHORUS_KV_PREFIX || 'chorus:',
    alerts: readAlerts(env),
    outboundAllowHosts: readOutboundAllowHosts(env),
    shutdownTimeoutMs: readInt(env, 'SHUTDOWN_TIMEOUT_MS', 20_000, 1000, 600_000),
    mobileMaxBytes: readInt(env, 'MOBILE_MAX_BYTES', 200 * 1024 * 1024, 1024, 4 * 1024 * 1024 * 1024),
    migrate: readOneOf(env, 'CHORUS_MIGRATE', ['on', 'off'] as const, 'on') === 'on',
    queueAttempts: readInt(env, 'QUEUE_ATTEMPTS', 3, 1, 50),
    queueBackoffMs: readInt(env, 'QUEUE_BACKOFF_MS', 1000, 1, 3_600_000),
    queueLockMs: readInt(env, 'QUEUE_LOCK_MS', 30_000, 1000, 3_600_000),
    inferenceWindowWaitMs: readInt(env, 'INFERENCE_WINDOW_WAIT_MS', 30_000, 0, 3_600_000),
    inferenceWindowRecheckMs: readInt(env, 'INFERENCE_WINDOW_RECHECK_MS', 3000, 10, 600_000),
    inferenceJobsInFlight: readInt(env, 'INFERENCE_JOBS_IN_FLIGHT', 8, 1, 64),
    statsSources: readStatsSources(env),
    ...readS3(env),
    ...readMqtt(env, mode),
    images: readImages(env),
  });
}

export interface ImagesConfig {
  /** `IMAGES_PROVIDERS`: providers asked in this order (wikimedia, inaturalist), or `off` for an offline hub. */
  readonly providers: ReadonlyArray<'wikimedia' | 'inaturalist'>;
  /** `IMAGES_WIKIMEDIA_URL`: the Commons base (tests point it at a local server). */
  readonly wikimediaUrl: string;
  /** `IMAGES_INATURALIST_URL`: the iNaturalist API base. */
  readonly inaturalistUrl: string;
  /** `IMAGES_MAX_BYTES`: largest image downloaded (default 10 MB). */
  readonly maxBytes: number;
  /** `IMAGES_MAX_PIXELS`: largest image decoded, width × height (default 40 megapixels). */
  readonly maxPixels: number;
  /** `IMAGES_PROVIDER_INTERVAL_MS`: least time between two requests to one provider (default 1000). */
  readonly intervalMs: number;
  /** `IMAGES_PER_SPECIES`: photos kept per species (default 3). */
  readonly perSpecies: number;
}

function readImages(env: Env): ImagesConfig {
  const raw = (env.IMAGES_PROVIDERS ?? 'wikimedia,inaturalist').trim().toLowerCase();
  const names = raw === 'off' || raw === '' ? [] : raw.split(',').map((s) => s.trim());
  for (const n of names) {
    if (n !== 'wikimedia' && n !== 'inaturalist')
      throw new ConfigError(`IMAGES_PROVIDERS: unknown provider "${n}" (wikimedia, inaturalist, or off)`);
  }
  return Object.freeze({
    providers: [...new Set(names as Array<'wikimedia' | 'inaturalist'>)],
    wikimediaUrl: (readUrl(env, 'IMAGES_WIKIMEDIA_URL', ['http:', 'https:']) ?? 'https://commons.wikimedia.org').replace(/\/$/, ''),
    inaturalistUrl: (readUrl(env, 'IMAGES_INATURALIST_URL', ['http:', 'https:']) ?? 'https://api.inaturalist.org').replace(/\/$/, ''),
    maxBytes: readInt(env, 'IMAGES_MAX_BYTES', 10 * 1024 * 1024, 1024, 100 * 1024 * 1024),
    maxPixels: readInt(env, 'IMAGES_MAX_PIXELS', 40_000_000, 10_000, 500_000_000),
    intervalMs: readInt(env, 'IMAGES_PROVIDER_INTERVAL_MS', 1000, 0, 600_000),
    perSpecies: readInt(env, 'IMAGES_PER_SPECIES', 3, 1, 10),
  });
}
