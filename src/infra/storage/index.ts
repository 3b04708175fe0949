import path from 'node:path';
import type { Config } from '../../config.ts';
import { createFileStorage } from './files.ts';
import { createS3Storage } from './s3.ts';
import type { ObjectStorage } from './types.ts';

export type { ObjectStorage } from './types.ts';
export { StorageKeyError } from './checks.ts';

export type StorageConfig = Pick<Config, 'dataDir' | 's3Url' | 's3Bucket' | 's3Region' | 's3AccessKeyId' | 's3SecretAccessKey'>;

/** Files under `${dataDir}/objects` by default; S3 when `S3_URL` is set. */
export function createStorage(config: StorageConfig, opts: { dir?: string } = {}): ObjectStorage {
  if (config.s3Url) {
    return createS3Storage({
      url: config.s3Url,
      bucket: config.s3Bucket,
      region: config.s3Region,
      accessKeyId: config.s3AccessKeyId,
      secretAccessKey: config.s3SecretAccessKey,
    });
  }
  return createFileStorage(opts.dir ?? path.join(config.dataDir, 'objects'));
}
