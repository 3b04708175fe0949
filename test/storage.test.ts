/**
 * The object-storage port (DESIGN.md §2): files under the data dir by default, S3 when
 * S3_URL is set. Both adapters show the same behaviours; the S3 adapter runs against a local
 * S3-compatible server (s3rver) started here.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import S3rver from 's3rver';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { ConfigError, loadConfig } from '../src/config.ts';
import { createStorage, StorageKeyError, type ObjectStorage } from '../src/infra/storage/index.ts';
import { createFileStorage } from '../src/infra/storage/files.ts';

// The SDK warns once that releases from 2027 need Node 22; the hub runs on Node 20 for now.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';

const SECRET = 'test-secret-0123456789abcdef0123456789abcdef';
const tmpDirs: string[] = [];
function tmpDir(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'chorus-storage-'));
  tmpDirs.push(d);
  return d;
}
after(() => {
  for (const d of tmpDirs) fs.rmSync(d, { recursive: true, force: true });
});

const config = (env: Record<string, string> = {}) => loadConfig({ CHORUS_DATA_DIR: tmpDir(), CHORUS_SECRET: SECRET, ...env });
const bytes = (n: number) => crypto.randomBytes(n);
const chunkKey = (tenant = 't1', sat = 's1') => `audio/${tenant}/${sat}/2030/01/02/${crypto.randomUUID()}.wav`;

const BAD_KEYS = [
  '',
  '../escape.wav',
  'audio/../../escape.wav',
  'audio/..',
  '/etc/passwd',
  '/abs/key',
  'a//b',
  './a',
  'a/./b',
  'a/',
  'a\\..\\b',
  'nul\u0000byte',
];

/** Behaviours every adapter of the port must show. */
function sharedStorageBehaviours(get: () => ObjectStorage) {
  test('put then get returns the same bytes; put overwrites; stat gives the size', async () => {
    const s = get();
    const key = chunkKey();
    const body = bytes(4096);
    await s.put(key, body, 'audio/wav');
    assert.deepEqual(await s.get(key), body);
    assert.deepEqual(await s.stat(key), { size: 4096 });
    const other = bytes(10);
    await s.put(key, other);
    assert.deepEqual(await s.get(key), other);
    assert.deepEqual(await s.stat(key), { size: 10 });
  });

  test('an empty object and a 2 MB object round-trip', async () => {
    const s = get();
    const empty = chunkKey();
    await s.put(empty, Buffer.alloc(0));
    assert.deepEqual(await s.get(empty), Buffer.alloc(0));
    assert.deepEqual(await s.stat(empty), { size: 0 });
    const big = chunkKey();
    const body = bytes(2 * 1024 * 1024);
    await s.put(big, body, 'audio/wav');
    assert.ok(body.equals((await s.get(big))!));
  });

  test('missing keys: get, getRange and stat give null; delete and deleteMany are fine', async () => {
    const s = get();
    const key = chunkKey('nobody');
    assert.equal(await s.get(key), null);
    assert.equal(await s.getRange(key, 0, 10), null);
    assert.equal(await s.stat(key), null);
    await s.delete(key);
    await s.deleteMany([key, chunkKey('nobody')]);
    await s.deleteMany([]);
  });

  test('a key prefix of stored objects is not an object', async () => {
    const s = get();
    const key = `audio/prefix-${crypto.randomUUID()}/x/y.wav`;
    await s.put(key, bytes(5));
    const folder = key.slice(0, key.lastIndexOf('/'));
    assert.equal(await s.get(folder), null);
    assert.equal(await s.stat(folder), null);
  });

  test('getRange is inclusive, clamps the end, and is empty from the end on', async () => {
    const s = get();
    const key = chunkKey();
    const body = Buffer.from('0123456789');
    await s.put(key, body);
    assert.equal((await s.getRange(key, 0, 0))!.toString(), '0');
    assert.equal((await s.getRange(key, 2, 5))!.toString(), '2345');
    assert.equal((await s.getRange(key, 0, 9))!.toString(), '0123456789');
    assert.equal((await s.getRange(key, 7, 9))!.toString(), '789');
    assert.equal((await s.getRange(key, 7, 1000))!.toString(), '789', 'the end is clamped to the last byte');
    assert.equal((await s.getRange(key, 9, 9))!.toString(), '9');
    assert.equal((await s.getRange(key, 10, 20))!.length, 0, 'a start past the last byte gives nothing');
    await assert.rejects(s.getRange(key, 5, 4), RangeError);
    await assert.rejects(s.getRange(key, -1, 4), RangeError);
    await assert.rejects(s.getRange(key, 1.5, 4), RangeError);
  });

  test('getRange on a larger object returns exactly the asked bytes', async () => {
    const s = get();
    const key = chunkKey();
    const body = bytes(300_000);
    await s.put(key, body);
    assert.ok(body.subarray(44, 100_044).equals((await s.getRange(key, 44, 100_043))!));
    assert.ok(body.subarray(299_000).equals((await s.getRange(key, 299_000, 400_000))!));
  });

  test('delete removes one object and leaves its neighbours', async () => {
    const s = get();
    const [a, b] = [chunkKey(), chunkKey()];
    await s.put(a, bytes(3));
    await s.put(b, bytes(4));
    await s.delete(a);
    assert.equal(await s.get(a), null);
    assert.equal(await s.stat(a), null);
    assert.deepEqual(await s.stat(b), { size: 4 });
    await s.delete(a);
  });

  test('deleteMany removes every listed key, present or not, and nothing else', async () => {
    const s = get();
    const keys = Array.from({ length: 40 }, () => chunkKey('many'));
    await Promise.all(keys.map((k, i) => s.put(k, bytes(i + 1))));
    const keep = chunkKey('many');
    await s.put(keep, bytes(7));
    await s.deleteMany([...keys, chunkKey('many-missing')]);
    for (const k of keys) assert.equal(await s.stat(k), null, k);
    assert.deepEqual(await s.stat(keep), { size: 7 });
  });

  test('concurrent puts of one key leave one whole body', async () => {
    const s = get();
    const key = chunkKey();
    const bodies = Array.from({ length: 8 }, () => bytes(50_000));
    await Promise.all(bodies.map((b) => s.put(key, b)));
    const got = (await s.get(key))!;
    assert.ok(
      bodies.some((b) => b.equals(got)),
      'the stored object is one of the bodies, not a mix',
    );
  });

  test('keys with "..", absolute paths, empty segments or control characters are refused by every method', async () => {
    const s = get();
    for (const key of BAD_KEYS) {
      await assert.rejects(s.put(key, bytes(3)), StorageKeyError, `put ${JSON.stringify(key)}`);
      await assert.rejects(s.get(key), StorageKeyError, `get ${JSON.stringify(key)}`);
      await assert.rejects(s.getRange(key, 0, 1), StorageKeyError, `getRange ${JSON.stringify(key)}`);
      await assert.rejects(s.stat(key), StorageKeyError, `stat ${JSON.stringify(key)}`);
      await assert.rejects(s.delete(key), StorageKeyError, `delete ${JSON.stringify(key)}`);
    }
    const fine = chunkKey();
    await s.put(fine, bytes(3));
    await assert.rejects(s.deleteMany([fine, '../escape.wav']), StorageKeyError);
    assert.deepEqual(await s.stat(fine), { size: 3 }, 'a refused batch deletes nothing');
  });
}

function walk(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile())
    .map((e) => path.join(e.parentPath, e.name));
}

describe('object storage: files', () => {
  let dataDir: string;
  let storage: ObjectStorage;
  before(() => {
    const c = config();
    dataDir = c.dataDir;
    storage = createStorage(c);
  });
  after(() => storage.close());

  sharedStorageBehaviours(() => storage);

  test('without S3_URL the files adapter keeps objects under $CHORUS_DATA_DIR/objects at their key', async () => {
    assert.equal(storage.kind, 'files');
    const key = 'audio/tenant-a/sat-b/2030/05/06/chunk-1.wav';
    const body = bytes(64);
    await storage.put(key, body, 'audio/wav');
    const file = path.join(dataDir, 'objects', ...key.split('/'));
    assert.deepEqual(fs.readFileSync(file), body);
  });

  test('puts leave no temp file behind, also when a put fails', async () => {
    const root = tmpDir();
    const s = createFileStorage(root);
    const keys = Array.from({ length: 20 }, () => chunkKey('tmp'));
    await Promise.all(keys.map((k) => s.put(k, bytes(1000))));
    await Promise.all(keys.slice(0, 10).map((k) => s.put(k, bytes(500))));
    // A key naming an existing folder: the rename fails, the temp file must go.
    await s.put('clash/inner.wav', bytes(3));
    await assert.rejects(s.put('clash', bytes(3)));
    const files = walk(root).map((f) => path.relative(root, f).split(path.sep).join('/'));
    assert.deepEqual(files.sort(), [...keys, 'clash/inner.wav'].sort());
    assert.ok(!files.some((f) => f.endsWith('.tmp')));
  });

  test('refused keys write nothing outside the root', async () => {
    const parent = tmpDir();
    const root = path.join(parent, 'objects');
    const s = createFileStorage(root);
    for (const key of BAD_KEYS) await assert.rejects(s.put(key, bytes(3)), StorageKeyError);
    assert.deepEqual(walk(parent), []);
  });
});

describe('object storage: S3 (against a local s3rver)', () => {
  let server: S3rver;
  let endpoint: string;
  let storage: ObjectStorage;
  const BUCKET = `chorus-test-${crypto.randomBytes(3).toString('hex')}`;

  before(async () => {
    server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: tmpDir() });
    const { port } = (await server.run()) as AddressInfo;
    endpoint = `http://127.0.0.1:${port}`;
    // s3rver accepts the key pair S3RVER / S3RVER; here they travel in the URL.
    const c = config({ S3_URL: `http://S3RVER:S3RVER@127.0.0.1:${port}`, S3_BUCKET: BUCKET });
    storage = createStorage(c);
  });
  after(async () => {
    await storage?.close();
    await server?.close();
  });

  test('S3_URL selects the S3 adapter; the first put creates the missing bucket', async () => {
    assert.equal(storage.kind, 's3');
    const key = chunkKey();
    await storage.put(key, bytes(12), 'audio/wav');
    assert.deepEqual(await storage.stat(key), { size: 12 });
  });

  sharedStorageBehaviours(() => storage);

  test('objects are stored in the bucket at their key with their content type', async () => {
    const key = 'audio/tenant-a/sat-b/2030/05/06/chunk-ct.wav';
    const body = bytes(33);
    await storage.put(key, body, 'audio/wav');
    const raw = new S3Client({
      endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    });
    try {
      const res = await raw.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
      assert.equal(res.ContentType, 'audio/wav');
      assert.ok(body.equals(Buffer.from(await res.Body!.transformToByteArray())));
    } finally {
      raw.destroy();
    }
  });

  // s3rver checks the access key id but not V4 signatures, so the wrong part here is the id.
  test('credentials from S3_ACCESS_KEY_ID / S3_SECRET_ACCESS_KEY are used (an unknown key id is refused)', async () => {
    const good = createStorage(config({ S3_URL: endpoint, S3_BUCKET: BUCKET, S3_ACCESS_KEY_ID: 'S3RVER', S3_SECRET_ACCESS_KEY: 'S3RVER' }));
    const bad = createStorage(
      config({
        S3_URL: `http://S3RVER:S3RVER@${new URL(endpoint).host}`,
        S3_BUCKET: BUCKET,
        S3_ACCESS_KEY_ID: 'NOT-A-KEY',
        S3_SECRET_ACCESS_KEY: 'S3RVER',
      }),
    );
    try {
      const key = chunkKey();
      await good.put(key, bytes(9));
      assert.deepEqual(await good.stat(key), { size: 9 });
      await assert.rejects(bad.get(key));
      await assert.rejects(bad.put(chunkKey(), bytes(9)));
    } finally {
      await good.close();
      await bad.close();
    }
  });
});

describe('object storage: configuration', () => {
  test('defaults: no S3, bucket "chorus", region us-east-1, no credentials', () => {
    const c = config();
    assert.equal(c.s3Url, null);
    assert.equal(c.s3Bucket, 'chorus');
    assert.equal(c.s3Region, 'us-east-1');
    assert.equal(c.s3AccessKeyId, null);
    assert.equal(c.s3SecretAccessKey, null);
  });

  test('credentials come from the URL, and the variables win over it', () => {
    const fromUrl = config({ S3_URL: 'https://minio%40ops:p%2Fss@s3.example.org:9000', S3_REGION: 'eu-west-1', S3_BUCKET: 'audio.bucket' });
    assert.equal(fromUrl.s3AccessKeyId, 'minio@ops');
    assert.equal(fromUrl.s3SecretAccessKey, 'p/ss');
    assert.equal(fromUrl.s3Region, 'eu-west-1');
    assert.equal(fromUrl.s3Bucket, 'audio.bucket');
    const fromVars = config({ S3_URL: 'https://u:p@s3.example.org', S3_ACCESS_KEY_ID: 'AKIA', S3_SECRET_ACCESS_KEY: 'sekret' });
    assert.equal(fromVars.s3AccessKeyId, 'AKIA');
    assert.equal(fromVars.s3SecretAccessKey, 'sekret');
  });

  test('bad values stop the start with a message naming the variable', () => {
    assert.throws(
      () => config({ S3_URL: 'ftp://s3.example.org' }),
      (e: Error) => e instanceof ConfigError && /S3_URL/.test(e.message),
    );
    assert.throws(
      () => config({ S3_URL: 'not a url' }),
      (e: Error) => e instanceof ConfigError && /S3_URL/.test(e.message),
    );
    assert.throws(
      () => config({ S3_URL: 'http://s3.example.org', S3_BUCKET: 'Bad_Bucket' }),
      (e: Error) => e instanceof ConfigError && /S3_BUCKET/.test(e.message),
    );
    assert.throws(
      () => config({ S3_URL: 'http://s3.example.org', S3_ACCESS_KEY_ID: 'only-the-id' }),
      (e: Error) => e instanceof ConfigError && /S3_SECRET_ACCESS_KEY/.test(e.message),
    );
  });
});
