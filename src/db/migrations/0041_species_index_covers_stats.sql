-- A species' profile (GET /stats/species/:code) counts its listed detections per tenth of
-- confidence over the window. The species index carried neither `promoted` nor `confidence`, so
-- every matching row was read from the table: rows in time order, a species spread over nearly
-- every page, 450-500 ms for the most common species' year at 10 million detections (issue 37).
-- Carried in the index, the count is read from the index alone.
CREATE INDEX detections_tenant_lower_species_time_cov_idx ON detections (tenant_id, lower(species_code), detected_at DESC, id DESC)
  INCLUDE (tentative, call_id, species_code, category, promoted, confidence);
DROP INDEX detections_tenant_lower_species_time_cat_idx;
