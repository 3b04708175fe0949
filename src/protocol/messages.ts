/**
 * Satellite-to-hub message bodies (satellite protocol §2), checked field by field so a refusal
 * names what was wrong. Every check returns a value or a reason; nothing here throws.
 */

export type Checked<T> = { ok: true; value: T } | { ok: false; reason: string };

const ok = <T>(value: T): Checked<T> => ({ ok: true, value });
const no = <T = never>(reason: string): Checked<T> => ({ ok: false, reason });

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const ISO_8601 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/;
export const CHUNK_MIN_MS = 2_700;
export const CHUNK_MAX_MS = 3_300;
export const CHUNK_SAMPLE_RATE = 48_000;

export const isUuid = (v: unknown): v is string => typeof v === 'string' && UUID.test(v);
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isFiniteNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const isInt = (v: unknown): v is number => Number.isSafeInteger(v);

export function parseTime(v: unknown): Date | null {
  if (typeof v !== 'string' || !ISO_8601.test(v)) return null;
  const d = new Date(v);
  return Number.isNaN(d.getTime()) ? null : d;
}

const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

/** Strict base64: standard alphabet, padded (RFC 4648 §4), zero pad bits; anything else is refused. */
export function decodeBase64(s: string): Buffer | null {
  if (s.length === 0 || s.length % 4 !== 0) return null;
  // Node's decoder skips characters it does not know and stops at a '=': either way it yields
  // fewer bytes than the length promises, so the count proves the alphabet, except for the URL-safe
  // '-' and '_' it also takes. Cheaper than re-encoding and comparing (the ingest hot path).
  const pad = s.endsWith('==') ? 2 : s.endsWith('=') ? 1 : 0;
  const buf = Buffer.from(s, 'base64');
  if (buf.length !== (s.length / 4) * 3 - pad || s.includes('-') || s.includes('_')) return null;
  if (pad > 0 && (B64.indexOf(s[s.length - pad - 1]) & (pad === 2 ? 0x0f : 0x03)) !== 0) return null;
  return buf;
}

/** JSON object bodies only; anything else is a refusal with a reason. */
export function parseBody(payload: Buffer): Checked<Record<string, unknown>> {
  let body: unknown;
  try {
    body = JSON.parse(payload.toString('utf8'));
  } catch {
    return no('body is not valid JSON');
  }
  return isObject(body) ? ok(body) : no('body must be a JSON object');
}

const AUDIO_KEY = Buffer.from('"audio":"');

/**
 * parseBody for an audio message, without decoding its 384 KB of base64 as UTF-8 and copying it
 * through JSON.parse (the largest cost left per chunk). Applies when the body ends with the member
 * `,"audio":"…"}` as JSON.stringify writes it, the value free of quotes and backslashes: in a valid
 * document those bytes can only be the top-level object's last member (a quote followed by `audio`
 * always opens a string, and the last `}` closes the top level), and the rest with that value
 * emptied is valid exactly when the whole is. The value is taken as Latin-1: equal to JSON.parse's
 * for base64 text; anything else in it (a control character, non-ASCII) fails the base64 check,
 * and the caller asks parseBody for the exact reason. Any other shape takes parseBody.
 */
export function parseAudioBody(payload: Buffer): Checked<Record<string, unknown>> {
  const n = payload.length;
  if (n < 16 || payload[n - 1] !== 0x7d || payload[n - 2] !== 0x22) return parseBody(payload);
  const q = payload.lastIndexOf(0x22, n - 3); // the value's opening quote
  const keyAt = q - AUDIO_KEY.length + 1;
  if (keyAt < 1 || (payload[keyAt - 1] !== 0x2c && payload[keyAt - 1] !== 0x7b)) return parseBody(payload);
  if (payload.compare(AUDIO_KEY, 0, AUDIO_KEY.length, keyAt, q + 1) !== 0) return parseBody(payload);
  const backslash = payload.indexOf(0x5c, q + 1);
  if (backslash !== -1 && backslash < n - 2) return parseBody(payload);
  let body: unknown;
  try {
    body = JSON.parse(payload.toString('utf8', 0, q + 1) + '"}');
  } catch {
    return parseBody(payload);
  }
  if (!isObject(body) || body.audio !== '') return parseBody(payload);
  body.audio = payload.toString('latin1', q + 1, n - 2);
  return ok(body);
}

/** The chunkId to echo in an error ack, when the body carries something that can be one. */
export function chunkIdOf(body: Record<string, unknown> | null): string | undefined {
  const id = body?.chunkId;
  return typeof id === 'string' && id.length > 0 && id.length <= 100 ? id : undefined;
}

/** The topic names the publisher; the body must say the same (spec: the ingester checks both). */
export function checkIdentity(body: Record<string, unknown>, topic: { tenantId: string; satelliteId: string }): string | null {
  if (typeof body.satelliteId !== 'string' || typeof body.tenantId !== 'string') return 'body must name satelliteId and tenantId';
  if (body.satelliteId !== topic.satelliteId || body.tenantId !== topic.tenantId)
    return 'satelliteId and tenantId of the body do not match the topic';
  return null;
}

export interface AudioMessage {
  chunkId: string;
  recordedAt: Date;
  durationMs: number;
  sampleRate: number;
  latitude: number | null;
  longitude: number | null;
  audio: Buffer;
}

export function checkAudio(b: Record<string, unknown>): Checked<AudioMessage> {
  if (!isUuid(b.chunkId)) return no('chunkId must be a UUID');
  const recordedAt = parseTime(b.recordedAt);
  if (!recordedAt) return no('recordedAt must be an ISO 8601 timestamp');
  if (!isInt(b.durationMs) || b.durationMs < CHUNK_MIN_MS || b.durationMs > CHUNK_MAX_MS) {
    return no(`durationMs must be an integer from ${CHUNK_MIN_MS} to ${CHUNK_MAX_MS} (chunks are 3 seconds)`);
  }
  if (b.sampleRate !== CHUNK_SAMPLE_RATE) return no(`sampleRate must be ${CHUNK_SAMPLE_RATE}`);
  for (const [key, max] of [
    ['latitude', 90],
    ['longitude', 180],
  ] as const) {
    const v = b[key];
    if (v !== undefined && v !== null && (!isFiniteNumber(v) || Math.abs(v) > max))
      return no(`${key} must be a number from -${max} to ${max}`);
  }
  if (typeof b.audio !== 'string') return no('audio must be a base64 string');
  const audio = decodeBase64(b.audio);
  if (!audio) return no('audio is not valid base64');
  return ok({
    chunkId: b.chunkId,
    recordedAt,
    durationMs: b.durationMs,
    sampleRate: b.sampleRate,
    latitude: (b.latitude as number | null | undefined) ?? null,
    longitude: (b.longitude as number | null | undefined) ?? null,
    audio,
  });
}

export const SATELLITE_STATES = ['recording', 'paused', 'scheduled_off', 'error'] as const;
export const STREAMS = ['satellite', 'mobile'] as const;

export interface HeartbeatMessage {
  uptimeSeconds: number | null;
  state: string | null;
  noiseFloorRms: number | null;
  version: string | null;
  stream: string | null;
  filterStats: Record<string, number> | null;
  outboxStats: Record<string, number> | null;
}

function countersOf(v: unknown, key: string): Checked<Record<string, number> | null> {
  if (v === undefined || v === null) return ok(null);
  if (!isObject(v)) return no(`${key} must be an object of integers`);
  const entries = Object.entries(v);
  if (entries.length > 50 || entries.some(([k, n]) => k.length > 64 || !isInt(n))) return no(`${key} must be an object of integers`);
  return ok(v as Record<string, number>);
}

/** Fields a heartbeat leaves out are stored as absent (old builds send no stream). */
export function checkHeartbeat(b: Record<string, unknown>): Checked<HeartbeatMessage> {
  if (
    b.uptimeSeconds !== undefined &&
    b.uptimeSeconds !== null &&
    (!isInt(b.uptimeSeconds) || b.uptimeSeconds < 0 || b.uptimeSeconds > 2_147_483_647)
  ) {
    return no('uptimeSeconds must be a non-negative integer');
  }
  if (b.state !== undefined && b.state !== null && !(SATELLITE_STATES as readonly unknown[]).includes(b.state))
    return no(`state must be one of ${SATELLITE_STATES.join(', ')}`);
  if (b.noiseFloorRms !== undefined && b.noiseFloorRms !== null && !isFiniteNumber(b.noiseFloorRms))
    return no('noiseFloorRms must be a number');
  if (b.version !== undefined && b.version !== null && (typeof b.version !== 'string' || b.version.length > 64))
    return no('version must be a string of at most 64 characters');
  if (b.stream !== undefined && b.stream !== null && !(STREAMS as readonly unknown[]).includes(b.stream))
    return no(`stream must be one of ${STREAMS.join(', ')}`);
  const filterStats = countersOf(b.filterStats, 'filterStats');
  if (!filterStats.ok) return filterStats;
  const outboxStats = countersOf(b.outboxStats, 'outboxStats');
  if (!outboxStats.ok) return outboxStats;
  return ok({
    uptimeSeconds: (b.uptimeSeconds as number | undefined) ?? null,
    state: (b.state as string | undefined) ?? null,
    noiseFloorRms: (b.noiseFloorRms as number | undefined) ?? null,
    version: (b.version as string | undefined) ?? null,
    stream: (b.stream as string | undefined) ?? null,
    filterStats: filterStats.value,
    outboxStats: outboxStats.value,
  });
}

export interface TelemetryMessage {
  at: Date;
  batteryLevel: number | null;
  storageFreeBytes: number | null;
  cpuTemp: number | null;
  networkLatencyMs: number | null;
  packetLossPct: number | null;
  uptimeSeconds: number | null;
  /** GPS fix (phones); both or neither. */
  latitude: number | null;
  longitude: number | null;
}

/** A telemetry sample; `timestamp` is when the satellite took it (the hub's time when absent). */
export function checkTelemetry(b: Record<string, unknown>, now: Date): Checked<TelemetryMessage> {
  const numbers = ['batteryLevel', 'cpuTemp', 'networkLatencyMs', 'packetLossPct'] as const;
  for (const key of numbers) {
    const v = b[key];
    if (v !== undefined && v !== null && !isFiniteNumber(v)) return no(`${key} must be a number or null`);
  }
  for (const key of ['storageFreeBytes', 'uptimeSeconds'] as const) {
    const v = b[key];
    if (v !== undefined && v !== null && (!isInt(v) || v < 0)) return no(`${key} must be a non-negative integer`);
  }
  if (isInt(b.uptimeSeconds) && b.uptimeSeconds > 2_147_483_647) return no('uptimeSeconds is too large');
  for (const [key, max] of [
    ['latitude', 90],
    ['longitude', 180],
  ] as const) {
    const v = b[key];
    if (v !== undefined && v !== null && (!isFiniteNumber(v) || Math.abs(v) > max))
      return no(`${key} must be a number from -${max} to ${max}`);
  }
  // Half a fix is no position: kept only as a pair.
  const fix = isFiniteNumber(b.latitude) && isFiniteNumber(b.longitude);
  let at = now;
  if (b.timestamp !== undefined && b.timestamp !== null) {
    const t = parseTime(b.timestamp);
    if (!t) return no('timestamp must be an ISO 8601 timestamp');
    at = t;
  }
  const n = (k: string) => (b[k] as number | null | undefined) ?? null;
  return ok({
    at,
    batteryLevel: n('batteryLevel'),
    storageFreeBytes: n('storageFreeBytes'),
    cpuTemp: n('cpuTemp'),
    networkLatencyMs: n('networkLatencyMs'),
    packetLossPct: n('packetLossPct'),
    uptimeSeconds: n('uptimeSeconds'),
    latitude: fix ? (b.latitude as number) : null,
    longitude: fix ? (b.longitude as number) : null,
  });
}

export function checkConfigRequest(b: Record<string, unknown>): Checked<{ overrides: Record<string, unknown> }> {
  if (b.overrides === undefined || b.overrides === null) return ok({ overrides: {} });
  if (!isObject(b.overrides)) return no('overrides must be an object');
  return ok({ overrides: b.overrides });
}

export const LOG_MAX_LINES = 10_000;

/** The journal text (`text`, newline-separated, or `lines`), for the request `requestId` names when given. */
export function checkLogResponse(b: Record<string, unknown>): Checked<{ requestId: string | null; lines: string[] }> {
  if (b.requestId !== undefined && b.requestId !== null && !isUuid(b.requestId)) return no('requestId must be a UUID');
  let lines: string[];
  if (typeof b.text === 'string') lines = b.text.split(/\r?\n/);
  else if (Array.isArray(b.lines) && b.lines.every((l) => typeof l === 'string')) lines = b.lines as string[];
  else return no('text must be a string (or lines an array of strings)');
  // A trailing newline is not an empty last line of the journal.
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  return ok({ requestId: (b.requestId as string | undefined)?.toLowerCase() ?? null, lines: lines.slice(-LOG_MAX_LINES) });
}
