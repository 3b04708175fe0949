/**
 * The download job of one species (queue `species-images`): the providers in order, up to the
 * configured number of credited photos, each checked, stored once (original and display copy)
 * and queued for analysis. Upstream trouble is retried by the queue; a photo that is not an
 * image, too large or a bomb is skipped, and a species with only such photos ends `failed`.
 */
import crypto from 'node:crypto';
import type { Clock } from '../../core/clock.ts';
import type { Db } from '../../infra/db/index.ts';
import type { Job } from '../../infra/queue/index.ts';
import type { ObjectStorage } from '../../infra/storage/index.ts';
import { checkImage, displayCopy, type Limits } from './image.ts';
import { RefusedImage, UpstreamError, type PhotoCandidate, type ProviderSet } from './providers/index.ts';
import { createSpeciesImagesRepo } from './repo.ts';

export const DOWNLOAD_QUEUE = 'species-images';
export const ANALYSIS_QUEUE = 'species-image-analysis';

export interface DownloadJob {
  code: string;
  generation: number;
}

const EXT: Record<string, string> = { 'image/jpeg': 'jpg', 'image/png': 'png', 'image/webp': 'webp' };

export function createDownloader(deps: {
  db: Db;
  clock: Clock;
  storage: ObjectStorage;
  providers: ProviderSet;
  limits: Limits;
  perSpecies: number;
  scientificName: (code: string) => Promise<string | null>;
  analyse: (photoId: string) => Promise<void>;
}) {
  const repo = createSpeciesImagesRepo(deps.db);

  async function store(code: string, c: PhotoCandidate, position: number): Promise<void> {
    const { body } = await deps.providers.fetcherOf(c.provider).bytes(c.imageUrl, deps.limits.maxBytes);
    const checked = await checkImage(body, deps.limits);
    const display = await displayCopy(body, deps.limits);
    const id = crypto.randomUUID();
    const storageKey = `species-images/${id}.${EXT[checked.contentType]}`;
    const displayKey = `species-images/${id}.display.jpg`;
    await deps.storage.put(storageKey, body, checked.contentType);
    await deps.storage.put(displayKey, display.body, 'image/jpeg');
    await repo.insertPhoto(deps.db, {
      id,
      speciesCode: code,
      position,
      provider: c.provider,
      sourceId: c.sourceId,
      storageKey,
      contentType: checked.contentType,
      width: checked.width,
      height: checked.height,
      originalBytes: body.length,
      displayKey,
      displayBytes: display.body.length,
      displayWidth: display.width,
      displayHeight: display.height,
      author: c.author,
      licence: c.licence,
      licenceUrl: c.licenceUrl,
      sourceUrl: c.sourceUrl,
      createdAt: deps.clock.now(),
    });
    await deps.analyse(id);
  }

  return async function download(job: Job<DownloadJob>): Promise<void> {
    const { code } = job.data;
    const last = job.attempt >= job.maxAttempts;
    try {
      const name = await deps.scientificName(code);
      if (!name || deps.providers.providers.length === 0) {
        await repo.setStatus(code, 'none', null, deps.clock.now());
        return;
      }
      const existing = (await repo.photosOf([code])).length;
      let stored = existing;
      const refused: string[] = [];
      for (const provider of deps.providers.providers) {
        if (stored >= deps.perSpecies) break;
        const candidates = await provider.find(name, deps.perSpecies);
        for (const c of candidates) {
          if (stored >= deps.perSpecies) break;
          if (await repo.hasPhoto(code, c.provider, c.sourceId)) continue;
          try {
            await store(code, c, stored);
            stored += 1;
          } catch (err) {
            if (!(err instanceof RefusedImage)) throw err;
            refused.push(`${c.provider} ${c.sourceId}: ${err.message}`);
          }
        }
      }
      const now = deps.clock.now();
      if (stored > 0) await repo.setStatus(code, 'ready', null, now);
      else if (refused.length > 0) await repo.setStatus(code, 'failed', refused.slice(0, 3).join('; ').slice(0, 500), now);
      else await repo.setStatus(code, 'none', null, now);
    } catch (err) {
      // Upstream trouble: the queue tries again; after the last attempt the species is failed (POST …/retry re-queues it).
      if (last || !(err instanceof UpstreamError)) {
        await repo.setStatus(code, 'failed', String((err as Error).message ?? err).slice(0, 500), deps.clock.now());
        if (!(err instanceof UpstreamError)) return;
      }
      throw err;
    }
  };
}
