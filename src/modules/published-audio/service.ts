/**
 * Published recordings (issue 34 item 4): public links to the chunks whose audio a team's
 * submitted files name (Darwin Core multimedia, iNaturalist, xeno-canto), for importers that
 * fetch media without signing in, as GBIF does.
 *
 * A link is `{id}.{signature}`: the row id (a random UUID) and an HMAC-SHA256 of it under a key
 * derived from the hub secret for this purpose only, as share links are signed. The row holds no
 * token, so exporting the same chunk again names the same link, and a copy of the database opens
 * nothing. Unlike share links they do not expire: a dataset on GBIF keeps its media URLs for
 * years. They end when the team revokes them (the row goes), when the chunk or team goes, or
 * when the hub secret changes.
 *
 * A link is created only when the team publishes (team setting `publish_audio`) and the export
 * asks (`publishAudio`), and never for a chunk in which a sensitive species was heard: the
 * chunk is the sound of that species at an exact time and place (src/modules/sensitive). That is
 * checked again on every fetch, so a species made sensitive later ends its chunks' links.
 */
import crypto from 'node:crypto';
import type { Db } from '../../infra/db/index.ts';
import type { Clock } from '../../core/clock.ts';
import { deriveKey, newId, safeEqual } from '../../core/crypto.ts';
import { conflict, notFound } from '../../core/errors.ts';
import type { AuditActor, AuditWriter } from '../audit/writer.ts';
import type { AudioService, AudioResponse } from '../audio/service.ts';
import type { SettingsService } from '../settings/service.ts';
import { createPublishedAudioRepo } from './repo.ts';

/** Shared caches may keep a fetched recording this long (seconds): a revoked link can outlive its revocation there by as much. */
export const PUBLIC_AUDIO_MAX_AGE = 3600;

/** `{uuid}.{43 base64url characters}`, optionally followed by `.wav` (the form the files carry). */
const TOKEN = /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.([A-Za-z0-9_-]{43})(?:\.wav)?$/;

export interface PublishedAudioDeps {
  db: Db;
  clock: Clock;
  audit: AuditWriter;
  secret: string;
  publicUrl: string;
  audio: Pick<AudioService, 'read'>;
  settings: Pick<SettingsService, 'teamSetting'>;
  /** The team's sensitive species, lower-case codes (src/modules/sensitive codesOf). */
  sensitiveCodes: (tenantId: string) => Promise<ReadonlySet<string>>;
}

export function createPublishedAudio(deps: PublishedAudioDeps) {
  const { db, clock, audit } = deps;
  const repo = createPublishedAudioRepo(db);
  const key = deriveKey(deps.secret, 'published-audio');
  const sign = (id: string) => crypto.createHmac('sha256', key).update(`published-audio:${id}`).digest('base64url');
  const tokenFor = (id: string) => `${id}.${sign(id)}`;
  const urlOf = (id: string) => `${deps.publicUrl}/api/public/audio/${tokenFor(id)}.wav`;

  /** Of these chunks, those a sensitive species of the team was heard in. */
  async function sensitiveChunks(tenantId: string, chunkIds: readonly string[]): Promise<Set<string>> {
    const codes = [...(await deps.sensitiveCodes(tenantId))];
    return new Set(await repo.chunksWithSpecies(tenantId, chunkIds, codes));
  }

  return {
    /** Whether the team publishes recordings at all (team setting publish_audio). */
    enabled: (tenantId: string) => deps.settings.teamSetting(tenantId, 'publish_audio'),

    /** 409 AUDIO_PUBLISHING_OFF when an export asks to publish and the team does not. */
    async requireEnabled(tenantId: string) {
      if (!(await deps.settings.teamSetting(tenantId, 'publish_audio')))
        throw conflict('This team does not publish recordings: a team admin turns on "publish_audio" first', 'AUDIO_PUBLISHING_OFF');
    },

    /**
     * The public link of each chunk that may be published, creating those not yet published (one
     * `audio.published` entry with their number, in the same transaction). Chunks of a sensitive
     * species, and ids that are no chunk of this team, get no link.
     */
    async publish(actor: AuditActor, tenantId: string, chunkIds: readonly string[], format: string): Promise<Map<string, string>> {
      const wanted = [...new Set(chunkIds.filter(Boolean))];
      if (wanted.length === 0) return new Map();
      const withheld = await sensitiveChunks(tenantId, wanted);
      const allowed = wanted.filter((c) => !withheld.has(c));
      const rows = await db.tx(async (tx) => {
        const known = await repo.ofChunks(tenantId, allowed, tx);
        const have = new Set(known.map((r) => r.chunkId));
        const missing = allowed.filter((c) => !have.has(c)).map((chunkId) => ({ id: newId(), chunkId }));
        if (missing.length === 0) return known;
        const added = await repo.insertMissing(tx, tenantId, missing, actor.userId, clock.now());
        if (added.length > 0)
          await audit.write(tx, actor, {
            action: 'audio.published',
            tenantId,
            targetType: 'tenant',
            targetId: tenantId,
            details: { count: added.length, format },
          });
        // Rows a concurrent export inserted first are read back; their ids are what the links name.
        return added.length === missing.length ? [...known, ...missing] : repo.ofChunks(tenantId, allowed, tx);
      });
      return new Map(rows.map((r) => [r.chunkId, urlOf(r.id)]));
    },

    /**
     * GET /public/audio/:token: the chunk's WAV, with ranges, as GET /audio/:chunkId serves it
     * (audio.read). A malformed, forged or revoked token, a chunk a sensitive species was heard in
     * and audio no longer stored all answer 404, so a guesser learns nothing from the answer.
     */
    async open(token: string, range: string | undefined): Promise<AudioResponse> {
      const m = TOKEN.exec(token);
      if (!m || !safeEqual(m[2], sign(m[1]))) throw notFound('No such recording');
      const tenantId = await repo.teamOf(m[1]);
      const row = tenantId ? await repo.find(tenantId, m[1]) : null;
      if (!row || (await sensitiveChunks(row.tenantId, [row.chunkId])).size > 0) throw notFound('No such recording');
      const res = await deps.audio.read(row.tenantId, row.chunkId, range);
      return { ...res, headers: { ...res.headers, 'cache-control': `public, max-age=${PUBLIC_AUDIO_MAX_AGE}` } };
    },

    async list(tenantId: string, limit: number, offset: number) {
      const [rows, total] = await Promise.all([repo.list(tenantId, limit, offset), repo.count(tenantId)]);
      return {
        recordings: rows.map((r) => ({
          id: r.id,
          chunkId: r.chunkId,
          url: urlOf(r.id),
          recordedAt: r.recordedAt.toISOString(),
          satelliteName: r.satelliteName,
          species: r.species,
          publishedAt: r.publishedAt.toISOString(),
          publishedBy: r.publishedBy,
        })),
        total,
      };
    },

    /** Ends one link at once: its row goes, and the next fetch answers 404. */
    async revoke(actor: AuditActor, tenantId: string, id: string) {
      await db.tx(async (tx) => {
        const gone = await repo.delete(tx, tenantId, id);
        if (!gone) throw notFound('No such published recording');
        await audit.write(tx, actor, {
          action: 'admin.published_audio_revoked',
          tenantId,
          targetType: 'published_audio',
          targetId: id,
          details: { chunkId: gone.chunkId },
        });
      });
    },

    /** Ends every link of the team; {revoked: n}. */
    async revokeAll(actor: AuditActor, tenantId: string) {
      return db.tx(async (tx) => {
        const revoked = await repo.deleteAll(tx, tenantId);
        await audit.write(tx, actor, {
          action: 'admin.published_audio_revoked_all',
          tenantId,
          targetType: 'tenant',
          targetId: tenantId,
          details: { count: revoked },
        });
        return { revoked };
      });
    },

    /** The link token of a publication's id; no checks (tests, fixtures). */
    tokenFor,

    /** The guard's team resolver for `publishedAudio` resources. */
    teamOf: repo.teamOf,
  };
}

export type PublishedAudio = ReturnType<typeof createPublishedAudio>;
