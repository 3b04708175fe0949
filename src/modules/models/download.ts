/**
 * Fetching a model's files for an install (issue 31): over http(s) only, streamed to a temporary
 * file (never held whole in memory while it arrives), never more than a size cap, given up when
 * the server stops sending. The installer checks the SHA-256 of the bytes it hands on. A hub admin asked for the address (the route or the command line); nothing here runs
 * on its own.
 *
 * The timeouts are real time, not the injected clock: they bound a socket that stopped moving,
 * which no test moves time past (tests serve the files from a local server).
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { once } from 'node:events';
import { AppError, badRequest } from '../../core/errors.ts';

export interface Fetched {
  /** The bytes: a temporary file for a download (removed by `discard`), the admin's own file otherwise. */
  file: string;
  temporary: boolean;
  bytes: number;
}

export interface DownloadLimits {
  maxBytes: number;
  /** No byte for this long ends the download (a stalled server). */
  idleTimeoutMs: number;
  /** The whole download, headers to last byte. */
  totalTimeoutMs: number;
}

/** Progress: bytes so far and the announced total (Content-Length), if any. */
export type OnProgress = (received: number, total: number | null) => void;

export const DEFAULT_LIMITS: Omit<DownloadLimits, 'maxBytes'> = { idleTimeoutMs: 60_000, totalTimeoutMs: 30 * 60_000 };

/** An address an admin gave: http or https, else 400 INVALID_URL (no file:, data: or relative paths reach the hub's disk). */
export function parseHttpUrl(raw: string, what = 'url'): URL {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw badRequest(`${what} is not an absolute URL`, 'INVALID_URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw badRequest(`${what} must be an http or https URL`, 'INVALID_URL');
  return url;
}

async function tempFile(): Promise<string> {
  const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'chorus-model-'));
  return path.join(dir, 'download');
}

/** Removes a downloaded file and its temporary folder; an admin's own file is left alone. */
export async function discard(f: Pick<Fetched, 'file' | 'temporary'> | null | undefined): Promise<void> {
  if (f?.temporary) await fsp.rm(path.dirname(f.file), { recursive: true, force: true }).catch(() => {});
}

const mib = (n: number) => `${Math.round((n / 1024 / 1024) * 10) / 10} MiB`;

/** Downloads `url` into a temporary file (see the module comment). Throws AppError with DOWNLOAD_* codes. */
export async function download(url: URL, limits: DownloadLimits, onProgress?: OnProgress): Promise<Fetched> {
  const ac = new AbortController();
  let reason: AppError | null = null;
  const stop = (e: AppError) => {
    reason ??= e;
    ac.abort(e);
  };
  const total = setTimeout(
    () => stop(new AppError(502, 'DOWNLOAD_TIMEOUT', `${url.host} did not send the whole file within ${limits.totalTimeoutMs / 1000} s`)),
    limits.totalTimeoutMs,
  );
  let idle: NodeJS.Timeout | undefined;
  const touch = () => {
    clearTimeout(idle);
    idle = setTimeout(
      () => stop(new AppError(502, 'DOWNLOAD_TIMEOUT', `${url.host} sent nothing for ${limits.idleTimeoutMs / 1000} s`)),
      limits.idleTimeoutMs,
    );
  };
  touch();
  const file = await tempFile();
  const out = fs.createWriteStream(file);
  // A failed write (a full disk) ends the download with the reason instead of an unhandled 'error'.
  out.on('error', (err) => stop(new AppError(500, 'INSTALL_FAILED', `Could not write the download to ${file}: ${err.message}`)));
  try {
    let res: Response;
    try {
      res = await fetch(url, { signal: ac.signal, redirect: 'follow', headers: { accept: 'application/octet-stream, */*' } });
    } catch (err) {
      throw reason ?? new AppError(502, 'DOWNLOAD_FAILED', `Could not reach ${url.host}: ${(err as Error).cause ?? (err as Error).message}`);
    }
    if (!res.ok || !res.body) throw new AppError(502, 'DOWNLOAD_FAILED', `${url.host} answered HTTP ${res.status} for ${url.pathname}`);
    // A compressed body's Content-Length counts the compressed bytes, not the ones fetch hands on.
    const encoded = (res.headers.get('content-encoding') ?? 'identity') !== 'identity';
    const announced = encoded ? null : Number(res.headers.get('content-length')) || null;
    if (announced !== null && announced > limits.maxBytes) {
      throw new AppError(413, 'DOWNLOAD_TOO_LARGE', `The file is ${mib(announced)}, more than the ${mib(limits.maxBytes)} allowed`);
    }
    let received = 0;
    onProgress?.(0, announced);
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        touch();
        received += chunk.length;
        if (received > limits.maxBytes) {
          stop(new AppError(413, 'DOWNLOAD_TOO_LARGE', `The file is larger than the ${mib(limits.maxBytes)} allowed`));
          break;
        }
        // Bound by the signal too: a stream that failed never drains, and its failure aborted the download.
        if (!out.write(chunk)) await once(out, 'drain', { signal: ac.signal });
        onProgress?.(received, announced);
      }
    } catch (err) {
      throw reason ?? new AppError(502, 'DOWNLOAD_FAILED', `The download from ${url.host} broke off: ${(err as Error).message}`);
    }
    if (reason) throw reason;
    if (announced !== null && received !== announced) {
      throw new AppError(502, 'DOWNLOAD_FAILED', `${url.host} announced ${announced} bytes and sent ${received}`);
    }
    out.end();
    await once(out, 'close');
    return { file, temporary: true, bytes: received };
  } catch (err) {
    out.destroy();
    await discard({ file, temporary: true });
    throw err;
  } finally {
    clearTimeout(total);
    clearTimeout(idle);
  }
}

/** A local file for `chorus models install FILE`, refused above the cap. */
export async function readLocal(file: string, maxBytes: number): Promise<Fetched> {
  let stat: fs.Stats;
  try {
    stat = await fsp.stat(file);
  } catch {
    throw badRequest(`No such file: ${file}`, 'FILE_NOT_FOUND');
  }
  if (!stat.isFile()) throw badRequest(`Not a file: ${file}`, 'FILE_NOT_FOUND');
  if (stat.size > maxBytes) throw new AppError(413, 'DOWNLOAD_TOO_LARGE', `${file} is ${mib(stat.size)}, more than the ${mib(maxBytes)} allowed`);
  return { file, temporary: false, bytes: stat.size };
}
