/**
 * The places data file (assets/places/admin1.json.gz, built by scripts/build-places.ts from
 * Natural Earth; attribution in assets/places/ATTRIBUTION.md): its layout, shared by the build
 * and the lookup.
 */
export const PLACES_FORMAT = 'chorus-places/1';

/** Coordinates are integers of 1/PLACES_SCALE degree (≈ 110 m at the equator). */
export const PLACES_SCALE = 1000;

export interface PlacesFile {
  format: typeof PLACES_FORMAT;
  source: string;
  /** Douglas–Peucker tolerance of the simplification, in degrees. */
  tolerance: number;
  scale: number;
  /** "DE DE-NW": ISO 3166-1 alpha-2, a space, the ISO 3166-2 first-level code or nothing. */
  codes: string[];
  /**
   * One polygon each: the index of its code, then its rings (outer first, then holes), each
   * `x0, y0, dx1, dy1, …` (longitude, latitude; the first point absolute, then steps; open).
   */
  polygons: (number | number[])[][];
}
