-- The list's `total` under `minConfidence` or `speciesSearch` counted every matching row: 114 and
-- 283 ms p99 for 1.3 million and 67,000 rows of a 10-million-row team (issue 37). The day counts
-- (0011, 0012) gain two dimensions. `name`: per team, category and UTC day, the rows of each
-- (common, scientific) name pair, keyed by the pair as a JSON array; a search tests each pair the team
-- has (detection_name_pairs) as the list tests each row's names, then sums the matching pairs' day
-- rows (names are not a function of the species code: a model's own labels keep their names). `confidence`: the rows in each twentieth of confidence, keyed by
-- width_bucket over the 21 thresholds 0, 0.05, …, 1, compared as `real` like the column: key j
-- (1–21) holds thresholds[j] <= confidence < thresholds[j + 1], 1-based (0: below 0). A total sums the steps
-- at or above the first threshold not below `minConfidence` and counts row by row only the rows
-- between `minConfidence` and that threshold (none when it is on the grid) and the window's
-- partial days. The function is 0012's with the two grouping sets added.
ALTER TABLE detection_day_counts DROP CONSTRAINT detection_day_counts_dim_check;
ALTER TABLE detection_day_counts ADD CONSTRAINT detection_day_counts_dim_check CHECK (dim IN ('all', 'satellite', 'species', 'confidence', 'name'));

-- The name pairs a team's rows have carried (never removed: a pair without rows sums to nothing),
-- so a search tests a few hundred pairs, then sums the day rows of the pairs that match.
CREATE TABLE detection_name_pairs (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  key text NOT NULL,
  common_name text NOT NULL,
  scientific_name text NOT NULL,
  PRIMARY KEY (tenant_id, key)
);

-- The two keys, written once for the trigger and the backfill (SQL functions: inlined where used).
CREATE FUNCTION chorus_confidence_step(confidence real) RETURNS integer LANGUAGE sql IMMUTABLE AS $$
  SELECT width_bucket(confidence, '{0,0.05,0.1,0.15,0.2,0.25,0.3,0.35,0.4,0.45,0.5,0.55,0.6,0.65,0.7,0.75,0.8,0.85,0.9,0.95,1}'::real[])
$$;
CREATE FUNCTION chorus_name_key(common_name text, scientific_name text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT jsonb_build_array(common_name, scientific_name)::text
$$;

CREATE OR REPLACE FUNCTION chorus_day_counts_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO detection_name_pairs (tenant_id, key, common_name, scientific_name)
    SELECT DISTINCT tenant_id, chorus_name_key(common_name, scientific_name), common_name, scientific_name FROM new_rows
    ORDER BY 1, 2
    ON CONFLICT DO NOTHING;
    INSERT INTO detection_day_counts AS c (tenant_id, dim, key, category, day, listed, tentative)
    SELECT tenant_id,
      CASE WHEN GROUPING(satellite_id) = 0 THEN 'satellite' WHEN GROUPING(code) = 0 THEN 'species' WHEN GROUPING(step) = 0 THEN 'confidence' WHEN GROUPING(names) = 0 THEN 'name' ELSE 'all' END,
      coalesce(satellite_id::text, code, step::text, names, ''), category, day, sum(listed), sum(tentative)
    FROM (
      SELECT tenant_id, satellite_id, lower(species_code) AS code, chorus_confidence_step(confidence) AS step, chorus_name_key(common_name, scientific_name) AS names, category, (detected_at AT TIME ZONE 'UTC')::date AS day,
        (NOT tentative)::int AS listed, tentative::int AS tentative
      FROM new_rows WHERE call_id IS NULL
    ) d
    GROUP BY GROUPING SETS ((tenant_id, category, day), (tenant_id, category, day, satellite_id), (tenant_id, category, day, code), (tenant_id, category, day, step), (tenant_id, category, day, names))
    ORDER BY 1, 2, 3, 4, 5
    ON CONFLICT (tenant_id, dim, key, category, day)
    DO UPDATE SET listed = c.listed + excluded.listed, tentative = c.tentative + excluded.tentative;
  ELSIF TG_OP = 'DELETE' THEN
    -- A team's deletion cascades to its counts too: nothing to subtract for a team that is gone.
    INSERT INTO detection_day_counts AS c (tenant_id, dim, key, category, day, listed, tentative)
    SELECT tenant_id,
      CASE WHEN GROUPING(satellite_id) = 0 THEN 'satellite' WHEN GROUPING(code) = 0 THEN 'species' WHEN GROUPING(step) = 0 THEN 'confidence' WHEN GROUPING(names) = 0 THEN 'name' ELSE 'all' END,
      coalesce(satellite_id::text, code, step::text, names, ''), category, day, -sum(listed), -sum(tentative)
    FROM (
      SELECT tenant_id, satellite_id, lower(species_code) AS code, chorus_confidence_step(confidence) AS step, chorus_name_key(common_name, scientific_name) AS names, category, (detected_at AT TIME ZONE 'UTC')::date AS day,
        (NOT tentative)::int AS listed, tentative::int AS tentative
      FROM old_rows o WHERE call_id IS NULL AND EXISTS (SELECT 1 FROM tenants t WHERE t.id = o.tenant_id)
    ) d
    GROUP BY GROUPING SETS ((tenant_id, category, day), (tenant_id, category, day, satellite_id), (tenant_id, category, day, code), (tenant_id, category, day, step), (tenant_id, category, day, names))
    ORDER BY 1, 2, 3, 4, 5
    ON CONFLICT (tenant_id, dim, key, category, day)
    DO UPDATE SET listed = c.listed + excluded.listed, tentative = c.tentative + excluded.tentative;
  ELSE
    -- Most updates (votes, pins) move nothing: their deltas cancel and no row is written.
    INSERT INTO detection_day_counts AS c (tenant_id, dim, key, category, day, listed, tentative)
    SELECT tenant_id,
      CASE WHEN GROUPING(satellite_id) = 0 THEN 'satellite' WHEN GROUPING(code) = 0 THEN 'species' WHEN GROUPING(step) = 0 THEN 'confidence' WHEN GROUPING(names) = 0 THEN 'name' ELSE 'all' END,
      coalesce(satellite_id::text, code, step::text, names, ''), category, day, sum(listed), sum(tentative)
    FROM (
      SELECT tenant_id, satellite_id, lower(species_code) AS code, chorus_confidence_step(confidence) AS step, chorus_name_key(common_name, scientific_name) AS names, category, (detected_at AT TIME ZONE 'UTC')::date AS day,
        (NOT tentative)::int AS listed, tentative::int AS tentative
      FROM new_rows WHERE call_id IS NULL
      UNION ALL
      SELECT tenant_id, satellite_id, lower(species_code), chorus_confidence_step(confidence), chorus_name_key(common_name, scientific_name), category, (detected_at AT TIME ZONE 'UTC')::date,
        -(NOT tentative)::int, -(tentative::int)
      FROM old_rows WHERE call_id IS NULL
    ) d
    GROUP BY GROUPING SETS ((tenant_id, category, day), (tenant_id, category, day, satellite_id), (tenant_id, category, day, code), (tenant_id, category, day, step), (tenant_id, category, day, names))
    HAVING sum(listed) <> 0 OR sum(tentative) <> 0
    ORDER BY 1, 2, 3, 4, 5
    ON CONFLICT (tenant_id, dim, key, category, day)
    DO UPDATE SET listed = c.listed + excluded.listed, tentative = c.tentative + excluded.tentative;
  END IF;
  RETURN NULL;
END $$;

INSERT INTO detection_day_counts (tenant_id, dim, key, category, day, listed, tentative)
SELECT tenant_id, CASE WHEN GROUPING(step) = 0 THEN 'confidence' ELSE 'name' END, coalesce(step::text, names), category, day, sum(listed), sum(tentative)
FROM (
  SELECT tenant_id, chorus_confidence_step(confidence) AS step, chorus_name_key(common_name, scientific_name) AS names,
    category, (detected_at AT TIME ZONE 'UTC')::date AS day, (NOT tentative)::int AS listed, tentative::int AS tentative
  FROM detections WHERE call_id IS NULL
) d
GROUP BY GROUPING SETS ((tenant_id, category, day, step), (tenant_id, category, day, names));

INSERT INTO detection_name_pairs (tenant_id, key, common_name, scientific_name)
SELECT DISTINCT tenant_id, chorus_name_key(common_name, scientific_name), common_name, scientific_name FROM detections;
