-- Detections per team and UTC day, for the `total` of GET /detections: counting a year of a busy
-- team's rows (a million) costs PostgreSQL over 100 ms on every page view; summing 365 day rows
-- costs well under one. Each day is counted three ways (dim): the whole team ('all', key ''),
-- per satellite ('satellite', key = its id) and per species ('species', key = lower(code)), so
-- the list's team, satellite and species filters each read one contiguous run of the key.
-- Only call representatives count (call_id IS NULL: lists show one row per stitched call),
-- split by `tentative`.
-- Statement-level triggers keep it exact in the transaction that changes detections: each
-- statement's old and new rows become one delta per key, applied in key order so concurrent
-- transactions lock day rows in the same order.
CREATE TABLE detection_day_counts (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  dim text NOT NULL CHECK (dim IN ('all', 'satellite', 'species')),
  key text NOT NULL,
  day date NOT NULL,
  listed integer NOT NULL DEFAULT 0,
  tentative integer NOT NULL DEFAULT 0,
  PRIMARY KEY (tenant_id, dim, key, day)
);

CREATE FUNCTION chorus_day_counts_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO detection_day_counts AS c (tenant_id, dim, key, day, listed, tentative)
    SELECT tenant_id,
      CASE WHEN GROUPING(satellite_id) = 0 THEN 'satellite' WHEN GROUPING(code) = 0 THEN 'species' ELSE 'all' END,
      coalesce(satellite_id::text, code, ''), day, sum(listed), sum(tentative)
    FROM (
      SELECT tenant_id, satellite_id, lower(species_code) AS code, (detected_at AT TIME ZONE 'UTC')::date AS day,
        (NOT tentative)::int AS listed, tentative::int AS tentative
      FROM new_rows WHERE call_id IS NULL
    ) d
    GROUP BY GROUPING SETS ((tenant_id, day), (tenant_id, day, satellite_id), (tenant_id, day, code))
    ORDER BY 1, 2, 3, 4
    ON CONFLICT (tenant_id, dim, key, day)
    DO UPDATE SET listed = c.listed + excluded.listed, tentative = c.tentative + excluded.tentative;
  ELSIF TG_OP = 'DELETE' THEN
    -- A team's deletion cascades to its counts too: nothing to subtract for a team that is gone.
    INSERT INTO detection_day_counts AS c (tenant_id, dim, key, day, listed, tentative)
    SELECT tenant_id,
      CASE WHEN GROUPING(satellite_id) = 0 THEN 'satellite' WHEN GROUPING(code) = 0 THEN 'species' ELSE 'all' END,
      coalesce(satellite_id::text, code, ''), day, -sum(listed), -sum(tentative)
    FROM (
      SELECT tenant_id, satellite_id, lower(species_code) AS code, (detected_at AT TIME ZONE 'UTC')::date AS day,
        (NOT tentative)::int AS listed, tentative::int AS tentative
      FROM old_rows o WHERE call_id IS NULL AND EXISTS (SELECT 1 FROM tenants t WHERE t.id = o.tenant_id)
    ) d
    GROUP BY GROUPING SETS ((tenant_id, day), (tenant_id, day, satellite_id), (tenant_id, day, code))
    ORDER BY 1, 2, 3, 4
    ON CONFLICT (tenant_id, dim, key, day)
    DO UPDATE SET listed = c.listed + excluded.listed, tentative = c.tentative + excluded.tentative;
  ELSE
    -- Most updates (votes, pins) move nothing: their deltas cancel and no row is written.
    INSERT INTO detection_day_counts AS c (tenant_id, dim, key, day, listed, tentative)
    SELECT tenant_id,
      CASE WHEN GROUPING(satellite_id) = 0 THEN 'satellite' WHEN GROUPING(code) = 0 THEN 'species' ELSE 'all' END,
      coalesce(satellite_id::text, code, ''), day, sum(listed), sum(tentative)
    FROM (
      SELECT tenant_id, satellite_id, lower(species_code) AS code, (detected_at AT TIME ZONE 'UTC')::date AS day,
        (NOT tentative)::int AS listed, tentative::int AS tentative
      FROM new_rows WHERE call_id IS NULL
      UNION ALL
      SELECT tenant_id, satellite_id, lower(species_code), (detected_at AT TIME ZONE 'UTC')::date,
        -(NOT tentative)::int, -(tentative::int)
      FROM old_rows WHERE call_id IS NULL
    ) d
    GROUP BY GROUPING SETS ((tenant_id, day), (tenant_id, day, satellite_id), (tenant_id, day, code))
    HAVING sum(listed) <> 0 OR sum(tentative) <> 0
    ORDER BY 1, 2, 3, 4
    ON CONFLICT (tenant_id, dim, key, day)
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

INSERT INTO detection_day_counts (tenant_id, dim, key, day, listed, tentative)
SELECT tenant_id,
  CASE WHEN GROUPING(satellite_id) = 0 THEN 'satellite' WHEN GROUPING(code) = 0 THEN 'species' ELSE 'all' END,
  coalesce(satellite_id::text, code, ''), day, sum(listed), sum(tentative)
FROM (
  SELECT tenant_id, satellite_id, lower(species_code) AS code, (detected_at AT TIME ZONE 'UTC')::date AS day,
    (NOT tentative)::int AS listed, tentative::int AS tentative
  FROM detections WHERE call_id IS NULL
) d
GROUP BY GROUPING SETS ((tenant_id, day), (tenant_id, day, satellite_id), (tenant_id, day, code));
