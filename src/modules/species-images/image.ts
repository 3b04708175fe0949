/**
 * Image handling for species photos. Upstream bytes are hostile input: the byte cap is applied
 * while downloading, the real type is read from the magic bytes, and the pixel count from the
 * header is checked before anything is decoded (sharp's limitInputPixels guards the decoders too).
 */
import { createRequire } from 'node:module';
import type Sharp from 'sharp';
import type { Metadata } from 'sharp';
import { RefusedImage } from './providers/fetch.ts';

/** sharp (libvips) loads in half a second: only a process that handles a photo loads it. */
let loaded: typeof Sharp | null = null;
const sharp = () => (loaded ??= createRequire(import.meta.url)('sharp') as typeof Sharp);

export const SQUARE_SIZES = [64, 128, 256, 512] as const;
export type SquareSize = (typeof SQUARE_SIZES)[number];

/** The display copy's longest side: what the dashboard shows and the crops are cut from. */
export const DISPLAY_SIDE = 1600;

export interface Limits {
  maxBytes: number;
  maxPixels: number;
}

type Format = 'jpeg' | 'png' | 'webp';
const TYPES: Record<Format, string> = { jpeg: 'image/jpeg', png: 'image/png', webp: 'image/webp' };

function sniff(b: Buffer): Format | null {
  if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return 'jpeg';
  if (b.length >= 8 && b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'png';
  if (b.length >= 12 && b.toString('latin1', 0, 4) === 'RIFF' && b.toString('latin1', 8, 12) === 'WEBP') return 'webp';
  return null;
}

export interface Checked {
  contentType: string;
  width: number;
  height: number;
}

/** Refuses (RefusedImage) anything but a JPEG, PNG or WebP within the byte and pixel caps. */
export async function checkImage(body: Buffer, limits: Limits): Promise<Checked> {
  if (body.length === 0) throw new RefusedImage('empty image');
  if (body.length > limits.maxBytes) throw new RefusedImage(`the image is more than ${limits.maxBytes} bytes`);
  const format = sniff(body);
  if (!format) throw new RefusedImage('not a JPEG, PNG or WebP image');
  let meta: Metadata;
  try {
    meta = await sharp()(body, { limitInputPixels: limits.maxPixels }).metadata();
  } catch (err) {
    throw new RefusedImage(`unreadable image: ${(err as Error).message}`);
  }
  const { width = 0, height = 0 } = meta;
  if (meta.format !== format) throw new RefusedImage(`the image says ${format} but is ${meta.format}`);
  if (width < 1 || height < 1) throw new RefusedImage('the image has no size');
  if (width * height > limits.maxPixels) throw new RefusedImage(`the image has ${width}×${height} pixels, more than ${limits.maxPixels}`);
  return { contentType: TYPES[format], width, height };
}

/** The display copy: oriented, at most DISPLAY_SIDE px, JPEG. Decoding is where a lying header would show. */
export async function displayCopy(body: Buffer, limits: Limits): Promise<{ body: Buffer; width: number; height: number }> {
  try {
    const { data, info } = await sharp()(body, { limitInputPixels: limits.maxPixels, failOn: 'error' })
      .rotate()
      .resize(DISPLAY_SIDE, DISPLAY_SIDE, { fit: 'inside', withoutEnlargement: true })
      .flatten({ background: '#ffffff' })
      .jpeg({ quality: 82 })
      .toBuffer({ resolveWithObject: true });
    return { body: data, width: info.width, height: info.height };
  } catch (err) {
    throw new RefusedImage(`the image cannot be decoded: ${(err as Error).message}`);
  }
}

export interface Focus {
  x: number;
  y: number;
}

/**
 * Where the bird is, as fractions of width and height: sharp's attention strategy (luminance
 * frequency, saturation, skin tones) on a small copy; the geometric centre when it finds nothing.
 */
export async function findFocus(display: Buffer): Promise<Focus> {
  const { info } = await sharp()(display)
    .resize(256, 256, { fit: 'cover', position: sharp().strategy.attention })
    .toBuffer({ resolveWithObject: true });
  const scaled = await sharp()(display).metadata();
  // attentionX/Y are in the copy scaled to cover 256×256, before the crop.
  const k = 256 / Math.min(scaled.width ?? 256, scaled.height ?? 256);
  const w = (scaled.width ?? 256) * k;
  const h = (scaled.height ?? 256) * k;
  const ax = (info as { attentionX?: number }).attentionX;
  const ay = (info as { attentionY?: number }).attentionY;
  if (ax === undefined || ay === undefined || (ax === 0 && ay === 0)) return { x: 0.5, y: 0.5 };
  return { x: clamp01(ax / w), y: clamp01(ay / h) };
}

function clamp01(v: number): number {
  return Math.min(1, Math.max(0, v));
}

/**
 * A size×size JPEG: the largest square of the display copy centred on `focus` (kept inside the
 * image), or, for a photo still awaiting analysis, sharp's attention crop made on the spot.
 */
export async function squareCrop(
  display: Buffer,
  size: SquareSize,
  focus: Focus | null,
  dims: { width: number; height: number },
): Promise<Buffer> {
  if (!focus) {
    return sharp()(display).resize(size, size, { fit: 'cover', position: sharp().strategy.attention }).jpeg({ quality: 80 }).toBuffer();
  }
  const side = Math.min(dims.width, dims.height);
  const left = Math.round(Math.min(Math.max(focus.x * dims.width - side / 2, 0), dims.width - side));
  const top = Math.round(Math.min(Math.max(focus.y * dims.height - side / 2, 0), dims.height - side));
  return sharp()(display).extract({ left, top, width: side, height: side }).resize(size, size).jpeg({ quality: 80 }).toBuffer();
}
