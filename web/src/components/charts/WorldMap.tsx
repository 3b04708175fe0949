/**
 * Satellites on a world outline drawn offline: Natural Earth's 110m land (world-atlas, bundled)
 * through a d3-geo projection into SVG. Nothing is fetched unless an operator configured a
 * raster tile URL (setting map_tile_url, "https://…/{z}/{x}/{y}.png"); then Web Mercator tiles
 * lie under the outline and the points, on the same projection.
 */
import { useMemo, type MouseEvent } from 'react';
import { geoEqualEarth, geoMercator, geoPath, type GeoProjection } from 'd3-geo';
import { feature } from 'topojson-client';
import type { Feature, FeatureCollection, MultiPolygon, Polygon } from 'geojson';
import land110 from 'world-atlas/land-110m.json';

export interface MapPoint {
  id: string;
  latitude: number;
  longitude: number;
  label?: string;
  kind: 'satellite' | 'detection';
  offline?: boolean;
  title: string;
}

const WIDTH = 960;
const HEIGHT = 500;
const TILE = 256;
const MAX_ZOOM = 18;

let landCache: FeatureCollection<Polygon | MultiPolygon> | Feature<Polygon | MultiPolygon> | null = null;
function land() {
  landCache ??= feature(land110, land110.objects.land) as FeatureCollection<Polygon | MultiPolygon>;
  return landCache;
}

/** The extent the points ask for, padded; the whole world when there are none or one far-flung set. */
function fitted(projection: GeoProjection, points: MapPoint[], minPad: number): GeoProjection {
  if (points.length === 0)
    return projection.fitExtent(
      [
        [8, 8],
        [WIDTH - 8, HEIGHT - 8],
      ],
      { type: 'Sphere' },
    );
  const lons = points.map((p) => p.longitude);
  const lats = points.map((p) => p.latitude);
  // A lone satellite still shows its region: about 24° across on the coarse outline, 2° on tiles.
  const pad = Math.max(minPad, (Math.max(...lons) - Math.min(...lons)) * 0.25, (Math.max(...lats) - Math.min(...lats)) * 0.25);
  const box = {
    type: 'MultiPoint' as const,
    coordinates: [
      [Math.max(-180, Math.min(...lons) - pad), Math.max(-80, Math.min(...lats) - pad)],
      [Math.min(180, Math.max(...lons) + pad), Math.min(80, Math.max(...lats) + pad)],
    ],
  };
  return projection.fitExtent(
    [
      [24, 24],
      [WIDTH - 24, HEIGHT - 24],
    ],
    box,
  );
}

interface Tile {
  key: string;
  href: string;
  x: number;
  y: number;
  size: number;
}

/** The Web Mercator tiles covering the view at the zoom closest to the projection's scale. */
function tilesFor(projection: GeoProjection, template: string): Tile[] {
  const worldPx = 2 * Math.PI * projection.scale();
  const z = Math.max(0, Math.min(MAX_ZOOM, Math.round(Math.log2(worldPx / TILE))));
  const n = 2 ** z;
  const size = worldPx / n;
  const [x0, y0] = projection([-180, 85.0511287798])!;
  const tiles: Tile[] = [];
  const fromX = Math.floor(-x0 / size);
  const toX = Math.floor((WIDTH - x0) / size);
  const fromY = Math.max(0, Math.floor(-y0 / size));
  const toY = Math.min(n - 1, Math.floor((HEIGHT - y0) / size));
  for (let tx = fromX; tx <= toX; tx++) {
    for (let ty = fromY; ty <= toY; ty++) {
      const wx = ((tx % n) + n) % n;
      const href = template.replaceAll('{z}', String(z)).replaceAll('{x}', String(wx)).replaceAll('{y}', String(ty));
      tiles.push({ key: `${z}/${tx}/${ty}`, href, x: x0 + tx * size, y: y0 + ty * size, size });
    }
  }
  return tiles.length > 64 ? [] : tiles;
}

export function WorldMap({
  points,
  title,
  tileUrl,
  onSelect,
  onPick,
}: {
  points: MapPoint[];
  title: string;
  tileUrl?: string | null;
  onSelect?: (id: string) => void;
  /** A click on the map names that place (the satellite position picker). */
  onPick?: (latitude: number, longitude: number) => void;
}) {
  const useTiles = !!tileUrl;
  const { path, projected, tiles, projection } = useMemo(() => {
    const projection = useTiles ? fitted(geoMercator(), points, 1) : fitted(geoEqualEarth(), points, 12);
    const path = geoPath(projection);
    const projected = points.map((p) => ({ p, xy: projection([p.longitude, p.latitude]) }));
    return { path, projected, tiles: useTiles ? tilesFor(projection, tileUrl!) : [], projection };
  }, [points, useTiles, tileUrl]);
  const outline = useMemo(() => path(land()) ?? '', [path]);
  const pick = onPick
    ? (e: MouseEvent<SVGSVGElement>) => {
        // Client pixels to the viewBox (the SVG scales with its width), then back through the projection.
        const box = e.currentTarget.getBoundingClientRect();
        const x = ((e.clientX - box.left) / box.width) * WIDTH;
        const y = ((e.clientY - box.top) / box.height) * HEIGHT;
        const at = projection.invert?.([x, y]);
        if (at && Number.isFinite(at[0]) && Number.isFinite(at[1]) && Math.abs(at[1]) <= 90)
          onPick(at[1], ((((at[0] + 180) % 360) + 360) % 360) - 180);
      }
    : undefined;
  return (
    <svg
      className={onPick ? 'world pick' : 'world'}
      viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
      role="img"
      aria-label={title}
      data-testid="world-map"
      onClick={pick}
    >
      <title>{title}</title>
      <defs>
        <clipPath id="world-view">
          <rect width={WIDTH} height={HEIGHT} />
        </clipPath>
      </defs>
      <g clipPath="url(#world-view)">
        {/* The outline stays under the tiles: where a tile cannot load, the coast still shows. */}
        <path className="land" d={outline} data-testid="world-outline" />
        {tiles.map((t) => (
          <image key={t.key} href={t.href} x={t.x} y={t.y} width={t.size + 0.5} height={t.size + 0.5} data-testid="map-tile" />
        ))}
        {projected.map(({ p, xy }) =>
          xy ? (
            <g key={`${p.kind}-${p.id}`}>
              <circle
                className={p.kind === 'satellite' ? `sat${p.offline ? ' offline' : ''}` : 'point'}
                cx={xy[0]}
                cy={xy[1]}
                r={p.kind === 'satellite' ? 6 : 3}
                data-testid={p.kind === 'satellite' ? 'map-satellite' : 'map-point'}
                tabIndex={onSelect && p.kind === 'satellite' ? 0 : undefined}
                onClick={onSelect && p.kind === 'satellite' ? () => onSelect(p.id) : undefined}
                onKeyDown={
                  onSelect && p.kind === 'satellite' ? (e) => (e.key === 'Enter' || e.key === ' ' ? onSelect(p.id) : undefined) : undefined
                }
              >
                <title>{p.title}</title>
              </circle>
              {p.label ? (
                <text className="sat-label" x={xy[0] + 9} y={xy[1] + 4}>
                  {p.label}
                </text>
              ) : null}
            </g>
          ) : null,
        )}
      </g>
    </svg>
  );
}
