/**
 * Installing a model from a URL or a file (issue 31, "install in a minute"): the files are fetched
 * (download.ts), the model's SHA-256 is compared with the one the admin gave, and the bytes go
 * through the models service's upload, the same checks and the same audit entry
 * (admin.birdnet_model_uploaded) as a multipart upload. A wrong checksum stores nothing.
 *
 * Two callers: `chorus models install` waits for the result; POST /admin/models/install answers
 * 202 with an install id at once and the install runs on in the api process, its state kept in
 * the key-value store (shared by every api process, so GET /admin/models/installs/:id answers
 * wherever the load balancer sends it). An install whose process died stays in its last state
 * until the record expires (INSTALL_TTL_S).
 */
import crypto from 'node:crypto';
import fsp from 'node:fs/promises';
import type { Actor } from '../../core/actor.ts';
import type { Clock } from '../../core/clock.ts';
import { newId } from '../../core/crypto.ts';
import { AppError, badRequest, conflict, notFound } from '../../core/errors.ts';
import type { Kv } from '../../infra/kv/index.ts';
import { speciesCatalog } from '../species/catalog.ts';
import { DEFAULT_LIMITS, discard, download, parseHttpUrl, readLocal, type DownloadLimits, type Fetched } from './download.ts';
import { knownFamily, refuseUnknownFamily } from './known-models.ts';
import { MAX_LABELS_BYTES, MAX_MODEL_BYTES, type ModelsService } from './service.ts';

export const INSTALL_STATES = ['downloading', 'verifying', 'installing', 'done', 'failed'] as const;
export type InstallState = (typeof INSTALL_STATES)[number];

/** An install record lives a day: long enough to read how it ended, short enough to need no clean-up. */
const INSTALL_TTL_S = 24 * 3600;
/** Installs one api process runs at once: each holds a model (up to MAX_MODEL_BYTES) in memory while it loads. */
const MAX_RUNNING = 2;
/** Progress reaches the key-value store at most this often (real time), and on every change of state. */
const PROGRESS_EVERY_MS = 250;

export interface InstallRequest {
  /** An http(s) URL; for the command line also a local file. */
  model: string;
  /** The labels file (URL, or file on the command line); for BirdNET v2.4 the species catalog's when absent. */
  labels?: string | null;
  /** Expected SHA-256 of the model file, hex. */
  sha256?: string | null;
  name: string;
  version?: string | null;
  description?: string | null;
  /** A family of the catalog (known-models.ts); not the input shape `family` the upload reads from the model. */
  knownFamily?: string | null;
  attribution?: string | null;
  makeDefault?: boolean;
}

export interface InstallStatus {
  id: string;
  state: InstallState;
  /** Bytes of the model file received so far. */
  receivedBytes: number;
  /** The model file's size as its server announced it, if it did. */
  totalBytes: number | null;
  modelId: string | null;
  error: { code: string; message: string } | null;
  url: string;
  labelsUrl: string | null;
  name: string;
  knownFamily: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface InstallProgress {
  state: InstallState;
  receivedBytes: number;
  totalBytes: number | null;
}

const key = (id: string) => `models:install:${id}`;
const isUrl = (s: string) => /^[a-z][a-z0-9+.-]*:/i.test(s.trim());

/** The one form of an error a failed install keeps ({code, message}, as the hub's error shape). */
function errorOf(err: unknown): { code: string; message: string } {
  if (err instanceof AppError) return { code: err.code, message: err.message };
  return { code: 'INSTALL_FAILED', message: `The install failed: ${err instanceof Error ? err.message : String(err)}` };
}

export function createModelInstaller(deps: {
  models: Pick<ModelsService, 'upload' | 'setDefault'>;
  kv: Pick<Kv, 'get' | 'set'>;
  clock: Clock;
  limits?: Partial<Omit<DownloadLimits, 'maxBytes'>>;
}) {
  const { models, kv, clock } = deps;
  const limits = { ...DEFAULT_LIMITS, ...deps.limits };
  let running = 0;

  /** Everything that can be refused before a byte is fetched: the 400s of POST /admin/models/install. */
  function check(req: InstallRequest, allowFiles: boolean): void {
    refuseUnknownFamily(req.knownFamily);
    if (req.sha256 && !/^[0-9a-f]{64}$/i.test(req.sha256.trim())) throw badRequest('sha256 must be 64 hexadecimal digits', 'INVALID_SHA256');
    if (!allowFiles || isUrl(req.model)) parseHttpUrl(req.model, 'url');
    if (req.labels && (!allowFiles || isUrl(req.labels))) parseHttpUrl(req.labels, 'labelsUrl');
    if (!req.labels && !knownFamily(req.knownFamily)?.labelsFromCatalog) {
      throw badRequest('A labels file is needed (only a BirdNET v2.4 model takes its labels from the species catalog)', 'INVALID_LABELS');
    }
  }

  async function fetchOne(source: string, maxBytes: number, onBytes?: (received: number, total: number | null) => void): Promise<Fetched> {
    if (!isUrl(source)) return readLocal(source, maxBytes);
    return download(parseHttpUrl(source), { ...limits, maxBytes }, onBytes);
  }

  /** Reads what was fetched, refusing a file that grew past its cap since (a local file being written). */
  async function bytesOf(f: Fetched, maxBytes: number): Promise<Buffer> {
    const buf = await fsp.readFile(f.file);
    if (buf.length > maxBytes) throw new AppError(413, 'DOWNLOAD_TOO_LARGE', `${f.file} grew past ${maxBytes} bytes`);
    return buf;
  }

  /**
   * Fetches, verifies and installs; resolves with the installed model (as the admin list shows it).
   * `allowFiles`: local paths are accepted (the command line only; the HTTP route never reads the hub's disk).
   */
  async function install(actor: Actor, req: InstallRequest, opts: { allowFiles: boolean; onProgress?: (p: InstallProgress) => void }) {
    check(req, opts.allowFiles);
    const progress = { receivedBytes: 0, totalBytes: null as number | null };
    const tell = (state: InstallState) => opts.onProgress?.({ state, ...progress });
    let model: Fetched | null = null;
    let labels: Fetched | null = null;
    try {
      if (isUrl(req.model)) tell('downloading');
      model = await fetchOne(req.model, MAX_MODEL_BYTES, (received, total) => {
        progress.receivedBytes = received;
        progress.totalBytes = total;
        tell('downloading');
      });
      progress.receivedBytes = model.bytes;
      progress.totalBytes ??= model.bytes;
      if (req.labels) labels = await fetchOne(req.labels, MAX_LABELS_BYTES);

      tell('verifying');
      const modelBytes = await bytesOf(model, MAX_MODEL_BYTES);
      const actual = crypto.createHash('sha256').update(modelBytes).digest('hex');
      const expected = req.sha256?.trim().toLowerCase();
      if (expected && actual !== expected) {
        throw badRequest(`The model file's SHA-256 is ${actual}, not the ${expected} given; nothing was installed`, 'CHECKSUM_MISMATCH');
      }
      // BirdNET v2.4's outputs are the species catalog's entries in order (docs/model.md).
      const labelBytes = labels
        ? await bytesOf(labels, MAX_LABELS_BYTES)
        : Buffer.from(speciesCatalog().all().map((s) => s.label).join('\n') + '\n', 'utf8');

      tell('installing');
      const created = await models.upload(actor, {
        name: req.name,
        version: req.version ?? null,
        description: req.description ?? null,
        knownFamily: req.knownFamily ?? null,
        attribution: req.attribution ?? null,
        sourceUrl: isUrl(req.model) ? req.model.trim() : null,
        model: modelBytes,
        labels: labelBytes,
      });
      return req.makeDefault ? models.setDefault(actor, created.id) : created;
    } finally {
      await Promise.all([discard(model), discard(labels)]);
    }
  }

  async function read(id: string): Promise<InstallStatus | null> {
    const raw = await kv.get(key(id));
    return raw ? (JSON.parse(raw) as InstallStatus) : null;
  }

  return {
    install,

    /**
     * POST /admin/models/install: refuses what it can at once (400), then installs in the
     * background and answers the record (state downloading) to poll.
     */
    async start(actor: Actor, req: InstallRequest): Promise<InstallStatus> {
      check(req, false);
      if (running >= MAX_RUNNING) throw conflict(`${MAX_RUNNING} installs are running on this hub process; wait for one to end`, 'INSTALLS_BUSY');
      const now = clock.now().toISOString();
      let record: InstallStatus = {
        id: newId(),
        state: 'downloading',
        receivedBytes: 0,
        totalBytes: null,
        modelId: null,
        error: null,
        url: req.model.trim(),
        labelsUrl: req.labels?.trim() || null,
        name: req.name,
        knownFamily: req.knownFamily ?? null,
        createdAt: now,
        updatedAt: now,
      };
      const first = record;
      await kv.set(key(record.id), JSON.stringify(record), INSTALL_TTL_S);
      // Writes go one after another, so a late progress write never lands after the final state.
      let writes = Promise.resolve();
      let lastWrite = 0;
      const save = (patch: Partial<InstallStatus>, force: boolean) => {
        record = { ...record, ...patch, updatedAt: clock.now().toISOString() };
        const at = performance.now();
        if (!force && at - lastWrite < PROGRESS_EVERY_MS) return;
        lastWrite = at;
        const snapshot = JSON.stringify(record);
        writes = writes.then(() => kv.set(key(record.id), snapshot, INSTALL_TTL_S)).catch(() => {});
      };
      running++;
      void (async () => {
        try {
          const model = await install(actor, req, {
            allowFiles: false,
            onProgress: (p) => save({ state: p.state, receivedBytes: p.receivedBytes, totalBytes: p.totalBytes }, p.state !== record.state),
          });
          save({ state: 'done', modelId: model.id }, true);
        } catch (err) {
          save({ state: 'failed', error: errorOf(err) }, true);
        } finally {
          running--;
        }
      })();
      return first;
    },

    /** GET /admin/models/installs/:id. */
    async status(id: string): Promise<InstallStatus> {
      const found = await read(id);
      if (!found) throw notFound('No such install (records are kept for a day)');
      return found;
    },
  };
}

export type ModelInstaller = ReturnType<typeof createModelInstaller>;
