/**
 * Species photos (issue 20) over HTTP against local servers that play Wikimedia Commons and
 * iNaturalist with real JPEGs: licences filtered and credit stored, one object per photo,
 * bird-centred squares (checked on the crop's pixels), proxy parameters, cache headers and
 * ETag revalidation, the pending → settled lifetimes on the injected clock, hostile images
 * refused with nothing stored, retries, and the hub admin's cache operations.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import sharp from 'sharp';
import { startHub, type Hub } from './helpers/hub.ts';
import { factories } from './helpers/factories.ts';
import { assertError, client, type Credential } from './helpers/http.ts';
import { birdJpeg, birdPixels, bombPng, startFakeProviders, type Bird, type FakeProviders } from './helpers/photo-providers.ts';
import { startReceiver, type Answer, type Received } from './helpers/receivers.ts';
import { allowedLicence } from '../src/modules/species-images/providers/licence.ts';
import { createFetcher, RefusedImage } from '../src/modules/species-images/providers/fetch.ts';
import { UpstreamError } from '../src/modules/species-images/providers/types.ts';
import { parseAllowList } from '../src/infra/outbound/index.ts';
import { BLOCKED_URLS } from './helpers/ssrf.ts';
import { checkImage } from '../src/modules/species-images/image.ts';
import { waitFor } from './helpers/wait.ts';

const ROBIN_COMMONS: Bird = { width: 900, height: 500, x: 0.85, y: 0.6 };
const ROBIN_INAT: Bird = { width: 600, height: 900, x: 0.25, y: 0.12, noisy: true };
const LOCAL = parseAllowList('127.0.0.1');

/** A service on 127.0.0.2 (loopback, but not the listed 127.0.0.1): what an SSRF would be after. */
async function startInternalServer(body: Buffer): Promise<{ url: string; received: Received[]; close: () => Promise<void> }> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    received.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body: Buffer.alloc(0) });
    res.writeHead(200, { 'content-type': 'image/jpeg' });
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.2', resolve));
  return {
    url: `http://127.0.0.2:${(server.address() as AddressInfo).port}`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Dark pixels (the bird) in a JPEG, as a fraction of its pixels. */
async function darkFraction(jpeg: Buffer): Promise<number> {
  const { data, info } = await sharp(jpeg).raw().toBuffer({ resolveWithObject: true });
  let dark = 0;
  for (let i = 0; i < data.length; i += info.channels) if ((data[i] + data[i + 1] + data[i + 2]) / 3 < 110) dark++;
  return dark / (info.width * info.height);
}

/** The bird's pixels over the largest square of the scene: what a crop that holds all of the bird shows. */
function expectedDark(b: Bird): number {
  const raw = birdPixels(b);
  let dark = 0;
  for (let i = 0; i < raw.length; i += 3) if (raw[i] < 60) dark++;
  return dark / Math.min(b.width, b.height) ** 2;
}

describe('species photos', () => {
  let fake: FakeProviders;
  let hub: Hub;
  let api: ReturnType<typeof client>;
  let w: Awaited<ReturnType<ReturnType<typeof factories>['world']>>;

  before(async () => {
    fake = await startFakeProviders();
    fake.files.set('robin-a.jpg', { body: await birdJpeg(ROBIN_COMMONS), type: 'image/jpeg' });
    fake.files.set('robin-nc.jpg', { body: await birdJpeg({ ...ROBIN_COMMONS, x: 0.2 }), type: 'image/jpeg' });
    fake.files.set('robin-inat.jpg', { body: await birdJpeg(ROBIN_INAT), type: 'image/jpeg' });
    fake.files.set('bomb.png', { body: bombPng(), type: 'image/png' });
    fake.files.set('page.jpg', { body: Buffer.from('<!doctype html><title>not an image</title>'), type: 'image/jpeg' });
    fake.files.set('swallow.jpg', { body: await birdJpeg({ width: 400, height: 300, x: 0.5, y: 0.5 }), type: 'image/jpeg' });
    fake.commonsPhotos.set('Erithacus rubecula', [
      { id: 1, file: 'robin-nc.jpg', licence: 'CC BY-NC-SA 4.0', author: 'Nora NonCommercial' },
      { id: 2, file: 'robin-nc.jpg', licence: null, author: 'Rita Reserved' },
      { id: 3, file: 'robin-a.jpg', licence: 'CC BY-SA 4.0', author: 'Anna <b>Fotograf</b> &amp; Co' },
    ]);
    fake.inatPhotos.set('Erithacus rubecula', [
      { id: 77, file: 'robin-nc.jpg', licence: 'cc-by-nc', author: 'Ned NC' },
      { id: 78, file: 'robin-inat.jpg', licence: 'cc-by', author: 'Ivo Inat' },
    ]);
    fake.commonsPhotos.set('Turdus merula', [
      { id: 10, file: 'bomb.png', licence: 'CC0', author: 'Bo Bomb' },
      { id: 11, file: 'page.jpg', licence: 'CC BY 4.0', author: 'Pia Page' },
    ]);
    fake.commonsPhotos.set('Hirundo rustica', [{ id: 20, file: 'swallow.jpg', licence: 'CC BY 2.0', author: 'Sven Swallow' }]);
    hub = await startHub({ env: { ...fake.env, IMAGES_PROVIDERS: 'wikimedia,inaturalist' } });
    api = client(hub.url);
    w = await factories(hub).world();
  });
  after(async () => {
    await hub?.close();
    await fake?.close();
  });

  const statusOf = async (code: string, as: Credential = w.viewer) => {
    const res = await api.post('/species/images', { codes: [code] }, as);
    assert.equal(res.status, 200, res.text);
    return res.body.images[0];
  };
  const settle = (code: string) =>
    waitFor(`${code} settled`, async () => ((await statusOf(code)).status !== 'pending' ? statusOf(code) : null));
  const analysed = () =>
    waitFor(
      'analysis',
      async () => (await hub.sql.one<{ n: number }>('SELECT count(*)::int AS n FROM species_images WHERE analysed_at IS NULL')).n === 0,
    );
  const image = async (p: string, as: Credential | null = w.viewer, headers: Record<string, string> = {}) => {
    const h: Record<string, string> = { ...headers };
    if (as?.token) h.authorization = `Bearer ${as.token}`;
    const res = await fetch(`${hub.url}/api${p}`, { headers: h });
    return { status: res.status, headers: res.headers, body: Buffer.from(await res.arrayBuffer()) };
  };

  test('a request queues the missing species; licensed photos are stored once each with their credit', async () => {
    const first = await api.post('/species/images', { codes: ['eurrob1', 'eurrob1', 'zzz-nobird'] }, w.viewer);
    assert.equal(first.status, 200, first.text);
    assert.deepEqual(
      first.body.images.map((i: { code: string; status: string }) => [i.code, i.status]),
      [
        ['eurrob1', 'pending'],
        ['zzz-nobird', 'pending'],
      ],
    );
    const robin = await settle('eurrob1');
    assert.equal(robin.status, 'ready');
    assert.equal(robin.author, 'Anna Fotograf & Co');
    assert.equal(robin.licence, 'CC BY-SA 4.0');
    assert.match(robin.sourceUrl, /\/wiki\/File:robin-a\.jpg$/);
    assert.match(robin.squareUrl, /^\/api\/species\/image\/by-key\?key=[0-9a-f-]{36}&square=128$/);
    assert.equal((await settle('zzz-nobird')).status, 'none');

    const g = await api.get('/species/image-gallery?code=eurrob1', w.viewer);
    assert.equal(g.status, 200, g.text);
    assert.deepEqual(
      g.body.photos.map((p: Record<string, unknown>) => [p.provider, p.author, p.licence, p.licenceUrl]),
      [
        ['wikimedia', 'Anna Fotograf & Co', 'CC BY-SA 4.0', 'https://creativecommons.org/licenses/by-sa/4.0/'],
        ['inaturalist', 'Ivo Inat', 'CC BY 4.0', 'https://creativecommons.org/licenses/by/4.0/'],
      ],
    );
    assert.equal(g.body.photos[1].sourceUrl, 'https://www.inaturalist.org/photos/78');
    assert.equal(g.body.photos[0].originalBytes, fake.files.get('robin-a.jpg')!.body.length);
    // NC and all-rights-reserved photos were never downloaded.
    const fetched = [...fake.commons.received, ...fake.inat.received].map((r) => r.path).filter((p) => p.startsWith('/files/'));
    assert.deepEqual(fetched.sort(), ['/files/robin-a.jpg', '/files/robin-inat.jpg']);
    for (const p of g.body.photos) {
      const row = await hub.sql.one<{ storageKey: string; displayKey: string }>(
        'SELECT storage_key AS "storageKey", display_key AS "displayKey" FROM species_images WHERE id = $1',
        [p.key],
      );
      assert.ok(await hub.infra.storage.stat(row.storageKey), 'original stored');
      assert.ok(await hub.infra.storage.stat(row.displayKey), 'display copy stored');
    }
    // Asking again downloads nothing more.
    assert.equal((await statusOf('eurrob1')).status, 'ready');
    assert.equal((await hub.sql.one<{ n: number }>(`SELECT count(*)::int AS n FROM species_images WHERE species_code = 'eurrob1'`)).n, 2);
  });

  test('square crops hold the bird, found by attention, not the geometric centre', async () => {
    await analysed();
    const g = (await api.get('/species/image-gallery?code=eurrob1', w.viewer)).body;
    for (const [i, scene] of [ROBIN_COMMONS, ROBIN_INAT].entries()) {
      for (const size of [64, 128, 256, 512]) {
        const res = await image(`/species/image/by-key?key=${g.photos[i].key}&square=${size}`);
        assert.equal(res.status, 200);
        assert.equal(res.headers.get('content-type'), 'image/jpeg');
        const meta = await sharp(res.body).metadata();
        assert.deepEqual([meta.format, meta.width, meta.height], ['jpeg', size, size]);
        if (size >= 256) assert.ok((await darkFraction(res.body)) > 0.9 * expectedDark(scene), `photo ${i} square ${size} misses the bird`);
      }
      // The geometric centre square would have missed it: the check above can fail.
      const centre = await sharp(await birdJpeg(scene))
        .resize(256, 256, { fit: 'cover', position: 'centre' })
        .toBuffer();
      assert.ok((await darkFraction(centre)) < 0.5 * expectedDark(scene), 'the centre square misses the bird');
    }
  });

  test('proxy and by-key: display copy, original, maxBytes fallback, square sizes; bad parameters are 400', async () => {
    const display = await image('/species/image/proxy?code=eurrob1');
    assert.equal(display.status, 200);
    assert.equal(display.headers.get('content-type'), 'image/jpeg');
    const original = await image('/species/image/proxy?code=eurrob1&original=1');
    assert.deepEqual(original.body, fake.files.get('robin-a.jpg')!.body);
    const capped = await image(`/species/image/proxy?code=eurrob1&original=1&maxBytes=${original.body.length - 1}`);
    assert.deepEqual(capped.body, display.body);
    const roomy = await image(`/species/image/proxy?code=eurrob1&original=1&maxBytes=${8 * 1024 * 1024}`);
    assert.deepEqual(roomy.body, original.body);
    for (const bad of [
      'square=100',
      'square=0',
      'square=1024',
      'square=abc',
      'maxBytes=0',
      'original=maybe',
      'url=http://169.254.169.254/',
    ]) {
      const res = await api.get(`/species/image/proxy?code=eurrob1&${bad}`, w.viewer);
      assert.equal(res.status, 400, `${bad}: ${res.text}`);
    }
    assertError(await api.get('/species/image/proxy?code=eurrob1&square=100', w.viewer), 400, 'INVALID_SQUARE_SIZE');
    assertError(await api.get('/species/image/proxy?code=gretit1', w.viewer), 404, 'NOT_FOUND');
    assertError(await api.get('/species/image/by-key?key=00000000-0000-4000-8000-000000000000', w.viewer), 404, 'NOT_FOUND');
    assert.equal((await image('/species/image/proxy?code=eurrob1', null)).status, 401);
    // The showcase is public and takes only a square.
    const show = await image('/species/showcase/image?code=eurrob1&square=128', null);
    assert.equal(show.status, 200);
    assert.equal((await sharp(show.body).metadata()).width, 128);
    assert.equal((await api.get('/species/showcase/image?code=eurrob1&original=1', null)).status, 400);
    assert.equal((await api.get('/species/showcase/image?code=eurrob1&square=65', null)).status, 400);
  });

  test('cache headers and ETag: 304 on If-None-Match; pending squares live ten minutes, settled ones a week (injected clock)', async () => {
    const key = (await api.get('/species/image-gallery?code=eurrob1', w.viewer)).body.photos[0].key as string;
    const t = new Date('2026-07-01T10:00:00Z');
    hub.clock.freeze(t);
    await hub.sql.query('UPDATE species_images SET focus_x = NULL, focus_y = NULL, analysed_at = NULL WHERE id = $1', [key]);
    hub.services.speciesImages.forgetRows();
    const pending = await image(`/species/image/by-key?key=${key}&square=256`);
    assert.equal(pending.headers.get('cache-control'), 'public, max-age=600');
    assert.equal(pending.headers.get('expires'), new Date(t.getTime() + 600_000).toUTCString());
    assert.ok((await darkFraction(pending.body)) > 0.9 * expectedDark(ROBIN_COMMONS), 'the pending crop holds the bird too');
    const pendingTag = pending.headers.get('etag')!;
    assert.equal((await image(`/species/image/by-key?key=${key}&square=256`, w.viewer, { 'if-none-match': pendingTag })).status, 304);

    await hub.services.speciesImages.analyse(key);
    const settled = await image(`/species/image/by-key?key=${key}&square=256`);
    assert.equal(settled.headers.get('cache-control'), 'public, max-age=604800');
    assert.equal(settled.headers.get('expires'), new Date(t.getTime() + 7 * 86_400_000).toUTCString());
    const tag = settled.headers.get('etag')!;
    assert.notEqual(tag, pendingTag);
    const again = await image(`/species/image/by-key?key=${key}&square=256`, w.viewer, { 'if-none-match': `W/${tag}, "other"` });
    assert.equal(again.status, 304);
    assert.equal(again.body.length, 0);
    assert.equal(again.headers.get('etag'), tag);
    assert.equal((await image(`/species/image/by-key?key=${key}&square=256`, w.viewer, { 'if-none-match': pendingTag })).status, 200);
    // An analysis the clock has not reached yet (a clock set back) is not settled.
    hub.clock.freeze(new Date(t.getTime() - 3_600_000));
    assert.equal((await image(`/species/image/by-key?key=${key}&square=256`)).headers.get('cache-control'), 'public, max-age=600');
    hub.clock.freeze(t);
    const orig = await image(`/species/image/by-key?key=${key}&original=1`);
    assert.equal(orig.headers.get('cache-control'), 'public, max-age=604800');
    assert.equal(
      (await image(`/species/image/by-key?key=${key}&original=1`, w.viewer, { 'if-none-match': orig.headers.get('etag')! })).status,
      304,
    );
  });

  test('a decompression bomb and a non-image are refused: failed status, nothing stored', async () => {
    const blackbird = await settle('eurbla');
    assert.equal(blackbird.status, 'failed');
    assert.equal((await hub.sql.one<{ n: number }>(`SELECT count(*)::int AS n FROM species_images WHERE species_code = 'eurbla'`)).n, 0);
    if (hub.infra.storage.kind === 'files') {
      const dir = path.join(hub.infra.config.dataDir, 'objects', 'species-images');
      const keys = new Set(
        (await hub.sql.query<{ k: string }>(`SELECT unnest(ARRAY[storage_key, display_key]) AS k FROM species_images`)).map((r) =>
          path.basename(r.k),
        ),
      );
      assert.deepEqual(
        fs
          .readdirSync(dir)
          .filter((f) => !f.startsWith('.'))
          .sort(),
        [...keys].sort(),
      );
    }
    assertError(await api.get('/species/image/proxy?code=eurbla', w.viewer), 404, 'NOT_FOUND');
    const error = await hub.sql.one<{ error: string }>(`SELECT error FROM species_image_status WHERE species_code = 'eurbla'`);
    assert.match(error.error, /pixel/);
    assert.match(error.error, /not a JPEG, PNG or WebP/);
  });

  test('outbound policy: a photo on a private address and a redirect to one are refused, nothing reaches it; an allowed redirect is followed', async () => {
    // An internal service on another loopback address, which OUTBOUND_ALLOW_HOSTS (127.0.0.1) does not list.
    const internal = await startInternalServer(await birdJpeg({ width: 400, height: 300, x: 0.5, y: 0.5 }));
    try {
      fake.commonsPhotos.set('Parus major', [
        { id: 30, file: 'tit.jpg', licence: 'CC BY 4.0', author: 'Iris Internal', url: `${internal.url}/tit.jpg` },
        { id: 31, file: 'tit-moved.jpg', licence: 'CC BY 4.0', author: 'Max Moved' },
      ]);
      fake.redirects.set('tit-moved.jpg', `${internal.url}/moved.jpg`);
      const tit = await settle('gretit1');
      assert.equal(tit.status, 'failed');
      assert.deepEqual(internal.received, [], 'nothing reached the internal address');
      assert.equal(fake.commons.received.filter((r) => r.path === '/files/tit-moved.jpg').length, 1, 'the redirect was asked once');
      assert.equal((await hub.sql.one<{ n: number }>(`SELECT count(*)::int AS n FROM species_images WHERE species_code = 'gretit1'`)).n, 0);
      const { error } = await hub.sql.one<{ error: string }>(`SELECT error FROM species_image_status WHERE species_code = 'gretit1'`);
      assert.match(error, /File:tit\.jpg: 127\.0\.0\.2:\d+: 127\.0\.0\.2 is a private, local or reserved address/);
      assert.match(error, /File:tit-moved\.jpg: 127\.0\.0\.1:\d+: 127\.0\.0\.2 is a private, local or reserved address/);

      // A redirect to an allowed host passes the same check and is followed.
      fake.commonsPhotos.set('Fringilla coelebs', [{ id: 32, file: 'chaffinch.jpg', licence: 'CC BY 4.0', author: 'Finn Finch' }]);
      fake.redirects.set('chaffinch.jpg', `${fake.commons.url}/files/swallow.jpg`);
      const chaffinch = await settle('comcha');
      assert.equal(chaffinch.status, 'ready');
      assert.equal(chaffinch.author, 'Finn Finch');
    } finally {
      await internal.close();
    }
  });

  test('upstream trouble is retried, then failed; the hub admin re-queues failed downloads', async () => {
    fake.down.commons = true;
    fake.down.inat = true;
    const before = fake.commons.received.length;
    assert.equal((await settle('barswa')).status, 'failed');
    assert.ok(fake.commons.received.length - before >= 3, 'three attempts');
    fake.down.commons = false;
    fake.down.inat = false;
    assert.equal((await api.post('/species/image-cache/retry', undefined, w.admin)).status, 403);
    const retry = await api.post('/species/image-cache/retry', undefined, w.hubAdmin);
    assert.equal(retry.status, 200, retry.text);
    assert.ok(retry.body.queued >= 1, 'queued');
    const swallow = await settle('barswa');
    assert.equal(swallow.status, 'ready');
    assert.equal(swallow.licence, 'CC BY 2.0');
  });

  test('hub admin: stats, re-crop (audited, in the background), clear (audited, objects removed)', async () => {
    assertError(await api.get('/species/image-cache/stats', w.owner), 403, 'FORBIDDEN');
    const stats = await api.get('/species/image-cache/stats', w.hubAdmin);
    assert.equal(stats.status, 200, stats.text);
    assert.ok(stats.body.species.ready >= 2, 'ready species');
    assert.ok(stats.body.photos >= 3, 'photos');
    assert.deepEqual(stats.body.providers, ['wikimedia', 'inaturalist']);

    const recrop = await api.post('/species/image-cache/recrop', undefined, w.hubAdmin);
    assert.equal(recrop.status, 202, recrop.text);
    assert.equal(recrop.body.photos, stats.body.photos);
    await analysed();
    const audit = await hub.sql.query<{ action: string }>(
      `SELECT action FROM audit_log WHERE action IN ('admin.image_recrop_started', 'admin.image_cache_cleared') ORDER BY at`,
    );
    assert.deepEqual(
      audit.map((a) => a.action),
      ['admin.image_recrop_started'],
    );

    const keys = await hub.sql.query<{ k: string }>(`SELECT unnest(ARRAY[storage_key, display_key]) AS k FROM species_images`);
    const cleared = await api.post('/species/image-cache/clear', undefined, w.hubAdmin);
    assert.equal(cleared.status, 200, cleared.text);
    assert.equal(cleared.body.photos, stats.body.photos);
    for (const { k } of keys) assert.equal(await hub.infra.storage.stat(k), null);
    assert.equal((await api.get('/species/image-cache/stats', w.hubAdmin)).body.photos, 0);
    const entry = await hub.sql.one<{ actorUserId: string }>(
      `SELECT actor_user_id AS "actorUserId" FROM audit_log WHERE action = 'admin.image_cache_cleared'`,
    );
    assert.equal(entry.actorUserId, w.hubAdmin.id);
    // Photos come back on the next request.
    assert.equal((await settle('eurrob1')).status, 'ready');
  });

  test('photosFor gives other pages credited public URLs', async () => {
    await settle('eurrob1');
    const photos = await hub.services.speciesImages.photosFor(['gretit1', 'eurrob1']);
    assert.equal(photos.length, 1);
    assert.equal(photos[0].code, 'eurrob1');
    assert.equal(photos[0].url, '/api/species/showcase/image?code=eurrob1&square=256');
    assert.equal(photos[0].author, 'Anna Fotograf & Co');
    assert.equal((await image(photos[0].url.slice(4), null)).status, 200);
  });

  test('the body is checked: 1 to 200 codes of safe characters', async () => {
    assert.equal((await api.post('/species/images', { codes: [] }, w.viewer)).status, 400);
    assert.equal((await api.post('/species/images', { codes: ['../etc'] }, w.viewer)).status, 400);
    assert.equal((await api.post('/species/images', { codes: Array.from({ length: 201 }, (_, i) => `c${i}`) }, w.viewer)).status, 400);
    assert.equal((await api.post('/species/images', { codes: ['eurrob1'] }, null)).status, 401);
  });
});

describe('species photo building blocks', () => {
  test('licences: CC0, CC BY and CC BY-SA with credit; NC, ND and the rest refused', () => {
    assert.deepEqual(allowedLicence('cc-by-sa'), { name: 'CC BY-SA 4.0', url: 'https://creativecommons.org/licenses/by-sa/4.0/' });
    assert.equal(allowedLicence('CC BY 2.5')?.name, 'CC BY 2.5');
    assert.equal(allowedLicence('CC BY-SA 3.0 de')?.name, 'CC BY-SA 3.0');
    assert.equal(allowedLicence('cc0')?.name, 'CC0 1.0');
    assert.equal(allowedLicence('CC0')?.name, 'CC0 1.0');
    for (const no of [
      'cc-by-nc',
      'CC BY-NC-SA 4.0',
      'cc-by-nd',
      'CC BY-ND 4.0',
      'GFDL',
      'All rights reserved',
      '',
      null,
      'Public domain',
    ]) {
      assert.equal(allowedLicence(no), null, String(no));
    }
  });

  test('the byte cap cuts a download off; requests to a provider are spaced', async () => {
    const big = Buffer.alloc(300_000, 1);
    const r = await startReceiver((req): Answer =>
      req.path === '/chunked'
        ? { status: 200, headers: { 'content-type': 'image/jpeg' }, body: big }
        : { status: 200, headers: { 'content-length': String(big.length) }, body: big },
    );
    try {
      const http = createFetcher({ intervalMs: 100, timeoutMs: 5000, userAgent: 'test', allow: LOCAL });
      await assert.rejects(http.bytes(`${r.url}/declared`, 1000), RefusedImage);
      await assert.rejects(http.bytes(`${r.url}/chunked`, 1000), RefusedImage);
      await assert.rejects(http.bytes('file:///etc/passwd', 1000), RefusedImage);
      const paced = createFetcher({ intervalMs: 100, timeoutMs: 5000, userAgent: 'test', allow: LOCAL });
      const t0 = Date.now();
      await paced.bytes(`${r.url}/a`, 1_000_000);
      await paced.bytes(`${r.url}/a`, 1_000_000);
      await paced.bytes(`${r.url}/b`, 1_000_000);
      assert.ok(Date.now() - t0 >= 195, 'the second and third requests waited for the interval');
    } finally {
      await r.close();
    }
  });

  describe('the photo fetcher follows the outbound policy of webhook deliveries', () => {
    const NONE = parseAllowList('');
    for (const url of BLOCKED_URLS) {
      test(`refuses ${url} with an empty allow list, for an image and for a provider's JSON`, async () => {
        const http = createFetcher({ intervalMs: 0, timeoutMs: 2000, userAgent: 'test', allow: NONE });
        const refused = (e: unknown) => e instanceof RefusedImage && /private, local or reserved/.test(e.message);
        await assert.rejects(http.bytes(url, 1000), refused);
        await assert.rejects(http.json(url), refused);
      });
    }

    test('the local server is refused, then reached once listed; redirects are re-checked, capped, and timed', async () => {
      const internal = await startInternalServer(Buffer.from('internal secret'));
      const r = await startReceiver((req): Answer => {
        if (req.path === '/to-internal') return { status: 302, headers: { location: `${internal.url}/meta` } };
        if (req.path === '/to-mapped') return { status: 301, headers: { location: 'http://[::ffff:127.0.0.2]/' } };
        if (req.path === '/to-local') return { status: 307, headers: { location: '/img' } };
        if (req.path === '/loop') return { status: 302, headers: { location: '/loop' } };
        if (req.path === '/hang') return 'hang';
        return { status: 200, headers: { 'content-type': 'image/png' }, body: 'img' };
      });
      try {
        await assert.rejects(
          createFetcher({ intervalMs: 0, timeoutMs: 2000, userAgent: 't', allow: NONE }).bytes(`${r.url}/img`, 100),
          RefusedImage,
        );
        assert.equal(r.received.length, 0, 'nothing reached the unlisted server');
        const http = createFetcher({ intervalMs: 0, timeoutMs: 2000, userAgent: 't', allow: LOCAL });
        assert.deepEqual(await http.bytes(`${r.url}/img`, 100), { body: Buffer.from('img'), contentType: 'image/png' });
        await assert.rejects(http.bytes(`${r.url}/to-internal`, 100), /127\.0\.0\.2 is a private, local or reserved address/);
        await assert.rejects(http.bytes(`${r.url}/to-mapped`, 100), /private, local or reserved/);
        assert.deepEqual(internal.received, [], 'no redirect reached the internal address');
        assert.deepEqual(await http.bytes(`${r.url}/to-local`, 100), { body: Buffer.from('img'), contentType: 'image/png' });
        const loops = r.received.length;
        await assert.rejects(http.bytes(`${r.url}/loop`, 100), /answered 302/);
        assert.equal(r.received.length - loops, 4, 'the first request and three redirects');
        const slow = createFetcher({ intervalMs: 0, timeoutMs: 200, userAgent: 't', allow: LOCAL });
        await assert.rejects(
          slow.bytes(`${r.url}/hang`, 100),
          (e: unknown) => e instanceof UpstreamError && /timed out after 200 ms/.test(e.message),
        );
      } finally {
        await r.close();
        await internal.close();
      }
    });
  });

  test('checkImage: bombs, lies and non-images are refused before decoding', async () => {
    const limits = { maxBytes: 1_000_000, maxPixels: 40_000_000 };
    await assert.rejects(checkImage(bombPng(), limits), /pixel/);
    await assert.rejects(checkImage(Buffer.from('GIF89a....'), limits), /not a JPEG/);
    const png = await sharp({ create: { width: 10, height: 10, channels: 3, background: '#fff' } })
      .png()
      .toBuffer();
    await assert.rejects(checkImage(Buffer.concat([Buffer.from([0xff, 0xd8, 0xff]), png]), limits), RefusedImage);
    assert.deepEqual(await checkImage(png, limits), { contentType: 'image/png', width: 10, height: 10 });
    await assert.rejects(checkImage(png, { ...limits, maxBytes: 10 }), /bytes/);
  });
});
