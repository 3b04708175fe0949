-- Detections per team, UTC day, satellite and species, for the `total` of GET /detections.
-- Counting a year of a busy team's rows (a million) costs PostgreSQL over 100 ms on every page
-- view; summing its day rows costs a few. Only call representatives count (call_id IS NULL:
-- lists show one row per stitched call), split by `tentative`.
-- Statement-level triggers keep it exact in the transaction that changes detections: each
-- statement's old and new rows become one delta per key, applied in key order so concurrent
-- transactions lock day rows in the same order.
CREATE TABLE detection_day_counts (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  day date NOT NULL,
  satellite_id uuid NOT NULL,
  species_code text NOT NULL,
  listed integer NOT NULL DEFAULT 0,
  tentative integer NOT NULL DEFAULT 0,
  PRIMARY KEY (tenant_id, day, satellite_id, species_code)
);
CREATE INDEX detection_day_counts_species_idx ON detection_day_counts (tenant_id, lower(species_code), day);

CREATE FUNCTION chorus_day_counts_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO detection_day_counts AS c (tenant_id, day, satellite_id, species_code, listed, tentative)
    SELECT tenant_id, (detected_at AT TIME ZONE 'UTC')::date, satellite_id, species_code,
      count(*) FILTER (WHERE NOT tentative), count(*) FILTER (WHERE tentative)
    FROM new_rows WHERE call_id IS NULL
    GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
    ON CONFLICT (tenant_id, day, satellite_id, species_code)
    DO UPDATE SET listed = c.listed + excluded.listed, tentative = c.tentative + excluded.tentative;
  ELSIF TG_OP = 'DELETE' THEN
    -- A team's deletion cascades to its counts too: nothing to subtract for a team that is gone.
    INSERT INTO detection_day_counts AS c (tenant_id, day, satellite_id, species_code, listed, tentative)
    SELECT tenant_id, (detected_at AT TIME ZONE 'UTC')::date, satellite_id, species_code,
      -count(*) FILTER (WHERE NOT tentative), -count(*) FILTER (WHERE tentative)
    FROM old_rows o WHERE call_id IS NULL AND EXISTS (SELECT 1 FROM tenants t WHERE t.id = o.tenant_id)
    GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
    ON CONFLICT (tenant_id, day, satellite_id, species_code)
    DO UPDATE SET listed = c.listed + excluded.listed, tentative = c.tentative + excluded.tentative;
  ELSE
    -- Most updates (votes, pins) move nothing: their deltas cancel and no row is written.
    INSERT INTO detection_day_counts AS c (tenant_id, day, satellite_id, species_code, listed, tentative)
    SELECT tenant_id, day, satellite_id, species_code, sum(listed), sum(tentative)
    FROM (
      SELECT tenant_id, (detected_at AT TIME ZONE 'UTC')::date AS day, satellite_id, species_code,
        (NOT tentative)::int AS listed, tentative::int AS tentative
      FROM new_rows WHERE call_id IS NULL
      UNION ALL
      SELECT tenant_id, (detected_at AT TIME ZONE 'UTC')::date, satellite_id, species_code,
        -(NOT tentative)::int, -(tentative::int)
      FROM old_rows WHERE call_id IS NULL
    ) d
    GROUP BY 1, 2, 3, 4 HAVING sum(listed) <> 0 OR sum(tentative) <> 0 ORDER BY 1, 2, 3, 4
    ON CONFLICT (tenant_id, day, satellite_id, species_code)
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

INSERT INTO detection_day_counts (tenant_id, day, satellite_id, species_code, listed, tentative)
SELECT tenant_id, (detected_at AT TIME ZONE 'UTC')::date, satellite_id, species_code,
  count(*) FILTER (WHERE NOT tentative), count(*) FILTER (WHERE tentative)
FROM detections WHERE call_id IS NULL
GROUP BY 1, 2, 3, 4;
