import fs from 'node:fs';
import fsp from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { createRequire } from 'node:module';
import type * as S3 from '@aws-sdk/client-s3';
import { checkKey, checkRange } from './checks.ts';
import type { ObjectStorage } from './types.ts';

export interface S3StorageOptions {
  /** Endpoint URL (http or https); a user:pass in it is used when no keys are given. */
  url: string;
  bucket: string;
  region: string;
  accessKeyId: string | null;
  secretAccessKey: string | null;
}

interface AwsError {
  name?: string;
  Code?: string;
  $metadata?: { httpStatusCode?: number };
}
const errName = (e: unknown) => (e as AwsError)?.name ?? (e as AwsError)?.Code ?? '';
const errStatus = (e: unknown) => (e as AwsError)?.$metadata?.httpStatusCode;
const isNoSuchKey = (e: unknown) =>
  ['NoSuchKey', 'NotFound'].includes(errName(e)) || (errStatus(e) === 404 && errName(e) !== 'NoSuchBucket');
const isNoSuchBucket = (e: unknown) => errName(e) === 'NoSuchBucket';
const isInvalidRange = (e: unknown) => errName(e) === 'InvalidRange' || errStatus(e) === 416;

const toBuffer = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);

/**
 * S3-compatible storage (AWS, MinIO, R2, …) with path-style addressing. The bucket is created
 * on the first put that finds it missing, so a fresh MinIO works without a setup step.
 */
/** The AWS SDK takes most of a second to load: only a process that stores in S3 loads it. */
const loadSdk = () => createRequire(import.meta.url)('@aws-sdk/client-s3') as typeof S3;

export function createS3Storage(opts: S3StorageOptions): ObjectStorage {
  const {
    CreateBucketCommand,
    DeleteObjectCommand,
    DeleteObjectsCommand,
    GetObjectCommand,
    HeadObjectCommand,
    PutObjectCommand,
    S3Client,
  } = loadSdk();
  const url = new URL(opts.url);
  const accessKeyId = opts.accessKeyId ?? (url.username ? decodeURIComponent(url.username) : null);
  const secretAccessKey = opts.secretAccessKey ?? (url.password ? decodeURIComponent(url.password) : null);
  url.username = '';
  url.password = '';
  const endpoint = url.toString().replace(/\/$/, '');
  const client = new S3Client({
    endpoint,
    region: opts.region,
    forcePathStyle: true,
    // Without keys the SDK's own provider chain applies (environment, instance role, …).
    ...(accessKeyId && secretAccessKey ? { credentials: { accessKeyId, secretAccessKey } } : {}),
    // S3-compatible servers vary in support for the newer default checksums: only send and
    // check them where the operation requires it.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    requestHandler: { connectionTimeout: 5_000, requestTimeout: 60_000 },
  });
  const Bucket = opts.bucket;

  async function createBucket(): Promise<void> {
    try {
      await client.send(new CreateBucketCommand({ Bucket }));
    } catch (e) {
      if (!['BucketAlreadyOwnedByYou', 'BucketAlreadyExists'].includes(errName(e))) throw e;
    }
  }

  return {
    kind: 's3',

    async put(key, body, contentType) {
      const command = () =>
        new PutObjectCommand({
          Bucket,
          Key: checkKey(key),
          Body: body,
          ContentLength: body.length,
          ContentType: contentType ?? 'application/octet-stream',
        });
      try {
        await client.send(command());
      } catch (e) {
        if (!isNoSuchBucket(e)) throw e;
        await createBucket();
        await client.send(command());
      }
    },

    async putFile(key, file, contentType) {
      checkKey(key);
      const { size } = await fsp.stat(file);
      await client.send(
        new PutObjectCommand({ Bucket, Key: key, Body: fs.createReadStream(file), ContentLength: size, ContentType: contentType }),
      );
    },

    async stream(key) {
      checkKey(key);
      try {
        const res = await client.send(new GetObjectCommand({ Bucket, Key: key }));
        return res.Body as Readable;
      } catch (e) {
        if (isNoSuchKey(e)) return null;
        throw e;
      }
    },

    async get(key) {
      try {
        const res = await client.send(new GetObjectCommand({ Bucket, Key: checkKey(key) }));
        return toBuffer(await res.Body!.transformToByteArray());
      } catch (e) {
        if (isNoSuchKey(e)) return null;
        throw e;
      }
    },

    async getRange(key, start, end) {
      checkRange(start, end);
      try {
        const res = await client.send(new GetObjectCommand({ Bucket, Key: checkKey(key), Range: `bytes=${start}-${end}` }));
        const body = toBuffer(await res.Body!.transformToByteArray());
        // A server may send more than asked: the whole object (200, no Content-Range), or a
        // wider range (s3rver answers `bytes=0-0` with every byte). Cut out the asked bytes.
        const from = Number(/^bytes (\d+)-/.exec(res.ContentRange ?? '')?.[1] ?? 0);
        if (from > start) throw new Error(`S3 returned bytes from ${from} for a range starting at ${start}`);
        return body.subarray(start - from, end - from + 1);
      } catch (e) {
        if (isNoSuchKey(e)) return null;
        // The start lies at or past the end of an existing object.
        if (isInvalidRange(e)) return Buffer.alloc(0);
        throw e;
      }
    },

    async stat(key) {
      try {
        const res = await client.send(new HeadObjectCommand({ Bucket, Key: checkKey(key) }));
        return { size: res.ContentLength ?? 0 };
      } catch (e) {
        if (isNoSuchKey(e)) return null;
        throw e;
      }
    },

    async delete(key) {
      try {
        await client.send(new DeleteObjectCommand({ Bucket, Key: checkKey(key) }));
      } catch (e) {
        if (!isNoSuchKey(e)) throw e;
      }
    },

    async deleteMany(keys) {
      keys.forEach(checkKey); // refuse a bad key before deleting anything
      for (let i = 0; i < keys.length; i += 1000) {
        const batch = keys.slice(i, i + 1000);
        const res = await client.send(
          new DeleteObjectsCommand({ Bucket, Delete: { Objects: batch.map((Key) => ({ Key })), Quiet: true } }),
        );
        const errors = (res.Errors ?? []).filter((err) => err.Code !== 'NoSuchKey');
        if (errors.length > 0) {
          throw new Error(
            `S3 delete failed for ${errors.length} object(s), first: ${errors[0].Key}: ${errors[0].Code} ${errors[0].Message ?? ''}`.trim(),
          );
        }
      }
    },

    // A bucket reports no free space; the hub says so instead of guessing.
    freeSpace: async () => null,

    async close() {
      client.destroy();
    },
  };
}
