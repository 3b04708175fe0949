import { col, shape, type Db, type RowOf } from '../../infra/db/index.ts';

/** One stored hour of weather at a rounded position (what Open-Meteo answered for it). */
export const WeatherHour = shape({
  /** Start of the UTC hour. */
  hour: col.date(),
  temperature: col.nullable(col.num()),
  precipitation: col.nullable(col.num()),
  windSpeed: col.nullable(col.num()),
  cloudCover: col.nullable(col.num()),
});
export type WeatherHour = RowOf<typeof WeatherHour>;

export function createWeatherRepo(db: Db) {
  return {
    /** The stored hours at one rounded position in [start, end). */
    hours: (latE2: number, lngE2: number, start: Date, end: Date) =>
      db.query(
        WeatherHour,
        `SELECT hour, temperature, precipitation, wind_speed AS "windSpeed", cloud_cover AS "cloudCover"
         FROM weather_hours WHERE lat_e2 = $1 AND lng_e2 = $2 AND hour >= $3 AND hour < $4 ORDER BY hour`,
        [latE2, lngE2, start, end],
      ),

    /** Stores fetched hours in one statement; an hour another request stored first stays as it is. */
    async store(latE2: number, lngE2: number, hours: readonly WeatherHour[], now: Date) {
      if (hours.length === 0) return;
      await db.run(
        `INSERT INTO weather_hours (lat_e2, lng_e2, hour, temperature, precipitation, wind_speed, cloud_cover, fetched_at)
         SELECT $1, $2, h, t, p, w, c, $8
         FROM unnest($3::timestamptz[], $4::float8[], $5::float8[], $6::float8[], $7::float8[]) AS v (h, t, p, w, c)
         ON CONFLICT (lat_e2, lng_e2, hour) DO NOTHING`,
        [
          latE2,
          lngE2,
          hours.map((h) => h.hour.toISOString()),
          hours.map((h) => h.temperature),
          hours.map((h) => h.precipitation),
          hours.map((h) => h.windSpeed),
          hours.map((h) => h.cloudCover),
          now,
        ],
      );
    },
  };
}
