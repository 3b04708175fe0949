-- Category visibility in lists and counts (issue 5, spec §4 Stats note, 0.78): GET /detections,
-- its `total`, the summary, the species timeline and sessions leave out detections in categories
-- the team does not show (team setting `visible_categories`).
--
-- 1. The list's page query reads ids from an index alone; the category test must not send it to
--    the table. The indexes it uses carry `category` too (INCLUDE), so `category = ANY(…)` is
--    checked on the index entry like `tentative` and `call_id` (0009).
CREATE INDEX detections_tenant_time_cat_idx ON detections (tenant_id, detected_at DESC, id DESC) INCLUDE (tentative, call_id, category);
DROP INDEX detections_tenant_time_id_idx;
CREATE INDEX detections_tenant_lower_species_time_cat_idx ON detections (tenant_id, lower(species_code), detected_at DESC, id DESC) INCLUDE (tentative, call_id, species_code, category);
DROP INDEX detections_tenant_lower_species_time_idx;
CREATE INDEX detections_tenant_confidence_cat_idx ON detections (tenant_id, confidence) INCLUDE (tentative, call_id, category);
DROP INDEX detections_tenant_confidence_incl_idx;
CREATE INDEX detections_tenant_satellite_time_cat_idx ON detections (tenant_id, satellite_id, detected_at DESC, id DESC) INCLUDE (tentative, call_id, category);
DROP INDEX detections_tenant_satellite_time_idx;

-- 2. The day counts (0011) gain a category: every (dim, key, day) row is split per category, so a
--    total sums the rows of the categories the team shows. A species has one category, so its
--    species rows are one per day as before; 'all' and 'satellite' rows are at most six per day.
--    Rebuilt from detections; the triggers are those of 0011 with the category in the key.
DROP TRIGGER detections_day_counts_insert ON detections;
DROP TRIGGER detections_day_counts_update ON detections;
DROP TRIGGER detections_day_counts_delete ON detections;
DROP FUNCTION chorus_day_counts_changed();
DROP TABLE detection_day_counts;

CREATE TABLE detection_day_counts (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  dim text NOT NULL CHECK (dim IN ('all', 'satellite', 'species')),
  key text NOT NULL,
  category text NOT NULL,
  day date NOT NULL,
  listed integer NOT NULL DEFAULT 0,
  tentative integer NOT NULL DEFAULT 0,
  PRIMARY KEY (tenant_id, dim, key, category, day)
);

CREATE FUNCTION chorus_day_counts_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO detection_day_counts AS c (tenant_id, dim, key, category, day, listed, tentative)
    SELECT tenant_id,
      CASE WHEN GROUPING(satellite_id) = 0 THEN 'satellite' WHEN GROUPING(code) = 0 THEN 'species' ELSE 'all' END,
      coalesce(satellite_id::text, code, ''), category, day, sum(listed), sum(tentative)
    FROM (
      SELECT tenant_id, satellite_id, lower(species_code) AS code, category, (detected_at AT TIME ZONE 'UTC')::date AS day,
        (NOT tentative)::int AS listed, tentative::int AS tentative
      FROM new_rows WHERE call_id IS NULL
    ) d
    GROUP BY GROUPING SETS ((tenant_id, category, day), (tenant_id, category, day, satellite_id), (tenant_id, category, day, code))
    ORDER BY 1, 2, 3, 4, 5
    ON CONFLICT (tenant_id, dim, key, category, day)
    DO UPDATE SET listed = c.listed + excluded.listed, tentative = c.tentative + excluded.tentative;
  ELSIF TG_OP = 'DELETE' THEN
    -- A team's deletion cascades to its counts too: nothing to subtract for a team that is gone.
    INSERT INTO detection_day_counts AS c (tenant_id, dim, key, category, day, listed, tentative)
    SELECT tenant_id,
      CASE WHEN GROUPING(satellite_id) = 0 THEN 'satellite' WHEN GROUPING(code) = 0 THEN 'species' ELSE 'all' END,
      coalesce(satellite_id::text, code, ''), category, day, -sum(listed), -sum(tentative)
    FROM (
      SELECT tenant_id, satellite_id, lower(species_code) AS code, category, (detected_at AT TIME ZONE 'UTC')::date AS day,
        (NOT tentative)::int AS listed, tentative::int AS tentative
      FROM old_rows o WHERE call_id IS NULL AND EXISTS (SELECT 1 FROM tenants t WHERE t.id = o.tenant_id)
    ) d
    GROUP BY GROUPING SETS ((tenant_id, category, day), (tenant_id, category, day, satellite_id), (tenant_id, category, day, code))
    ORDER BY 1, 2, 3, 4, 5
    ON CONFLICT (tenant_id, dim, key, category, day)
    DO UPDATE SET listed = c.listed + excluded.listed, tentative = c.tentative + excluded.tentative;
  ELSE
    -- Most updates (votes, pins) move nothing: their deltas cancel and no row is written.
    INSERT INTO detection_day_counts AS c (tenant_id, dim, key, category, day, listed, tentative)
    SELECT tenant_id,
      CASE WHEN GROUPING(satellite_id) = 0 THEN 'satellite' WHEN GROUPING(code) = 0 THEN 'species' ELSE 'all' END,
      coalesce(satellite_id::text, code, ''), category, day, sum(listed), sum(tentative)
    FROM (
      SELECT tenant_id, satellite_id, lower(species_code) AS code, category, (detected_at AT TIME ZONE 'UTC')::date AS day,
        (NOT tentative)::int AS listed, tentative::int AS tentative
      FROM new_rows WHERE call_id IS NULL
      UNION ALL
      SELECT tenant_id, satellite_id, lower(species_code), category, (detected_at AT TIME ZONE 'UTC')::date,
        -(NOT tentative)::int, -(tentative::int)
      FROM old_rows WHERE call_id IS NULL
    ) d
    GROUP BY GROUPING SETS ((tenant_id, category, day), (tenant_id, category, day, satellite_id), (tenant_id, category, day, code))
    HAVING sum(listed) <> 0 OR sum(tentative) <> 0
    ORDER BY 1, 2, 3, 4, 5
    ON CONFLICT (tenant_id, dim, key, category, day)
    DO UPDATE SET listed = c.listed + excluded.listed, tentative = c.tentative + excluded.tentative;
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER detections_day_counts_insert AFTER INSERT ON detections
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION chorus_day_counts_changed();
CREATE TRIGGER detections_day_counts_update AFTER UPDATE ON detections
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION chorus_day_counts_changed();
CREATE TRIGGER detections_day_counts_delete AFTER DELETE ON detections
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION chorus_day_counts_changed();

INSERT INTO detection_day_counts (tenant_id, dim, key, category, day, listed, tentative)
SELECT tenant_id,
  CASE WHEN GROUPING(satellite_id) = 0 THEN 'satellite' WHEN GROUPING(code) = 0 THEN 'species' ELSE 'all' END,
  coalesce(satellite_id::text, code, ''), category, day, sum(listed), sum(tentative)
FROM (
  SELECT tenant_id, satellite_id, lower(species_code) AS code, category, (detected_at AT TIME ZONE 'UTC')::date AS day,
    (NOT tentative)::int AS listed, tentative::int AS tentative
  FROM detections WHERE call_id IS NULL
) d
GROUP BY GROUPING SETS ((tenant_id, category, day), (tenant_id, category, day, satellite_id), (tenant_id, category, day, code));
