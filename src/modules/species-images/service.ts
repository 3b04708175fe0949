/**
 * Species photos (issue 20, docs/species-photos.md): statuses and queueing, the gallery, serving
 * stored photos (original, display copy, bird-centred squares with their cache lifetimes), and
 * the hub admin's cache operations. Photos belong to no team.
 */
import crypto from 'node:crypto';
import type { Actor } from '../../core/actor.ts';
import type { Clock } from '../../core/clock.ts';
import { notFound } from '../../core/errors.ts';
import type { ImagesConfig } from '../../config.ts';
import type { Db } from '../../infra/db/index.ts';
import type { AllowList } from '../../infra/outbound/index.ts';
import type { JobQueue } from '../../infra/queue/index.ts';
import type { ObjectStorage } from '../../infra/storage/index.ts';
import type { AuditWriter } from '../audit/writer.ts';
import { createCropCache } from './crop-cache.ts';
import { ANALYSIS_QUEUE, createDownloader, DOWNLOAD_QUEUE, type DownloadJob } from './download.ts';
import { findFocus, squareCrop, type SquareSize } from './image.ts';
import { createProviders, type ProviderSet } from './providers/index.ts';
import { createSpeciesImagesRepo, type ImageStatus, type PhotoRow } from './repo.ts';

/** spec §8: square crops one week once settled, ten minutes while the photo awaits analysis. */
export const SETTLED_MAX_AGE_S = 7 * 24 * 3600;
export const PENDING_MAX_AGE_S = 10 * 60;
const API = '/api';
const ROW_CACHE_MS = 2000;

export interface Credit {
  author: string;
  licence: string;
  licenceUrl: string | null;
  sourceUrl: string;
  provider: string;
}

/** A photo with what must be shown beside it; URLs are the hub's own, never the provider's. */
export interface CreditedPhoto extends Credit {
  code: string;
  key: string;
  /** Public 256 px square for pages anyone may open (/species/showcase/image; square=64, 128 or 512 work too). */
  url: string;
  /** The public display copy (at most 1600 px). */
  imageUrl: string;
}

export interface Served {
  status: 200 | 304;
  body: Buffer | null;
  contentType: string;
  headers: Record<string, string>;
}

export interface ServeOptions {
  original?: boolean;
  maxBytes?: number;
  square?: SquareSize;
  ifNoneMatch?: string;
}

function credit(p: PhotoRow): Credit {
  return { author: p.author, licence: p.licence, licenceUrl: p.licenceUrl, sourceUrl: p.sourceUrl, provider: p.provider };
}

export function createSpeciesImagesService(deps: {
  db: Db;
  clock: Clock;
  audit: AuditWriter;
  queue: JobQueue;
  storage: ObjectStorage;
  config: ImagesConfig;
  /** The scientific name the providers are searched by; null for a code the hub does not know. */
  scientificName: (code: string) => Promise<string | null>;
  /** What the photo fetcher may reach although private (OUTBOUND_ALLOW_HOSTS, shared with webhook deliveries). */
  allow: AllowList;
  /** Tests and the benchmark may pass their own; by default from the configuration. */
  providers?: ProviderSet;
  cropCacheBytes?: number;
}) {
  const { db, clock, audit, queue, storage, config } = deps;
  const repo = createSpeciesImagesRepo(db);
  const providers = deps.providers ?? createProviders(config, 'Chorus hub (species photos; https://github.com/chorus)', deps.allow);
  const crops = createCropCache(deps.cropCacheBytes ?? 64 * 1024 * 1024);
  const limits = { maxBytes: config.maxBytes, maxPixels: config.maxPixels };

  /**
   * Photo rows by key or species, remembered ROW_CACHE_MS (real time, not the clock): a cached
   * square then costs no database round trip. This process drops them on its own changes;
   * another process's analysis or clear shows here within ROW_CACHE_MS.
   */
  const rowCache = new Map<string, { row: PhotoRow | null; at: number }>();
  async function cachedRow(key: string, load: () => Promise<PhotoRow | null>): Promise<PhotoRow | null> {
    const hit = rowCache.get(key);
    if (hit && performance.now() - hit.at < ROW_CACHE_MS) return hit.row;
    const row = await load();
    if (rowCache.size > 10_000) rowCache.clear();
    rowCache.set(key, { row, at: performance.now() });
    return row;
  }
  const forgetRows = () => rowCache.clear();

  const enqueueAnalysis = (photoId: string) => queue.enqueue(ANALYSIS_QUEUE, `focus-${photoId}-${crypto.randomUUID()}`, { photoId });
  const download = createDownloader({
    db,
    clock,
    storage,
    providers,
    limits,
    perSpecies: config.perSpecies,
    scientificName: deps.scientificName,
    analyse: async (id) => {
      forgetRows();
      await enqueueAnalysis(id);
    },
  });

  async function analyse(photoId: string): Promise<void> {
    const p = await repo.photo(photoId);
    if (!p) return;
    const display = await storage.get(p.displayKey);
    if (!display) return;
    await repo.setFocus(p.id, await findFocus(display), clock.now());
    forgetRows();
  }

  async function enqueueDownloads(rows: Array<{ speciesCode: string; generation: number }>) {
    await Promise.all(
      rows.map((r) =>
        // Generations start again after a clear: the random part keeps the id new to the queue.
        queue.enqueue<DownloadJob>(DOWNLOAD_QUEUE, `img-${r.speciesCode}-${r.generation}-${crypto.randomUUID().slice(0, 8)}`, {
          code: r.speciesCode,
          generation: r.generation,
        }),
      ),
    );
  }

  const galleryUrl = (id: string, q = '') => `${API}/species/image/by-key?key=${id}${q}`;
  const showcaseUrl = (code: string, size?: SquareSize) =>
    `${API}/species/showcase/image?code=${encodeURIComponent(code)}${size ? `&square=${size}` : ''}`;

  /** Statuses of the codes; unknown ones are queued (an offline hub answers `none`). */
  async function request(codes: readonly string[]) {
    const unique = [...new Set(codes)];
    const known = new Map((await repo.statuses(unique)).map((s) => [s.speciesCode, s]));
    const missing = unique.filter((c) => !known.has(c));
    if (missing.length > 0 && providers.providers.length > 0) {
      const marked = await repo.markPending(db, missing, [], clock.now());
      for (const m of marked) known.set(m.speciesCode, m);
      await enqueueDownloads(marked);
    }
    const first = new Map<string, PhotoRow>();
    for (const p of await repo.photosOf(unique.filter((c) => known.get(c)?.status === 'ready')))
      if (!first.has(p.speciesCode)) first.set(p.speciesCode, p);
    return unique.map((code) => {
      const status: ImageStatus = known.get(code)?.status ?? 'none';
      const p = first.get(code);
      if (status !== 'ready' || !p) return { code, status: status === 'ready' ? ('none' as const) : status };
      return {
        code,
        status,
        key: p.id,
        url: galleryUrl(p.id),
        squareUrl: galleryUrl(p.id, '&square=128'),
        ...credit(p),
      };
    });
  }

  async function serve(p: PhotoRow, o: ServeOptions): Promise<Served> {
    if (o.square) return serveSquare(p, o.square, o.ifNoneMatch);
    const original = o.original && !(o.maxBytes !== undefined && p.originalBytes > o.maxBytes);
    const etag = `"${p.id}-${original ? 'o' : 'd'}"`;
    const headers = { etag, 'cache-control': `public, max-age=${SETTLED_MAX_AGE_S}` };
    if (o.ifNoneMatch && matches(o.ifNoneMatch, etag)) return { status: 304, body: null, contentType: '', headers };
    const body = await storage.get(original ? p.storageKey : p.displayKey);
    if (!body) throw notFound('The photo is not in storage; an admin may retry the image cache');
    return { status: 200, body, contentType: original ? p.contentType : 'image/jpeg', headers };
  }

  async function serveSquare(p: PhotoRow, size: SquareSize, ifNoneMatch?: string): Promise<Served> {
    const now = clock.now();
    // Settled: analysed at a time the clock has reached. Until then the crop may still move.
    const settled = p.analysedAt !== null && p.focusX !== null && p.analysedAt.getTime() <= now.getTime();
    const maxAge = settled ? SETTLED_MAX_AGE_S : PENDING_MAX_AGE_S;
    const etag = `"${p.id}-sq${size}-${settled ? p.analysedAt!.getTime().toString(36) : 'p'}"`;
    const headers = {
      etag,
      'cache-control': `public, max-age=${maxAge}`,
      expires: new Date(now.getTime() + maxAge * 1000).toUTCString(),
    };
    if (ifNoneMatch && matches(ifNoneMatch, etag)) return { status: 304, body: null, contentType: '', headers };
    let body = crops.get(etag);
    if (!body) {
      const display = await storage.get(p.displayKey);
      if (!display) throw notFound('The photo is not in storage; an admin may retry the image cache');
      const focus = settled ? { x: p.focusX!, y: p.focusY! } : null;
      body = await squareCrop(display, size, focus, { width: p.displayWidth, height: p.displayHeight });
      crops.set(etag, body);
    }
    return { status: 200, body, contentType: 'image/jpeg', headers };
  }

  async function photoOf(code: string): Promise<PhotoRow> {
    const p = await cachedRow(`code:${code}`, () => repo.firstPhoto(code));
    if (!p) throw notFound('No photo of this species yet: POST /species/images asks for one');
    return p;
  }

  /**
   * For pages that show species (the public team page): each code's first photo with its
   * credit, in the order given; species without a photo are left out and, when `queue` is on,
   * asked for so that a later visit has them.
   */
  async function photosFor(codes: readonly string[], opts: { queue?: boolean } = {}): Promise<CreditedPhoto[]> {
    const unique = [...new Set(codes)];
    if (opts.queue) await request(unique);
    const first = new Map<string, PhotoRow>();
    for (const p of await repo.photosOf(unique)) if (!first.has(p.speciesCode)) first.set(p.speciesCode, p);
    return unique.flatMap((code) => {
      const p = first.get(code);
      if (!p) return [];
      return [{ code, key: p.id, url: showcaseUrl(code, 256), imageUrl: showcaseUrl(code), ...credit(p) }];
    });
  }

  return {
    request,

    async gallery(code: string) {
      const [status] = await repo.statuses([code]);
      const photos = await repo.photosOf([code]);
      return {
        code,
        status: status?.status ?? ('none' as const),
        photos: photos.map((p) => ({
          key: p.id,
          displayUrl: galleryUrl(p.id),
          squareUrl: galleryUrl(p.id, '&square=256'),
          fullUrl: galleryUrl(p.id, '&original=1'),
          originalBytes: p.originalBytes,
          width: p.width,
          height: p.height,
          ...credit(p),
        })),
      };
    },

    proxy: async (code: string, o: ServeOptions) => serve(await photoOf(code), o),

    async byKey(key: string, o: ServeOptions) {
      const p = await cachedRow(`key:${key}`, () => repo.photo(key));
      if (!p) throw notFound('No such photo');
      return serve(p, o);
    },

    /** The public square (or display copy) of a species' first photo. */
    showcase: async (code: string, o: Pick<ServeOptions, 'square' | 'ifNoneMatch'>) => serve(await photoOf(code), o),

    photosFor,

    /** One species' first photo with its credit, or null. */
    creditedPhoto: async (code: string): Promise<CreditedPhoto | null> => (await photosFor([code]))[0] ?? null,

    /** For GET /system/status: species asked for, and those with a photo. */
    async totals() {
      const s = await repo.stats();
      return { total: s.byStatus.reduce((n, b) => n + b.n, 0), withImage: s.species };
    },

    async stats() {
      const s = await repo.stats();
      const count = (st: ImageStatus) => s.byStatus.find((b) => b.status === st)?.n ?? 0;
      const [downloads, analysis] = await Promise.all([queue.stats(DOWNLOAD_QUEUE), queue.stats(ANALYSIS_QUEUE)]);
      return {
        species: { ready: count('ready'), pending: count('pending'), failed: count('failed'), none: count('none') },
        photos: s.photos,
        awaitingAnalysis: s.awaitingAnalysis,
        originalBytes: s.originalBytes,
        displayBytes: s.displayBytes,
        crops: crops.stats(),
        queue: { downloads, analysis },
        providers: providers.providers.map((p) => p.name),
      };
    },

    /** Removes every stored photo and status (audited); the next request downloads again. */
    async clear(actor: Actor) {
      const keys = await db.tx(async (tx) => {
        const all = await createSpeciesImagesRepo(tx).allKeys();
        await createSpeciesImagesRepo(tx).clear();
        await audit.write(tx, actor, { action: 'admin.image_cache_cleared', tenantId: null, details: { photos: all.length } });
        return all;
      });
      crops.clear();
      forgetRows();
      await storage.deleteMany(keys.flatMap((k) => [k.storageKey, k.displayKey]));
      return { photos: keys.length };
    },

    /** Re-queues the species whose download failed. */
    async retry() {
      const failed = (await repo.pendingOrFailed('failed')).map((r) => r.speciesCode);
      if (failed.length === 0) return { queued: 0 };
      const marked = await repo.markPending(db, failed, ['failed'], clock.now());
      await enqueueDownloads(marked);
      return { queued: marked.length };
    },

    /** Every photo back to awaiting analysis (audited); the analyses run in the background. */
    async recrop(actor: Actor) {
      const ids = await db.tx(async (tx) => {
        const rows = await createSpeciesImagesRepo(tx).unsettleAll();
        await audit.write(tx, actor, { action: 'admin.image_recrop_started', tenantId: null, details: { photos: rows.length } });
        return rows.map((r) => r.id);
      });
      forgetRows();
      void (async () => {
        for (const id of ids) await enqueueAnalysis(id).catch(() => {});
      })();
      return { photos: ids.length };
    },

    /** Starts this process's download and analysis workers; photos left unanalysed by a stop are queued again. */
    async start() {
      await queue.process<DownloadJob>(DOWNLOAD_QUEUE, 2, download);
      await queue.process<{ photoId: string }>(ANALYSIS_QUEUE, 1, (job) => analyse(job.data.photoId));
      for (const { id } of await repo.unanalysed()) await enqueueAnalysis(id);
      const pending = await repo.pendingOrFailed('pending');
      if (pending.length > 0)
        await enqueueDownloads(
          await repo.markPending(
            db,
            pending.map((p) => p.speciesCode),
            ['pending'],
            clock.now(),
          ),
        );
    },

    analyse,

    /** Drops the remembered photo rows (after a change made outside this service, e.g. by a test or a script). */
    forgetRows,
  };
}

/** If-None-Match: a list of tags or `*`; weak tags compare equal to strong ones (RFC 9110 §13.1.2). */
function matches(header: string, etag: string): boolean {
  if (header.trim() === '*') return true;
  return header.split(',').some((t) => t.trim().replace(/^W\//, '') === etag);
}

export type SpeciesImagesService = ReturnType<typeof createSpeciesImagesService>;
