-- External data for the statistics (issue 19): the weather of an hour at a position, eBird's
-- recent observations near a position, and the GPS fix a telemetry sample may carry.

-- One row per hour (UTC) at one position, rounded to 0.01° (about 1 km, finer than Open-Meteo's
-- grid), so a given hour at a given place is fetched from the weather service once. Hours the
-- service has no value for yet (the archive lags a few days) are not stored and are asked again.
CREATE TABLE weather_hours (
  lat_e2 integer NOT NULL,
  lng_e2 integer NOT NULL,
  hour timestamptz NOT NULL,
  temperature double precision,
  precipitation double precision,
  wind_speed double precision,
  cloud_cover double precision,
  fetched_at timestamptz NOT NULL,
  PRIMARY KEY (lat_e2, lng_e2, hour)
);

-- eBird's answer for one query (position rounded to 0.01°, distance, days back), kept a day:
-- eBird asks clients not to repeat the same request, and a day-old list of recent sightings
-- answers "what is expected here" as well as a fresh one.
CREATE TABLE ebird_recent_cache (
  lat_e2 integer NOT NULL,
  lng_e2 integer NOT NULL,
  dist_km integer NOT NULL,
  back_days integer NOT NULL,
  observations jsonb NOT NULL,
  fetched_at timestamptz NOT NULL,
  PRIMARY KEY (lat_e2, lng_e2, dist_km, back_days)
);

-- Telemetry's GPS data (satellite protocol §5, "periodic battery, storage, CPU, GPS data"): a
-- phone's latest fix is where the map draws it.
ALTER TABLE telemetry ADD COLUMN latitude double precision, ADD COLUMN longitude double precision;
CREATE INDEX telemetry_gps_idx ON telemetry (satellite_id, at DESC) WHERE latitude IS NOT NULL;
