-- Aggregates of the /stats endpoints (issue 19). Every figure counts what the Detections page lists:
-- promoted, non-tentative call representatives (call_id IS NULL), split by category so a read sums
-- the categories the team shows (visibility is read, never stored). Statement-level triggers keep
-- both tables exact in the transaction that inserts, promotes, votes on (verification_status),
-- recategorises or deletes detections, as 0011/0012 do for the list's day counts.
--
-- 1. detection_hour_counts: per UTC hour, three ways (dim 'all' key '', 'satellite' key = id,
--    'species' key = lower(code)). In a zone whose offset is a whole number of hours every UTC hour
--    lies inside one local hour, so local days and hours (across daylight-saving changes too) are
--    regroupings of these rows: trends, activity, heat map, peak hours, a species' trend.
-- 2. detection_period_counts: per UTC day and per UTC month (grain), four ways (dims 'all',
--    'satellite', 'species', 'pair' = satellite × species), with the verification states. A window
--    is cut into whole UTC months, whole UTC days and a remainder read from detections, so a year
--    costs about twelve month rows per key plus the edges: species sets, rankings, diversity,
--    comparisons, verification and accuracy.
CREATE TABLE detection_hour_counts (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  dim text NOT NULL CHECK (dim IN ('all', 'satellite', 'species')),
  key text NOT NULL,
  category text NOT NULL,
  hour timestamptz NOT NULL,
  listed integer NOT NULL DEFAULT 0,
  PRIMARY KEY (tenant_id, dim, key, hour, category)
);

CREATE TABLE detection_period_counts (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  grain text NOT NULL CHECK (grain IN ('day', 'month')),
  dims text NOT NULL CHECK (dims IN ('all', 'satellite', 'species', 'pair')),
  period date NOT NULL,
  satellite text NOT NULL,
  code text NOT NULL,
  category text NOT NULL,
  listed integer NOT NULL DEFAULT 0,
  pending_review integer NOT NULL DEFAULT 0,
  confirmed integer NOT NULL DEFAULT 0,
  rejected integer NOT NULL DEFAULT 0,
  PRIMARY KEY (tenant_id, grain, dims, period, satellite, code, category)
);

-- 3. detection_hod_counts: per satellite, UTC hour of day (0–23) and UTC day or month. Within a
--    stretch of constant offset a UTC hour of day is one local hour of day, so a satellite's hourly
--    profile over a year reads twelve months × 24 rows per satellite instead of 8,760 hour rows.
CREATE TABLE detection_hod_counts (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  grain text NOT NULL CHECK (grain IN ('day', 'month')),
  period date NOT NULL,
  satellite text NOT NULL,
  hod smallint NOT NULL,
  category text NOT NULL,
  listed integer NOT NULL DEFAULT 0,
  PRIMARY KEY (tenant_id, grain, period, satellite, hod, category)
);

-- The rows of a statement as signed deltas: +1 for each listed new row, -1 for each listed old row.
-- A view cannot read a trigger's transition tables, so each function spells out its three cases.
CREATE FUNCTION chorus_stats_hours_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO detection_hour_counts AS c (tenant_id, dim, key, hour, category, listed)
    SELECT tenant_id,
      CASE WHEN GROUPING(satellite_id) = 0 THEN 'satellite' WHEN GROUPING(code) = 0 THEN 'species' ELSE 'all' END,
      coalesce(satellite_id::text, code, ''), hour, category, sum(n)
    FROM (
      SELECT tenant_id, satellite_id, lower(species_code) AS code, category, date_trunc('hour', detected_at) AS hour, 1 AS n
      FROM new_rows WHERE call_id IS NULL AND promoted AND NOT tentative
    ) d
    GROUP BY GROUPING SETS ((tenant_id, hour, category), (tenant_id, hour, category, satellite_id), (tenant_id, hour, category, code))
    ORDER BY 1, 2, 3, 4, 5
    ON CONFLICT (tenant_id, dim, key, hour, category) DO UPDATE SET listed = c.listed + excluded.listed;
  ELSIF TG_OP = 'DELETE' THEN
    -- A team's deletion cascades to its counts too: nothing to subtract for a team that is gone.
    INSERT INTO detection_hour_counts AS c (tenant_id, dim, key, hour, category, listed)
    SELECT tenant_id,
      CASE WHEN GROUPING(satellite_id) = 0 THEN 'satellite' WHEN GROUPING(code) = 0 THEN 'species' ELSE 'all' END,
      coalesce(satellite_id::text, code, ''), hour, category, sum(n)
    FROM (
      SELECT tenant_id, satellite_id, lower(species_code) AS code, category, date_trunc('hour', detected_at) AS hour, -1 AS n
      FROM old_rows o WHERE call_id IS NULL AND promoted AND NOT tentative
        AND EXISTS (SELECT 1 FROM tenants t WHERE t.id = o.tenant_id)
    ) d
    GROUP BY GROUPING SETS ((tenant_id, hour, category), (tenant_id, hour, category, satellite_id), (tenant_id, hour, category, code))
    ORDER BY 1, 2, 3, 4, 5
    ON CONFLICT (tenant_id, dim, key, hour, category) DO UPDATE SET listed = c.listed + excluded.listed;
  ELSE
    -- Votes and pins move nothing here: their deltas cancel and no row is written.
    INSERT INTO detection_hour_counts AS c (tenant_id, dim, key, hour, category, listed)
    SELECT tenant_id,
      CASE WHEN GROUPING(satellite_id) = 0 THEN 'satellite' WHEN GROUPING(code) = 0 THEN 'species' ELSE 'all' END,
      coalesce(satellite_id::text, code, ''), hour, category, sum(n)
    FROM (
      SELECT tenant_id, satellite_id, lower(species_code) AS code, category, date_trunc('hour', detected_at) AS hour, 1 AS n
      FROM new_rows WHERE call_id IS NULL AND promoted AND NOT tentative
      UNION ALL
      SELECT tenant_id, satellite_id, lower(species_code), category, date_trunc('hour', detected_at), -1
      FROM old_rows WHERE call_id IS NULL AND promoted AND NOT tentative
    ) d
    GROUP BY GROUPING SETS ((tenant_id, hour, category), (tenant_id, hour, category, satellite_id), (tenant_id, hour, category, code))
    HAVING sum(n) <> 0
    ORDER BY 1, 2, 3, 4, 5
    ON CONFLICT (tenant_id, dim, key, hour, category) DO UPDATE SET listed = c.listed + excluded.listed;
  END IF;
  RETURN NULL;
END $$;

CREATE FUNCTION chorus_stats_periods_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO detection_period_counts AS c (tenant_id, grain, dims, period, satellite, code, category, listed, pending_review, confirmed, rejected)
    SELECT tenant_id, grain,
      CASE GROUPING(satellite_id, code) WHEN 0 THEN 'pair' WHEN 1 THEN 'satellite' WHEN 2 THEN 'species' ELSE 'all' END,
      period, coalesce(satellite_id::text, ''), coalesce(code, ''), category, sum(n), sum(p), sum(cf), sum(rj)
    FROM (
      SELECT tenant_id, satellite_id, lower(species_code) AS code, category, g.grain,
        CASE g.grain WHEN 'day' THEN (detected_at AT TIME ZONE 'UTC')::date ELSE date_trunc('month', detected_at AT TIME ZONE 'UTC')::date END AS period,
        1 AS n, (verification_status = 'pending_review')::int AS p, (verification_status = 'confirmed')::int AS cf,
        (verification_status = 'rejected')::int AS rj
      FROM new_rows CROSS JOIN (VALUES ('day'), ('month')) AS g (grain)
      WHERE call_id IS NULL AND promoted AND NOT tentative
    ) d
    GROUP BY GROUPING SETS ((tenant_id, grain, period, category), (tenant_id, grain, period, category, satellite_id),
      (tenant_id, grain, period, category, code), (tenant_id, grain, period, category, satellite_id, code))
    ORDER BY 1, 2, 3, 4, 5, 6, 7
    ON CONFLICT (tenant_id, grain, dims, period, satellite, code, category) DO UPDATE SET listed = c.listed + excluded.listed,
      pending_review = c.pending_review + excluded.pending_review, confirmed = c.confirmed + excluded.confirmed,
      rejected = c.rejected + excluded.rejected;
  ELSIF TG_OP = 'DELETE' THEN
    INSERT INTO detection_period_counts AS c (tenant_id, grain, dims, period, satellite, code, category, listed, pending_review, confirmed, rejected)
    SELECT tenant_id, grain,
      CASE GROUPING(satellite_id, code) WHEN 0 THEN 'pair' WHEN 1 THEN 'satellite' WHEN 2 THEN 'species' ELSE 'all' END,
      period, coalesce(satellite_id::text, ''), coalesce(code, ''), category, sum(n), sum(p), sum(cf), sum(rj)
    FROM (
      SELECT tenant_id, satellite_id, lower(species_code) AS code, category, g.grain,
        CASE g.grain WHEN 'day' THEN (detected_at AT TIME ZONE 'UTC')::date ELSE date_trunc('month', detected_at AT TIME ZONE 'UTC')::date END AS period,
        -1 AS n, -(verification_status = 'pending_review')::int AS p, -(verification_status = 'confirmed')::int AS cf,
        -(verification_status = 'rejected')::int AS rj
      FROM old_rows o CROSS JOIN (VALUES ('day'), ('month')) AS g (grain)
      WHERE call_id IS NULL AND promoted AND NOT tentative AND EXISTS (SELECT 1 FROM tenants t WHERE t.id = o.tenant_id)
    ) d
    GROUP BY GROUPING SETS ((tenant_id, grain, period, category), (tenant_id, grain, period, category, satellite_id),
      (tenant_id, grain, period, category, code), (tenant_id, grain, period, category, satellite_id, code))
    ORDER BY 1, 2, 3, 4, 5, 6, 7
    ON CONFLICT (tenant_id, grain, dims, period, satellite, code, category) DO UPDATE SET listed = c.listed + excluded.listed,
      pending_review = c.pending_review + excluded.pending_review, confirmed = c.confirmed + excluded.confirmed,
      rejected = c.rejected + excluded.rejected;
  ELSE
    INSERT INTO detection_period_counts AS c (tenant_id, grain, dims, period, satellite, code, category, listed, pending_review, confirmed, rejected)
    SELECT tenant_id, grain,
      CASE GROUPING(satellite_id, code) WHEN 0 THEN 'pair' WHEN 1 THEN 'satellite' WHEN 2 THEN 'species' ELSE 'all' END,
      period, coalesce(satellite_id::text, ''), coalesce(code, ''), category, sum(n), sum(p), sum(cf), sum(rj)
    FROM (
      SELECT tenant_id, satellite_id, code, category, g.grain,
        CASE g.grain WHEN 'day' THEN day ELSE date_trunc('month', day)::date END AS period, n, p, cf, rj
      FROM (
        SELECT tenant_id, satellite_id, lower(species_code) AS code, category, (detected_at AT TIME ZONE 'UTC')::date AS day,
          1 AS n, (verification_status = 'pending_review')::int AS p, (verification_status = 'confirmed')::int AS cf,
          (verification_status = 'rejected')::int AS rj
        FROM new_rows WHERE call_id IS NULL AND promoted AND NOT tentative
        UNION ALL
        SELECT tenant_id, satellite_id, lower(species_code), category, (detected_at AT TIME ZONE 'UTC')::date,
          -1, -(verification_status = 'pending_review')::int, -(verification_status = 'confirmed')::int,
          -(verification_status = 'rejected')::int
        FROM old_rows WHERE call_id IS NULL AND promoted AND NOT tentative
      ) r CROSS JOIN (VALUES ('day'), ('month')) AS g (grain)
    ) d
    GROUP BY GROUPING SETS ((tenant_id, grain, period, category), (tenant_id, grain, period, category, satellite_id),
      (tenant_id, grain, period, category, code), (tenant_id, grain, period, category, satellite_id, code))
    HAVING sum(n) <> 0 OR sum(p) <> 0 OR sum(cf) <> 0 OR sum(rj) <> 0
    ORDER BY 1, 2, 3, 4, 5, 6, 7
    ON CONFLICT (tenant_id, grain, dims, period, satellite, code, category) DO UPDATE SET listed = c.listed + excluded.listed,
      pending_review = c.pending_review + excluded.pending_review, confirmed = c.confirmed + excluded.confirmed,
      rejected = c.rejected + excluded.rejected;
  END IF;
  RETURN NULL;
END $$;

CREATE FUNCTION chorus_stats_hods_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO detection_hod_counts AS c (tenant_id, grain, period, satellite, hod, category, listed)
    SELECT tenant_id, g.grain, CASE g.grain WHEN 'day' THEN day ELSE date_trunc('month', day)::date END, satellite, hod, category, sum(n)
    FROM (
      SELECT tenant_id, satellite_id::text AS satellite, category, (detected_at AT TIME ZONE 'UTC')::date AS day,
        extract(hour FROM detected_at AT TIME ZONE 'UTC')::smallint AS hod, n
      FROM (SELECT tenant_id, satellite_id, category, detected_at, 1 AS n FROM new_rows WHERE call_id IS NULL AND promoted AND NOT tentative) r
    ) d CROSS JOIN (VALUES ('day'), ('month')) AS g (grain)
    GROUP BY 1, 2, 3, 4, 5, 6
    HAVING sum(n) <> 0
    ORDER BY 1, 2, 3, 4, 5, 6
    ON CONFLICT (tenant_id, grain, period, satellite, hod, category) DO UPDATE SET listed = c.listed + excluded.listed;
  ELSIF TG_OP = 'DELETE' THEN
    INSERT INTO detection_hod_counts AS c (tenant_id, grain, period, satellite, hod, category, listed)
    SELECT tenant_id, g.grain, CASE g.grain WHEN 'day' THEN day ELSE date_trunc('month', day)::date END, satellite, hod, category, sum(n)
    FROM (
      SELECT tenant_id, satellite_id::text AS satellite, category, (detected_at AT TIME ZONE 'UTC')::date AS day,
        extract(hour FROM detected_at AT TIME ZONE 'UTC')::smallint AS hod, n
      FROM (SELECT tenant_id, satellite_id, category, detected_at, -1 AS n FROM old_rows o WHERE call_id IS NULL AND promoted AND NOT tentative
          AND EXISTS (SELECT 1 FROM tenants t WHERE t.id = o.tenant_id)) r
    ) d CROSS JOIN (VALUES ('day'), ('month')) AS g (grain)
    GROUP BY 1, 2, 3, 4, 5, 6
    HAVING sum(n) <> 0
    ORDER BY 1, 2, 3, 4, 5, 6
    ON CONFLICT (tenant_id, grain, period, satellite, hod, category) DO UPDATE SET listed = c.listed + excluded.listed;
  ELSE
    INSERT INTO detection_hod_counts AS c (tenant_id, grain, period, satellite, hod, category, listed)
    SELECT tenant_id, g.grain, CASE g.grain WHEN 'day' THEN day ELSE date_trunc('month', day)::date END, satellite, hod, category, sum(n)
    FROM (
      SELECT tenant_id, satellite_id::text AS satellite, category, (detected_at AT TIME ZONE 'UTC')::date AS day,
        extract(hour FROM detected_at AT TIME ZONE 'UTC')::smallint AS hod, n
      FROM (SELECT tenant_id, satellite_id, category, detected_at, 1 AS n FROM new_rows WHERE call_id IS NULL AND promoted AND NOT tentative
        UNION ALL SELECT tenant_id, satellite_id, category, detected_at, -1 FROM old_rows WHERE call_id IS NULL AND promoted AND NOT tentative) r
    ) d CROSS JOIN (VALUES ('day'), ('month')) AS g (grain)
    GROUP BY 1, 2, 3, 4, 5, 6
    HAVING sum(n) <> 0
    ORDER BY 1, 2, 3, 4, 5, 6
    ON CONFLICT (tenant_id, grain, period, satellite, hod, category) DO UPDATE SET listed = c.listed + excluded.listed;
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER detections_stats_hours_insert AFTER INSERT ON detections
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION chorus_stats_hours_changed();
CREATE TRIGGER detections_stats_hours_update AFTER UPDATE ON detections
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION chorus_stats_hours_changed();
CREATE TRIGGER detections_stats_hours_delete AFTER DELETE ON detections
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION chorus_stats_hours_changed();
CREATE TRIGGER detections_stats_periods_insert AFTER INSERT ON detections
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION chorus_stats_periods_changed();
CREATE TRIGGER detections_stats_periods_update AFTER UPDATE ON detections
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION chorus_stats_periods_changed();
CREATE TRIGGER detections_stats_periods_delete AFTER DELETE ON detections
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION chorus_stats_periods_changed();

CREATE TRIGGER detections_stats_hods_insert AFTER INSERT ON detections
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION chorus_stats_hods_changed();
CREATE TRIGGER detections_stats_hods_update AFTER UPDATE ON detections
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION chorus_stats_hods_changed();
CREATE TRIGGER detections_stats_hods_delete AFTER DELETE ON detections
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION chorus_stats_hods_changed();

-- The remainder of a window (edges finer than a day or an hour) reads detections by time with the
-- columns every stats read needs, without visiting the table.
CREATE INDEX detections_stats_time_idx ON detections (tenant_id, detected_at)
  INCLUDE (satellite_id, species_code, category, verification_status, promoted, tentative, call_id);

INSERT INTO detection_hour_counts (tenant_id, dim, key, hour, category, listed)
SELECT tenant_id,
  CASE WHEN GROUPING(satellite_id) = 0 THEN 'satellite' WHEN GROUPING(code) = 0 THEN 'species' ELSE 'all' END,
  coalesce(satellite_id::text, code, ''), hour, category, count(*)
FROM (
  SELECT tenant_id, satellite_id, lower(species_code) AS code, category, date_trunc('hour', detected_at) AS hour
  FROM detections WHERE call_id IS NULL AND promoted AND NOT tentative
) d
GROUP BY GROUPING SETS ((tenant_id, hour, category), (tenant_id, hour, category, satellite_id), (tenant_id, hour, category, code));

INSERT INTO detection_period_counts (tenant_id, grain, dims, period, satellite, code, category, listed, pending_review, confirmed, rejected)
SELECT tenant_id, grain,
  CASE GROUPING(satellite_id, code) WHEN 0 THEN 'pair' WHEN 1 THEN 'satellite' WHEN 2 THEN 'species' ELSE 'all' END,
  period, coalesce(satellite_id::text, ''), coalesce(code, ''), category, count(*), sum(p), sum(cf), sum(rj)
FROM (
  SELECT tenant_id, satellite_id, lower(species_code) AS code, category, g.grain,
    CASE g.grain WHEN 'day' THEN (detected_at AT TIME ZONE 'UTC')::date ELSE date_trunc('month', detected_at AT TIME ZONE 'UTC')::date END AS period,
    (verification_status = 'pending_review')::int AS p, (verification_status = 'confirmed')::int AS cf,
    (verification_status = 'rejected')::int AS rj
  FROM detections CROSS JOIN (VALUES ('day'), ('month')) AS g (grain)
  WHERE call_id IS NULL AND promoted AND NOT tentative
) d
GROUP BY GROUPING SETS ((tenant_id, grain, period, category), (tenant_id, grain, period, category, satellite_id),
  (tenant_id, grain, period, category, code), (tenant_id, grain, period, category, satellite_id, code));

INSERT INTO detection_hod_counts (tenant_id, grain, period, satellite, hod, category, listed)
SELECT tenant_id, g.grain, CASE g.grain WHEN 'day' THEN day ELSE date_trunc('month', day)::date END, satellite, hod, category, count(*)
FROM (
  SELECT tenant_id, satellite_id::text AS satellite, category, (detected_at AT TIME ZONE 'UTC')::date AS day,
    extract(hour FROM detected_at AT TIME ZONE 'UTC')::smallint AS hod
  FROM detections WHERE call_id IS NULL AND promoted AND NOT tentative
) d CROSS JOIN (VALUES ('day'), ('month')) AS g (grain)
GROUP BY 1, 2, 3, 4, 5, 6;
