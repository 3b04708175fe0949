/**
 * Mobile app releases (issue 22): hub admins upload app packages (.apk, .aab, .ipa) with a
 * SemVer version, notes and a force flag; the app asks GET /mobile/latest whether it should
 * update and downloads the package, with range requests so a broken download can resume.
 *
 * An upload streams to a temp file under `${dataDir}/tmp` while its SHA-256 and size are
 * counted (the package is never held in memory), is checked (extension, zip magic, size,
 * version), then copied into object storage under `mobile/`. A refused upload leaves no temp
 * file, no object and no row.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Db } from '../../infra/db/index.ts';
import type { Clock } from '../../core/clock.ts';
import type { Actor } from '../../core/actor.ts';
import type { AuditWriter } from '../audit/writer.ts';
import type { ObjectStorage } from '../../infra/storage/index.ts';
import { newId } from '../../core/crypto.ts';
import { badRequest, conflict, notFound, payloadTooLarge } from '../../core/errors.ts';
import { bySemverDescending, isNewerSemver, isSemver, semverKey } from '../../protocol/version.ts';
import { parseRange } from '../audio/service.ts';
import { createMobileRepo, type MobileReleaseRow } from './repo.ts';

/** How many uploads GET /mobile/releases lists (spec §8). */
export const RECENT_RELEASES = 20;
/** The largest range one request answers: a longer range is answered in part (206 with the bytes sent), so memory stays bounded. */
export const MAX_RANGE_BYTES = 16 * 1024 * 1024;
/** Package types by extension; each is a zip archive. */
export const PACKAGE_TYPES: Record<string, string> = {
  apk: 'application/vnd.android.package-archive',
  aab: 'application/octet-stream',
  ipa: 'application/octet-stream',
};
const ZIP_MAGIC = Buffer.from([0x50, 0x4b, 0x03, 0x04]);
export const MAX_NOTES = 10_000;

const invalidPackage = (message: string) => badRequest(message, 'INVALID_PACKAGE');

/** A received package waiting in its temp file. */
export interface StagedPackage {
  file: string;
  extension: string;
  size: number;
  sha256: string;
}

export interface ReleaseFields {
  version: string;
  notes: string;
  forceUpdate: boolean;
}

export const downloadUrlOf = (id: string) => `/api/mobile/download/${id}`;

export function presentRelease(r: MobileReleaseRow) {
  return {
    id: r.id,
    version: r.version,
    notes: r.notes,
    forceUpdate: r.forceUpdate,
    fileSize: r.fileSize,
    sha256: r.sha256,
    downloadUrl: downloadUrlOf(r.id),
    createdAt: new Date(r.createdAt).toISOString(),
  };
}

export interface PackageResponse {
  status: 200 | 206 | 416;
  headers: Record<string, string>;
  body: Readable | Buffer | null;
}

export function createMobileService(deps: {
  db: Db;
  clock: Clock;
  audit: AuditWriter;
  storage: Pick<ObjectStorage, 'putFile' | 'stream' | 'getRange' | 'stat' | 'delete'>;
  /** Where uploads wait while they are received and checked. */
  tempDir: string;
  /** `MOBILE_MAX_BYTES`. */
  maxBytes: number;
}) {
  const { db, clock, audit, storage, tempDir, maxBytes } = deps;
  const repo = createMobileRepo(db);

  async function require(id: string, tx: Db = db): Promise<MobileReleaseRow> {
    const r = await repo.find(id, tx);
    if (!r) throw notFound('No such mobile release');
    return r;
  }

  /** Releases by SemVer precedence, highest first. */
  async function byPrecedence() {
    return (await repo.versions()).sort((a, b) => bySemverDescending(a.version, b.version));
  }

  const discard = (staged: Pick<StagedPackage, 'file'>) => fsp.rm(staged.file, { force: true });

  return {
    maxBytes,

    /**
     * Receives one package into a temp file, counting its SHA-256 and size on the way. The upload
     * reader hands over at most one byte past the limit, so the count tells an oversize package.
     */
    async stage(filename: string, body: Readable): Promise<StagedPackage> {
      const extension = /\.([a-z0-9]+)$/i.exec(filename)?.[1]?.toLowerCase() ?? '';
      if (!Object.hasOwn(PACKAGE_TYPES, extension)) {
        body.resume();
        throw invalidPackage(`The package must be an .apk, .aab or .ipa file, got ${JSON.stringify(filename.slice(-100))}`);
      }
      await fsp.mkdir(tempDir, { recursive: true });
      const file = path.join(tempDir, `mobile-upload-${newId()}.${extension}`);
      const hash = crypto.createHash('sha256');
      let size = 0;
      let head = Buffer.alloc(0);
      const count = new Transform({
        transform(chunk: Buffer, _enc, done) {
          hash.update(chunk);
          size += chunk.length;
          if (head.length < ZIP_MAGIC.length) head = Buffer.concat([head, chunk.subarray(0, ZIP_MAGIC.length - head.length)]);
          done(null, chunk);
        },
      });
      try {
        await pipeline(body, count, fs.createWriteStream(file, { flags: 'wx', mode: 0o600 }));
        if (size > maxBytes) throw payloadTooLarge(`The package is larger than ${maxBytes} bytes (MOBILE_MAX_BYTES)`);
        if (!head.equals(ZIP_MAGIC)) throw invalidPackage(`The file is not an app package: an .${extension} file is a zip archive`);
      } catch (err) {
        await discard({ file });
        throw err;
      }
      return { file, extension, size, sha256: hash.digest('hex') };
    },

    discard,

    /** Stores a staged package as a release; the temp file is gone when this returns, stored or refused. */
    async upload(actor: Actor, staged: StagedPackage, fields: ReleaseFields) {
      let key: string | null = null;
      try {
        if (!isSemver(fields.version))
          throw badRequest(`version must be a SemVer version such as 1.4.2, got ${JSON.stringify(fields.version)}`, 'INVALID_VERSION');
        const versionKey = semverKey(fields.version);
        if (await repo.hasVersionKey(versionKey)) throw versionExists(fields.version);
        const id = newId();
        key = `mobile/${id}.${staged.extension}`;
        await storage.putFile(key, staged.file, PACKAGE_TYPES[staged.extension]);
        const row: MobileReleaseRow = {
          id,
          version: fields.version,
          notes: fields.notes,
          forceUpdate: fields.forceUpdate,
          extension: staged.extension,
          storageKey: key,
          fileSize: staged.size,
          sha256: staged.sha256,
          uploadedBy: actor.userId,
          createdAt: clock.now(),
        };
        try {
          await db.tx(async (tx) => {
            await repo.insert(tx, { ...row, versionKey });
            await audit.write(tx, actor, {
              action: 'admin.mobile_release_uploaded',
              tenantId: null,
              targetType: 'mobile_release',
              targetId: id,
              details: { version: row.version, forceUpdate: row.forceUpdate, fileSize: row.fileSize, sha256: row.sha256 },
            });
          });
        } catch (err) {
          // Two uploads of one version at once: the second meets the unique index.
          if ((err as { code?: string }).code === '23505') throw versionExists(fields.version);
          throw err;
        }
        key = null;
        return presentRelease(row);
      } finally {
        await discard(staged);
        if (key) await storage.delete(key).catch(() => {});
      }
    },

    recent: async () => ({ releases: (await repo.recent(RECENT_RELEASES)).map(presentRelease) }),

    /** The highest release by SemVer precedence, or null (GET /system/versions). */
    latestVersion: async (): Promise<string | null> => (await byPrecedence())[0]?.version ?? null,

    /**
     * GET /mobile/latest: the highest release and whether the caller at `current` should
     * install it. forceUpdate: some release newer than `current` is forced (skipping a forced
     * release is not allowed by installing none). Without `current`, the highest release as it is.
     */
    async latest(current: string | undefined) {
      if (current !== undefined && !isSemver(current)) {
        throw badRequest(
          `current must be a SemVer version such as 1.4.2, got ${JSON.stringify(String(current).slice(0, 70))}`,
          'INVALID_VERSION',
        );
      }
      const all = await byPrecedence();
      if (all.length === 0) {
        return { updateAvailable: false, version: null, downloadUrl: null, fileSize: null, sha256: null, forceUpdate: false, notes: null };
      }
      const top = await require(all[0].id);
      const newer = current === undefined ? null : all.filter((r) => isNewerSemver(r.version, current));
      const updateAvailable = newer === null || newer.length > 0;
      const forceUpdate = newer === null ? top.forceUpdate : newer.some((r) => r.forceUpdate);
      const { version, downloadUrl, fileSize, sha256, notes } = presentRelease(top);
      return { updateAvailable, version, downloadUrl, fileSize, sha256, forceUpdate, notes };
    },

    /** GET /mobile/download/:id: the package, whole (streamed) or the range asked for. */
    async open(id: string, range: string | undefined): Promise<PackageResponse> {
      const r = await require(id);
      const stat = await storage.stat(r.storageKey);
      if (!stat) throw notFound('The package of this release is no longer stored');
      const headers = {
        'content-type': PACKAGE_TYPES[r.extension] ?? 'application/octet-stream',
        'content-disposition': `attachment; filename="chorus-${r.version}.${r.extension}"`,
        'accept-ranges': 'bytes',
        etag: `"${r.sha256}"`,
        'cache-control': 'public, max-age=86400',
      };
      const wanted = parseRange(range, stat.size);
      if (wanted === 'unsatisfiable') return { status: 416, headers: { ...headers, 'content-range': `bytes */${stat.size}` }, body: null };
      if (!wanted) {
        const body = await storage.stream(r.storageKey);
        if (!body) throw notFound('The package of this release is no longer stored');
        return { status: 200, headers: { ...headers, 'content-length': String(stat.size) }, body };
      }
      const end = Math.min(wanted.end, wanted.start + MAX_RANGE_BYTES - 1);
      const body = await storage.getRange(r.storageKey, wanted.start, end);
      if (!body) throw notFound('The package of this release is no longer stored');
      return {
        status: 206,
        headers: {
          ...headers,
          'content-length': String(body.length),
          'content-range': `bytes ${wanted.start}-${wanted.start + body.length - 1}/${stat.size}`,
        },
        body,
      };
    },

    async setForce(actor: Actor, id: string, forceUpdate: boolean) {
      await db.tx(async (tx) => {
        const r = await require(id, tx);
        await repo.setForce(tx, id, forceUpdate);
        await audit.write(tx, actor, {
          action: 'admin.mobile_release_updated',
          tenantId: null,
          targetType: 'mobile_release',
          targetId: id,
          details: { version: r.version, forceUpdate: { from: r.forceUpdate, to: forceUpdate } },
        });
      });
      return presentRelease(await require(id));
    },

    async remove(actor: Actor, id: string) {
      const removed = await db.tx(async (tx) => {
        const r = await require(id, tx);
        await repo.remove(tx, id);
        await audit.write(tx, actor, {
          action: 'admin.mobile_release_deleted',
          tenantId: null,
          targetType: 'mobile_release',
          targetId: id,
          details: { version: r.version, sha256: r.sha256 },
        });
        return r;
      });
      // The object goes after the commit: a failed delete leaves an orphan object, never a row without its file.
      await storage.delete(removed.storageKey);
    },
  };
}

const versionExists = (version: string) =>
  conflict(`A release with version ${version} exists already (build metadata does not tell releases apart)`, 'VERSION_EXISTS');

export type MobileService = ReturnType<typeof createMobileService>;
