/**
 * Offline country and subdivision of a position (issue 34): the eBird and xeno-canto files name
 * the country and state a satellite stands in, and no request may leave the hub for it. The
 * data (assets/places/admin1.json.gz) is Natural Earth's 1:10m admin-1 polygons, simplified
 * (≈ 500 m) and rounded (≈ 110 m): near a border the answer may be the neighbour's, within
 * a few km: Natural Earth's 1:10m borders are themselves generalised by that much in places
 * (it puts the centre of Konstanz in Thurgau). Loaded once, on first use (1.4 MB gzipped, about
 * 12 MB of heap, 0.2 s), and indexed by a one-degree grid of polygon bounding boxes.
 *
 * A position inside no polygon (the sea, or a gap the simplification opened along a coast or
 * border) takes the nearest polygon within NEAR_KM, so a recorder on a beach or pier still gets
 * its country; farther out it has none.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { PLACES_FORMAT, type PlacesFile } from './data.ts';

export const DEFAULT_PLACES_PATH = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../assets/places/admin1.json.gz');

/** How far off the mapped land a position still takes the nearest subdivision. */
export const NEAR_KM = 5;

export interface Place {
  /** ISO 3166-1 alpha-2, e.g. "DE". */
  country: string;
  /** ISO 3166-2 first-level subdivision, e.g. "DE-NW"; '' where the data has none. */
  subdivision: string;
}

interface Polygon {
  place: Place;
  /** Rings as absolute integer coordinates x0, y0, x1, y1, … (1/scale degree), outer first. */
  rings: Int32Array[];
  minX: number;
  minY: number;
  maxX: number;
  maxY: number;
}

interface Index {
  scale: number;
  polygons: Polygon[];
  /** One-degree cell → polygons whose bounding box reaches into it. */
  grid: Map<number, number[]>;
}

const cellOf = (lonDeg: number, latDeg: number) => (Math.floor(latDeg) + 90) * 360 + (Math.floor(lonDeg) + 180);

function load(file: string): Index {
  const data = JSON.parse(gunzipSync(fs.readFileSync(file)).toString('utf8')) as PlacesFile;
  if (data.format !== PLACES_FORMAT) throw new Error(`places: unknown format "${String(data.format)}" in ${file}`);
  const places = data.codes.map((k) => {
    const [country, subdivision = ''] = k.split(' ');
    return { country, subdivision } as Place;
  });
  const polygons: Polygon[] = [];
  const grid = new Map<number, number[]>();
  for (const [code, ...encoded] of data.polygons) {
    const rings = (encoded as number[][]).map((flat) => {
      const ring = new Int32Array(flat.length);
      let x = 0;
      let y = 0;
      for (let i = 0; i < flat.length; i += 2) {
        x += flat[i];
        y += flat[i + 1];
        ring[i] = x;
        ring[i + 1] = y;
      }
      return ring;
    });
    let [minX, minY, maxX, maxY] = [Infinity, Infinity, -Infinity, -Infinity];
    const outer = rings[0];
    for (let i = 0; i < outer.length; i += 2) {
      minX = Math.min(minX, outer[i]);
      maxX = Math.max(maxX, outer[i]);
      minY = Math.min(minY, outer[i + 1]);
      maxY = Math.max(maxY, outer[i + 1]);
    }
    const id = polygons.push({ place: places[code as number], rings, minX, minY, maxX, maxY }) - 1;
    const s = data.scale;
    for (let lat = Math.floor(minY / s); lat <= Math.floor(maxY / s); lat++) {
      for (let lon = Math.floor(minX / s); lon <= Math.floor(maxX / s); lon++) {
        const key = cellOf(lon, lat);
        const list = grid.get(key);
        if (list) list.push(id);
        else grid.set(key, [id]);
      }
    }
  }
  return { scale: data.scale, polygons, grid };
}

/** Even–odd rule over all rings (holes included). */
function contains(p: Polygon, x: number, y: number): boolean {
  if (x < p.minX || x > p.maxX || y < p.minY || y > p.maxY) return false;
  let inside = false;
  for (const r of p.rings) {
    const n = r.length;
    for (let i = 0, j = n - 2; i < n; j = i, i += 2) {
      const yi = r[i + 1];
      const yj = r[j + 1];
      if (yi > y !== yj > y && x < ((r[j] - r[i]) * (y - yi)) / (yj - yi) + r[i]) inside = !inside;
    }
  }
  return inside;
}

/** Squared distance from (x, y) to the polygon's edges, x already scaled by cos(latitude). */
function distance2(p: Polygon, x: number, y: number, kx: number): number {
  let best = Infinity;
  for (const r of p.rings) {
    const n = r.length;
    for (let i = 0, j = n - 2; i < n; j = i, i += 2) {
      const ax = r[j] * kx;
      const ay = r[j + 1];
      const dx = r[i] * kx - ax;
      const dy = r[i + 1] - ay;
      const len2 = dx * dx + dy * dy;
      const t = len2 ? Math.max(0, Math.min(1, ((x - ax) * dx + (y - ay) * dy) / len2)) : 0;
      best = Math.min(best, (x - ax - t * dx) ** 2 + (y - ay - t * dy) ** 2);
    }
  }
  return best;
}

let index: Index | null = null;
const indexOf = () => (index ??= load(DEFAULT_PLACES_PATH));

/** The country and first-level subdivision at a WGS84 position, or null (open sea, no position). */
export function placeAt(latitude: number | null | undefined, longitude: number | null | undefined): Place | null {
  if (latitude == null || longitude == null || !Number.isFinite(latitude) || !Number.isFinite(longitude)) return null;
  if (Math.abs(latitude) > 90 || Math.abs(longitude) > 180) return null;
  const { scale, polygons, grid } = indexOf();
  const x = longitude * scale;
  const y = latitude * scale;
  for (const id of grid.get(cellOf(longitude, latitude)) ?? []) {
    if (contains(polygons[id], x, y)) return polygons[id].place;
  }
  // Nearest polygon within NEAR_KM, among those of the cells around (a degree of latitude ≈ 111 km).
  const reach = (NEAR_KM / 111) * scale;
  const kx = Math.cos((latitude * Math.PI) / 180);
  let best: Polygon | null = null;
  let bestD = reach * reach;
  const seen = new Set<number>();
  for (let dLat = -1; dLat <= 1; dLat++) {
    for (let dLon = -1; dLon <= 1; dLon++) {
      for (const id of grid.get(cellOf(longitude + dLon, latitude + dLat)) ?? []) {
        if (seen.has(id)) continue;
        seen.add(id);
        const p = polygons[id];
        if (x < p.minX - reach / kx || x > p.maxX + reach / kx || y < p.minY - reach || y > p.maxY + reach) continue;
        const d = distance2(p, x * kx, y, kx);
        if (d < bestD) [best, bestD] = [p, d];
      }
    }
  }
  return best?.place ?? null;
}

const names = new Intl.DisplayNames(['en'], { type: 'region', fallback: 'code' });

/** The English name of an ISO 3166-1 alpha-2 country ("Germany"), from the runtime's ICU data. */
export function countryName(code: string): string {
  return code ? (names.of(code) ?? code) : '';
}
