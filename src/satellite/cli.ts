/**
 * `chorus satellite`: runs the reference satellite against a hub (issue 4 "Decisions fixed
 * here"). Registers over HTTP (or reuses saved credentials), connects over MQTT (TCP, or
 * WebSocket with --ws), records from the source into the outbox and uploads. With --chunks N it
 * exits 0 once N chunks are acked `stored`, and non-zero with the reason otherwise (an error
 * ack, refused credentials, an exhausted source, the timeout). Without it, it runs until
 * SIGINT/SIGTERM, or, with a file or folder, until the last chunk is acked (then exits 0).
 */
import type { SoundClassifier } from './sound-filter.ts';
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Outbox, writeFileDurable } from './outbox.ts';
import { openSource } from './sources.ts';
import { Satellite, deviceIdOf, type SatelliteCredentials } from './client.ts';
import { lockSatelliteDir } from './dir-lock.ts';

export const SATELLITE_USAGE = `chorus satellite --hub URL --token BEARER --tenant ID [options]

  Runs the reference satellite: registers (or reuses saved credentials), connects to the hub's
  MQTT broker, records 3-second chunks and uploads them from a durable outbox.

  --hub URL             the hub (e.g. http://localhost:8080)
  --token BEARER        a JWT or API key allowed to register satellites in the team
  --tenant ID           the team
  --name NAME           satellite name (default: Reference satellite)
  --source SRC          where the audio comes from (default synthetic):
                          synthetic          the built-in soundscape of five synthetic birds
                          alsa:DEVICE        a sound card via arecord: alsa:default, alsa:hw:1,0,
                                             alsa:plughw:1,0 (ALSA converts; list: arecord -L)
                          rtsp://… http(s)://…   a stream (IP camera, Icecast), via ffmpeg
                          FILE               any audio file ffmpeg reads (WAV, FLAC, MP3, Ogg …)
                          FOLDER             its audio files in name order
                        Everything but a 48 kHz mono 16-bit WAV goes through ffmpeg and is
                        resampled to 48 kHz mono. Sound cards and streams are restarted with
                        back-off (1 s doubling to 60 s) when the process dies; the satellite
                        reports state "error" to the hub meanwhile.
  --start TIME          files and folders: when the recording began (ISO 8601, e.g.
                        2024-05-01T05:30:00+02:00); chunks are stamped from it, 3 s each.
                        Without it a file named as field recorders do (20240501_053000.WAV,
                        UTC) starts at the time in its name; others are stamped as they are read.
                        A file or folder source exits 0 once its last chunk is acked.
  --chunks N            exit 0 once N chunks are acked stored (non-zero otherwise)
  --credentials FILE    saved credentials (default <data>/credentials.json, mode 0600)
  --data DIR            outbox, credentials and state (default ./chorus-satellite)
  --ws                  connect over WebSocket instead of TCP
  --broker URL          dial this broker address instead of the registration's
  --interval-ms MS      time between chunks (default 3000, real time)
  --classifier MODEL    run a sound classifier before upload: builtin, or an ONNX model in BirdNET's
                        contract (labels from --classifier-labels, default MODEL_Labels.txt).
                        Chunks it hears an excluded category in (the hub's drop switches: human
                        voice, anthropogenic, amphibian, insect, other animal) at 50 % or more,
                        or no bird at the hub's classifierMinBirdProb, are not uploaded.
  --classifier-labels FILE   the labels file of --classifier
  --timeout SEC         with --chunks: give up after SEC seconds
  --seed N              synthetic soundscape seed (default 1)
  --latitude L --longitude L   position sent with registration and chunks

  Examples:
    chorus satellite --hub http://localhost:8080 --token KEY --tenant TEAM_ID
    chorus satellite --hub http://hub.local:8080 --token KEY --tenant TEAM_ID --source alsa:plughw:1,0
    chorus satellite --hub http://hub.local:8080 --token KEY --tenant TEAM_ID --source rtsp://cam.local:554/stream1
    chorus satellite --hub http://localhost:8080 --token KEY --tenant TEAM_ID --source recordings/ --interval-ms 100 --chunks 20`;

export interface SavedCredentials extends SatelliteCredentials {
  hub: string;
  apiKey: string;
  deviceId: string;
  name: string;
}

function apiBase(hub: string): string {
  const trimmed = hub.replace(/\/+$/, '');
  return trimmed.endsWith('/api') ? trimmed : `${trimmed}/api`;
}

/** POST /api/satellites → credentials (201 new, 200 re-registration by deviceId). */
export async function registerSatellite(input: {
  hub: string;
  token: string;
  tenantId: string;
  name: string;
  deviceId: string;
  latitude?: number;
  longitude?: number;
}): Promise<SavedCredentials> {
  const url = `${apiBase(input.hub)}/satellites`;
  let res: Response;
  try {
    res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${input.token}` },
      body: JSON.stringify({
        tenantId: input.tenantId,
        name: input.name,
        deviceId: input.deviceId,
        ...(input.latitude !== undefined && input.longitude !== undefined ? { latitude: input.latitude, longitude: input.longitude } : {}),
      }),
    });
  } catch (err) {
    throw new Error(`registration at ${url} failed: ${(err as Error).message}`, { cause: err });
  }
  const text = await res.text();
  // The registration reply is read defensively: any field may be missing from a foreign hub.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  let body: any = null;
  try {
    body = JSON.parse(text);
  } catch {
    // reported below
  }
  if (res.status !== 201 && res.status !== 200) {
    const reason = body?.error ? `${body.error.code ?? ''} ${body.error.message ?? ''}`.trim() : text.slice(0, 200);
    throw new Error(`registration refused: HTTP ${res.status} ${reason}`);
  }
  if (!body?.id || !body?.mqtt?.password) throw new Error(`registration reply without credentials: ${text.slice(0, 200)}`);
  return {
    hub: input.hub,
    satelliteId: body.id,
    tenantId: input.tenantId,
    username: body.mqtt.username ?? body.id,
    password: body.mqtt.password,
    brokerUrl: body.mqtt.brokerUrl,
    wsUrl: body.mqtt.wsUrl ?? null,
    apiKey: body.apiKey,
    deviceId: input.deviceId,
    name: input.name,
  };
}

export function loadCredentials(file: string): SavedCredentials | null {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as SavedCredentials;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new Error(`${file}: unreadable credentials (${(err as Error).message})`, { cause: err });
  }
}

export async function saveCredentials(file: string, creds: SavedCredentials): Promise<void> {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  await writeFileDurable(file, `${JSON.stringify(creds, null, 2)}\n`, 0o600);
  fs.chmodSync(file, 0o600);
}

function positiveInt(name: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a non-negative integer`);
  return n;
}

function num(name: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isFinite(n)) throw new Error(`${name} must be a number`);
  return n;
}

/** Runs the command; resolves with the exit code. */
export interface SatelliteCommandDeps {
  /** Loads `--classifier` (main.ts lends the hub's ONNX runner); without it the option is refused. */
  loadSoundClassifier?: (spec: { model: string; labels?: string }) => Promise<SoundClassifier>;
}

export async function satelliteCommand(args: string[], deps: SatelliteCommandDeps = {}): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      hub: { type: 'string' },
      token: { type: 'string' },
      tenant: { type: 'string' },
      name: { type: 'string' },
      source: { type: 'string', default: 'synthetic' },
      chunks: { type: 'string' },
      start: { type: 'string' },
      credentials: { type: 'string' },
      data: { type: 'string' },
      ws: { type: 'boolean', default: false },
      broker: { type: 'string' },
      'interval-ms': { type: 'string' },
      timeout: { type: 'string' },
      seed: { type: 'string' },
      latitude: { type: 'string' },
      longitude: { type: 'string' },
      classifier: { type: 'string' },
      'classifier-labels': { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    console.log(SATELLITE_USAGE);
    return 0;
  }
  const chunks = positiveInt('--chunks', values.chunks);
  const intervalMs = positiveInt('--interval-ms', values['interval-ms']) ?? 3000;
  const seed = positiveInt('--seed', values.seed);
  const latitude = num('--latitude', values.latitude);
  const longitude = num('--longitude', values.longitude);
  const dataDir = path.resolve(values.data ?? 'chorus-satellite');
  const credFile = path.resolve(values.credentials ?? path.join(dataDir, 'credentials.json'));
  fs.mkdirSync(dataDir, { recursive: true });
  // Before anything else touches the dir: a second process on it would fight the first for the broker.
  lockSatelliteDir(dataDir);

  let creds = loadCredentials(credFile);
  if (creds && values.tenant && creds.tenantId !== values.tenant) {
    throw new Error(`${credFile} holds a satellite of tenant ${creds.tenantId}, not ${values.tenant}; use another --data or --credentials`);
  }
  if (creds) {
    console.log(`Using saved credentials of satellite ${creds.satelliteId} from ${credFile}`);
  } else {
    const missing = (['hub', 'token', 'tenant'] as const).filter((k) => !values[k]);
    if (missing.length)
      throw new Error(
        `${missing.map((m) => `--${m}`).join(', ')} required to register (no saved credentials in ${credFile})\n\n${SATELLITE_USAGE}`,
      );
    creds = await registerSatellite({
      hub: values.hub!,
      token: values.token!,
      tenantId: values.tenant!,
      name: values.name ?? 'Reference satellite',
      deviceId: deviceIdOf(dataDir),
      latitude,
      longitude,
    });
    await saveCredentials(credFile, creds);
    console.log(`Registered satellite ${creds.satelliteId}; credentials saved to ${credFile}`);
  }

  let start: Date | undefined;
  if (values.start !== undefined) {
    start = new Date(values.start);
    if (!/^\d{4}-\d{2}-\d{2}T/.test(values.start) || Number.isNaN(start.getTime()))
      throw new Error(`--start must be an ISO 8601 time such as 2024-05-01T05:30:00Z, got "${values.start}"`);
    if (values.source === 'synthetic' || /^(alsa:|rtsps?:|https?:)/i.test(values.source!))
      throw new Error('--start applies to a file or folder source (live audio is stamped as it is recorded)');
  }
  const source = openSource(values.source!, { seed, start });
  // Files and folders end; the satellite then exits once what it recorded is acked.
  const finite = values.source !== 'synthetic' && !/^(alsa:|rtsps?:|https?:)/i.test(values.source!);
  console.log(`Source: ${source.description}`);
  let soundClassifier: SoundClassifier | undefined;
  if (values.classifier) {
    if (!deps.loadSoundClassifier) throw new Error("--classifier needs the hub's model runner: run it as `chorus satellite`");
    soundClassifier = await deps.loadSoundClassifier({ model: values.classifier, labels: values['classifier-labels'] });
    console.log(`Sound classifier: ${soundClassifier.description} (drops what the hub's drop switches name, before upload)`);
  }
  const outbox = await Outbox.open(path.join(dataDir, 'outbox'));
  const sat = new Satellite({
    credentials: creds,
    source,
    outbox,
    dataDir,
    url: values.broker,
    transport: values.ws ? 'ws' : 'tcp',
    chunkIntervalMs: intervalMs,
    // --chunks N records just enough: unsent chunks of an earlier run count towards N.
    recordLimit: chunks === undefined ? undefined : Math.max(0, chunks - outbox.pending().length),
    latitude: latitude ?? null,
    longitude: longitude ?? null,
    logSink: (line) => console.log(line),
    soundClassifier,
  });

  const outcome = new Promise<{ code: number; reason: string }>((resolve) => {
    const onSignal = (signal: string) => resolve({ code: 0, reason: `stopped by ${signal}` });
    process.once('SIGINT', () => onSignal('SIGINT'));
    process.once('SIGTERM', () => onSignal('SIGTERM'));
    sat.on('connect-error', (err: Error & { code?: number }) => {
      // CONNACK 4 (bad user name or password) and 5 (not authorized) do not heal by retrying.
      if (chunks !== undefined && (err.code === 4 || err.code === 5)) {
        resolve({
          code: 2,
          reason: `the broker refused the credentials of satellite ${creds!.satelliteId} (${err.message}); delete ${credFile} to register again`,
        });
      }
    });
    if (chunks === undefined) {
      if (!finite) return;
      // An import goes on past a refused chunk (the outbox keeps it with the reason) and says so at the end.
      let refused = 0;
      sat.on('ack-error', () => refused++);
      const drained = () => {
        if (!sat.sourceEnded || outbox.pending().length > 0) return;
        const reason = `the source ended; ${sat.ackedCount} chunks acked stored`;
        resolve(refused === 0 ? { code: 0, reason } : { code: 1, reason: `${reason}, ${refused} refused by the hub` });
      };
      sat.on('acked', drained);
      sat.on('ack-error', drained);
      sat.on('source-end', (err?: Error) => (err ? resolve({ code: 1, reason: `the source failed: ${err.message}` }) : drained()));
      return;
    }
    if (chunks === 0) return resolve({ code: 0, reason: '0 chunks asked' });
    const seconds = positiveInt('--timeout', values.timeout) ?? Math.ceil(60 + (6 * chunks * intervalMs) / 1000);
    const timer = setTimeout(
      () => resolve({ code: 1, reason: `timed out after ${seconds} s: ${sat.ackedCount} of ${chunks} chunks acked stored` }),
      seconds * 1000,
    );
    const check = () => {
      if (sat.ackedCount >= chunks) {
        clearTimeout(timer);
        resolve({ code: 0, reason: `${sat.ackedCount} chunks acked stored` });
      } else if (sat.sourceEnded && outbox.pending().length === 0) {
        clearTimeout(timer);
        resolve({ code: 1, reason: `the source ended after ${sat.ackedCount} of ${chunks} chunks were acked stored` });
      }
    };
    sat.on('acked', check);
    sat.on('source-end', check);
    sat.on('ack-error', (chunkId: string, error: string) => {
      clearTimeout(timer);
      resolve({ code: 1, reason: `the hub refused chunk ${chunkId}: ${error}` });
    });
  });

  await sat.start();
  const { code, reason } = await outcome;
  await sat.stop();
  const stats = await outbox.stats();
  const summary = `${reason}; outbox: ${stats.rowCount} row(s), ${stats.unackedCount} unacked`;
  if (code === 0) console.log(summary);
  else console.error(summary);
  return code;
}
