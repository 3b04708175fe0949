-- Issue 19: a year grain beside the day and month grains of the period aggregates (0021).
-- A year-long window read twelve month rows per key: for the satellite × species rows of a busy
-- team (50 satellites × 300 species) that is ~150,000 rows, and the species, diversity and map
-- views each read them. With whole UTC years kept too, a window is cut into years, months, days
-- and edges (src/modules/stats/pieces.ts), so a year costs about one row per key.

ALTER TABLE detection_period_counts DROP CONSTRAINT detection_period_counts_grain_check;
ALTER TABLE detection_period_counts ADD CONSTRAINT detection_period_counts_grain_check CHECK (grain IN ('day', 'month', 'year'));
ALTER TABLE detection_hod_counts DROP CONSTRAINT detection_hod_counts_grain_check;
ALTER TABLE detection_hod_counts ADD CONSTRAINT detection_hod_counts_grain_check CHECK (grain IN ('day', 'month', 'year'));

CREATE OR REPLACE FUNCTION chorus_stats_periods_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO detection_period_counts AS c (tenant_id, grain, dims, period, satellite, code, category, listed, pending_review, confirmed, rejected)
    SELECT tenant_id, grain,
      CASE GROUPING(satellite_id, code) WHEN 0 THEN 'pair' WHEN 1 THEN 'satellite' WHEN 2 THEN 'species' ELSE 'all' END,
      period, coalesce(satellite_id::text, ''), coalesce(code, ''), category, sum(n), sum(p), sum(cf), sum(rj)
    FROM (
      SELECT tenant_id, satellite_id, lower(species_code) AS code, category, g.grain,
        CASE g.grain WHEN 'day' THEN (detected_at AT TIME ZONE 'UTC')::date WHEN 'month' THEN date_trunc('month', detected_at AT TIME ZONE 'UTC')::date ELSE date_trunc('year', detected_at AT TIME ZONE 'UTC')::date END AS period,
        1 AS n, (verification_status = 'pending_review')::int AS p, (verification_status = 'confirmed')::int AS cf,
        (verification_status = 'rejected')::int AS rj
      FROM new_rows CROSS JOIN (VALUES ('day'), ('month'), ('year')) AS g (grain)
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
        CASE g.grain WHEN 'day' THEN (detected_at AT TIME ZONE 'UTC')::date WHEN 'month' THEN date_trunc('month', detected_at AT TIME ZONE 'UTC')::date ELSE date_trunc('year', detected_at AT TIME ZONE 'UTC')::date END AS period,
        -1 AS n, -(verification_status = 'pending_review')::int AS p, -(verification_status = 'confirmed')::int AS cf,
        -(verification_status = 'rejected')::int AS rj
      FROM old_rows o CROSS JOIN (VALUES ('day'), ('month'), ('year')) AS g (grain)
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
        CASE g.grain WHEN 'day' THEN day WHEN 'month' THEN date_trunc('month', day)::date ELSE date_trunc('year', day)::date END AS period, n, p, cf, rj
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
      ) r CROSS JOIN (VALUES ('day'), ('month'), ('year')) AS g (grain)
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

CREATE OR REPLACE FUNCTION chorus_stats_hods_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO detection_hod_counts AS c (tenant_id, grain, period, satellite, hod, category, listed)
    SELECT tenant_id, g.grain, CASE g.grain WHEN 'day' THEN day WHEN 'month' THEN date_trunc('month', day)::date ELSE date_trunc('year', day)::date END, satellite, hod, category, sum(n)
    FROM (
      SELECT tenant_id, satellite_id::text AS satellite, category, (detected_at AT TIME ZONE 'UTC')::date AS day,
        extract(hour FROM detected_at AT TIME ZONE 'UTC')::smallint AS hod, n
      FROM (SELECT tenant_id, satellite_id, category, detected_at, 1 AS n FROM new_rows WHERE call_id IS NULL AND promoted AND NOT tentative) r
    ) d CROSS JOIN (VALUES ('day'), ('month'), ('year')) AS g (grain)
    GROUP BY 1, 2, 3, 4, 5, 6
    HAVING sum(n) <> 0
    ORDER BY 1, 2, 3, 4, 5, 6
    ON CONFLICT (tenant_id, grain, period, satellite, hod, category) DO UPDATE SET listed = c.listed + excluded.listed;
  ELSIF TG_OP = 'DELETE' THEN
    INSERT INTO detection_hod_counts AS c (tenant_id, grain, period, satellite, hod, category, listed)
    SELECT tenant_id, g.grain, CASE g.grain WHEN 'day' THEN day WHEN 'month' THEN date_trunc('month', day)::date ELSE date_trunc('year', day)::date END, satellite, hod, category, sum(n)
    FROM (
      SELECT tenant_id, satellite_id::text AS satellite, category, (detected_at AT TIME ZONE 'UTC')::date AS day,
        extract(hour FROM detected_at AT TIME ZONE 'UTC')::smallint AS hod, n
      FROM (SELECT tenant_id, satellite_id, category, detected_at, -1 AS n FROM old_rows o WHERE call_id IS NULL AND promoted AND NOT tentative
          AND EXISTS (SELECT 1 FROM tenants t WHERE t.id = o.tenant_id)) r
    ) d CROSS JOIN (VALUES ('day'), ('month'), ('year')) AS g (grain)
    GROUP BY 1, 2, 3, 4, 5, 6
    HAVING sum(n) <> 0
    ORDER BY 1, 2, 3, 4, 5, 6
    ON CONFLICT (tenant_id, grain, period, satellite, hod, category) DO UPDATE SET listed = c.listed + excluded.listed;
  ELSE
    INSERT INTO detection_hod_counts AS c (tenant_id, grain, period, satellite, hod, category, listed)
    SELECT tenant_id, g.grain, CASE g.grain WHEN 'day' THEN day WHEN 'month' THEN date_trunc('month', day)::date ELSE date_trunc('year', day)::date END, satellite, hod, category, sum(n)
    FROM (
      SELECT tenant_id, satellite_id::text AS satellite, category, (detected_at AT TIME ZONE 'UTC')::date AS day,
        extract(hour FROM detected_at AT TIME ZONE 'UTC')::smallint AS hod, n
      FROM (SELECT tenant_id, satellite_id, category, detected_at, 1 AS n FROM new_rows WHERE call_id IS NULL AND promoted AND NOT tentative
        UNION ALL SELECT tenant_id, satellite_id, category, detected_at, -1 FROM old_rows WHERE call_id IS NULL AND promoted AND NOT tentative) r
    ) d CROSS JOIN (VALUES ('day'), ('month'), ('year')) AS g (grain)
    GROUP BY 1, 2, 3, 4, 5, 6
    HAVING sum(n) <> 0
    ORDER BY 1, 2, 3, 4, 5, 6
    ON CONFLICT (tenant_id, grain, period, satellite, hod, category) DO UPDATE SET listed = c.listed + excluded.listed;
  END IF;
  RETURN NULL;
END $$;

-- The years of what is already counted, summed from its months.
INSERT INTO detection_period_counts (tenant_id, grain, dims, period, satellite, code, category, listed, pending_review, confirmed, rejected)
SELECT tenant_id, 'year', dims, date_trunc('year', period)::date, satellite, code, category,
  sum(listed), sum(pending_review), sum(confirmed), sum(rejected)
FROM detection_period_counts WHERE grain = 'month'
GROUP BY tenant_id, dims, date_trunc('year', period), satellite, code, category
HAVING sum(listed) <> 0 OR sum(pending_review) <> 0 OR sum(confirmed) <> 0 OR sum(rejected) <> 0;

INSERT INTO detection_hod_counts (tenant_id, grain, period, satellite, hod, category, listed)
SELECT tenant_id, 'year', date_trunc('year', period)::date, satellite, hod, category, sum(listed)
FROM detection_hod_counts WHERE grain = 'month'
GROUP BY tenant_id, date_trunc('year', period), satellite, hod, category
HAVING sum(listed) <> 0;
