/**
 * Local servers that play Wikimedia Commons and iNaturalist for the species photo tests and the
 * benchmark, serving real images made here with sharp: a dark bird-shaped blob (body and head)
 * off-centre on a plain or noisy light background.
 */
import { deflateSync } from 'node:zlib';
import sharp from 'sharp';
import { startReceiver, type Answer, type Receiver } from './receivers.ts';

export interface Bird {
  width: number;
  height: number;
  /** The blob's centre as fractions of width and height. */
  x: number;
  y: number;
  noisy?: boolean;
}

/** Raw RGB pixels of the scene; the blob is near-black (< 60), the background light (> 170). */
export function birdPixels(b: Bird): Buffer {
  const { width: w, height: h } = b;
  const raw = Buffer.alloc(w * h * 3);
  const cx = b.x * w;
  const cy = b.y * h;
  const rx = Math.min(w, h) * 0.12;
  const ry = rx * 0.65;
  let seed = 7;
  const rand = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const i = (y * w + x) * 3;
      const dx = (x - cx) / rx;
      const dy = (y - cy) / ry;
      const hx = x - (cx - rx * 0.9);
      const hy = y - (cy - ry * 0.9);
      const bird = dx * dx + dy * dy < 1 || hx * hx + hy * hy < (ry * 0.55) ** 2;
      if (bird) {
        raw[i] = 45;
        raw[i + 1] = 35;
        raw[i + 2] = 25;
      } else {
        const n = b.noisy ? Math.floor(rand() * 40) : 0;
        raw[i] = 190 + n;
        raw[i + 1] = 205 + n;
        raw[i + 2] = 180 + n;
      }
    }
  }
  return raw;
}

export const birdJpeg = (b: Bird) =>
  sharp(birdPixels(b), { raw: { width: b.width, height: b.height, channels: 3 } })
    .jpeg({ quality: 90 })
    .toBuffer();

function crc32(buf: Buffer): number {
  let c = ~0;
  for (const byte of buf) {
    c ^= byte;
    for (let k = 0; k < 8; k++) c = (c >>> 1) ^ (0xedb88320 & -(c & 1));
  }
  return ~c >>> 0;
}
function pngChunk(type: string, data: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([len, body, crc]);
}

/**
 * A decompression bomb: a valid PNG of a few hundred bytes whose header says 30000 × 30000
 * pixels (900 megapixels); its zlib stream of zero rows would inflate to that size.
 */
export function bombPng(): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(30000, 0);
  ihdr.writeUInt32BE(30000, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 0; // greyscale
  const idat = deflateSync(Buffer.alloc(30001 * 8)); // the first rows; the rest is missing, as a bomb's would be streamed
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', ihdr),
    pngChunk('IDAT', idat),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
}

export interface FakePhoto {
  id: number;
  /** Commons: LicenseShortName; iNaturalist: license_code (null: all rights reserved). */
  licence: string | null;
  author: string;
  file: string;
  /** The image URL the provider names instead of its own /files/<file> (another host, a private address). */
  url?: string;
}

export interface FakeProviders {
  commons: Receiver;
  inat: Receiver;
  env: Record<string, string>;
  /** Image bytes by file name, served under /files/<name> by both servers. */
  files: Map<string, { body: Buffer; type: string }>;
  /** Commons search results and iNaturalist taxon photos by scientific name. */
  commonsPhotos: Map<string, FakePhoto[]>;
  inatPhotos: Map<string, FakePhoto[]>;
  /** Redirects by file name: /files/<name> answers 302 to this Location on both servers. */
  redirects: Map<string, string>;
  /** Answer 503 to everything while set. */
  down: { commons: boolean; inat: boolean };
  close(): Promise<void>;
}

export async function startFakeProviders(): Promise<FakeProviders> {
  const files = new Map<string, { body: Buffer; type: string }>();
  const commonsPhotos = new Map<string, FakePhoto[]>();
  const inatPhotos = new Map<string, FakePhoto[]>();
  const redirects = new Map<string, string>();
  const down = { commons: false, inat: false };
  const json = (v: unknown): Answer => ({ status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify(v) });
  const file = (path: string): Answer => {
    const name = decodeURIComponent(path.slice('/files/'.length));
    const to = redirects.get(name);
    if (to) return { status: 302, headers: { location: to } };
    const f = files.get(name);
    return f ? { status: 200, headers: { 'content-type': f.type }, body: f.body } : { status: 404 };
  };
  let commonsUrl = '';
  let inatUrl = '';
  const commons = await startReceiver((r) => {
    if (down.commons) return { status: 503 };
    const u = new URL(r.path, 'http://x');
    if (u.pathname.startsWith('/files/')) return file(u.pathname);
    if (u.pathname !== '/w/api.php') return { status: 404 };
    const name = /"([^"]+)"/.exec(u.searchParams.get('gsrsearch') ?? '')?.[1] ?? '';
    const pages: Record<string, unknown> = {};
    (commonsPhotos.get(name) ?? []).forEach((p, index) => {
      pages[String(p.id)] = {
        pageid: p.id,
        title: `File:${p.file}`,
        index: index + 1,
        imageinfo: [
          {
            thumburl: p.url ?? `${commonsUrl}/files/${p.file}`,
            url: p.url ?? `${commonsUrl}/files/${p.file}`,
            descriptionurl: `${commonsUrl}/wiki/File:${p.file}`,
            mime: files.get(p.file)?.type ?? 'image/jpeg',
            extmetadata: {
              LicenseShortName: { value: p.licence ?? 'All rights reserved' },
              Artist: { value: `<a href="https://x.test">${p.author}</a>` },
            },
          },
        ],
      };
    });
    return json({ batchcomplete: '', query: { pages } });
  });
  const inat = await startReceiver((r) => {
    if (down.inat) return { status: 503 };
    const u = new URL(r.path, 'http://x');
    if (u.pathname.startsWith('/files/')) return file(u.pathname);
    const names = [...inatPhotos.keys()];
    if (u.pathname === '/v1/taxa') {
      const i = names.indexOf(u.searchParams.get('q') ?? '');
      return json({ results: i < 0 ? [] : [{ id: 1000 + i, name: names[i] }] });
    }
    const m = /^\/v1\/taxa\/(\d+)$/.exec(u.pathname);
    if (m) {
      const name = names[Number(m[1]) - 1000];
      const photos = name ? inatPhotos.get(name)! : [];
      return json({
        results: [
          {
            taxon_photos: photos.map((p) => ({
              photo: {
                id: p.id,
                license_code: p.licence,
                attribution: `(c) ${p.author}, some rights reserved`,
                large_url: p.url ?? `${inatUrl}/files/${p.file}`,
              },
            })),
          },
        ],
      });
    }
    return { status: 404 };
  });
  commonsUrl = commons.url;
  inatUrl = inat.url;
  return {
    commons,
    inat,
    files,
    commonsPhotos,
    inatPhotos,
    redirects,
    down,
    // The fake providers listen on 127.0.0.1: listed as an operator would list a LAN mirror.
    env: {
      IMAGES_WIKIMEDIA_URL: commons.url,
      IMAGES_INATURALIST_URL: inat.url,
      IMAGES_PROVIDER_INTERVAL_MS: '0',
      QUEUE_BACKOFF_MS: '20',
      OUTBOUND_ALLOW_HOSTS: '127.0.0.1',
    },
    close: async () => {
      await commons.close();
      await inat.close();
    },
  };
}
