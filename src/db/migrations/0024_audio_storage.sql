-- Storage in sight (issue 23): the bytes of audio the hub holds, per satellite, and how fast they
-- grow, read from two small tables instead of summing `chunks` (a year of one satellite is ten
-- million rows) or walking the object store on every request.
--
-- 1. audio_storage_totals: per satellite, the bytes and chunks whose audio is still stored
--    (audio_deleted_at IS NULL), and when its first chunk arrived (the growth rate's earliest start).
-- 2. audio_storage_hours: per satellite and UTC hour, the bytes that arrived (by received_at: when
--    they reached the hub's disk, not when they were recorded) and the bytes the retention run
--    removed (by audio_deleted_at). Net growth over a window is the sum of both over its hours.
--
-- Statement-level triggers keep both exact in the transaction that inserts, updates or deletes
-- chunks, as 0011 and 0021 do for the detection counts; deltas are applied in key order so
-- concurrent ingest batches lock rows in the same order.
CREATE TABLE audio_storage_totals (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  satellite_id uuid NOT NULL REFERENCES satellites (id) ON DELETE CASCADE,
  bytes bigint NOT NULL DEFAULT 0,
  chunks bigint NOT NULL DEFAULT 0,
  first_received_at timestamptz,
  PRIMARY KEY (tenant_id, satellite_id)
);

CREATE TABLE audio_storage_hours (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  satellite_id uuid NOT NULL REFERENCES satellites (id) ON DELETE CASCADE,
  hour timestamptz NOT NULL,
  added_bytes bigint NOT NULL DEFAULT 0,
  removed_bytes bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (tenant_id, satellite_id, hour)
);
-- The hub-wide growth reads the last week's hours of every team.
CREATE INDEX audio_storage_hours_hour_idx ON audio_storage_hours (hour);

CREATE FUNCTION chorus_audio_storage_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO audio_storage_totals AS t (tenant_id, satellite_id, bytes, chunks, first_received_at)
    SELECT tenant_id, satellite_id,
      coalesce(sum(bytes) FILTER (WHERE audio_deleted_at IS NULL), 0), count(*) FILTER (WHERE audio_deleted_at IS NULL), min(received_at)
    FROM new_rows
    GROUP BY tenant_id, satellite_id
    ORDER BY 1, 2
    ON CONFLICT (tenant_id, satellite_id) DO UPDATE SET
      bytes = t.bytes + excluded.bytes,
      chunks = t.chunks + excluded.chunks,
      first_received_at = least(t.first_received_at, excluded.first_received_at);
    INSERT INTO audio_storage_hours AS h (tenant_id, satellite_id, hour, added_bytes)
    SELECT tenant_id, satellite_id, date_trunc('hour', received_at, 'UTC'), sum(bytes)
    FROM new_rows WHERE audio_deleted_at IS NULL
    GROUP BY 1, 2, 3
    ORDER BY 1, 2, 3
    ON CONFLICT (tenant_id, satellite_id, hour) DO UPDATE SET added_bytes = h.added_bytes + excluded.added_bytes;
  ELSIF TG_OP = 'DELETE' THEN
    -- The only single-row delete is ingest taking a chunk back (its job could not be enqueued): it
    -- undoes the arrival. A satellite's or a team's deletion cascades to these tables too: nothing
    -- to subtract for a satellite that is gone (and no row may be written for it).
    UPDATE audio_storage_totals t SET bytes = t.bytes - d.bytes, chunks = t.chunks - d.chunks
    FROM (
      SELECT tenant_id, satellite_id, sum(bytes) AS bytes, count(*) AS chunks
      FROM old_rows o
      WHERE audio_deleted_at IS NULL AND EXISTS (SELECT 1 FROM satellites s WHERE s.id = o.satellite_id)
      GROUP BY 1, 2
    ) d
    WHERE t.tenant_id = d.tenant_id AND t.satellite_id = d.satellite_id;
    UPDATE audio_storage_hours h SET added_bytes = h.added_bytes - d.bytes
    FROM (
      SELECT tenant_id, satellite_id, date_trunc('hour', received_at, 'UTC') AS hour, sum(bytes) AS bytes
      FROM old_rows o
      WHERE audio_deleted_at IS NULL AND EXISTS (SELECT 1 FROM satellites s WHERE s.id = o.satellite_id)
      GROUP BY 1, 2, 3
    ) d
    WHERE h.tenant_id = d.tenant_id AND h.satellite_id = d.satellite_id AND h.hour = d.hour;
  ELSE
    -- Most updates (inference marks) leave audio_deleted_at alone and write nothing. The retention
    -- run sets it (bytes removed in the hour it ran); nothing clears it, but a cleared mark would
    -- count the bytes as stored again and take back the removal.
    INSERT INTO audio_storage_totals AS t (tenant_id, satellite_id, bytes, chunks)
    SELECT n.tenant_id, n.satellite_id,
      sum(CASE WHEN n.audio_deleted_at IS NULL THEN n.bytes ELSE -n.bytes END),
      sum(CASE WHEN n.audio_deleted_at IS NULL THEN 1 ELSE -1 END)
    FROM new_rows n JOIN old_rows o ON o.id = n.id
    WHERE (o.audio_deleted_at IS NULL) <> (n.audio_deleted_at IS NULL)
    GROUP BY 1, 2
    ORDER BY 1, 2
    ON CONFLICT (tenant_id, satellite_id) DO UPDATE SET bytes = t.bytes + excluded.bytes, chunks = t.chunks + excluded.chunks;
    INSERT INTO audio_storage_hours AS h (tenant_id, satellite_id, hour, removed_bytes)
    SELECT n.tenant_id, n.satellite_id, date_trunc('hour', coalesce(n.audio_deleted_at, o.audio_deleted_at), 'UTC'),
      sum(CASE WHEN n.audio_deleted_at IS NULL THEN -n.bytes ELSE n.bytes END)
    FROM new_rows n JOIN old_rows o ON o.id = n.id
    WHERE (o.audio_deleted_at IS NULL) <> (n.audio_deleted_at IS NULL)
    GROUP BY 1, 2, 3
    ORDER BY 1, 2, 3
    ON CONFLICT (tenant_id, satellite_id, hour) DO UPDATE SET removed_bytes = h.removed_bytes + excluded.removed_bytes;
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER chunks_audio_storage_insert AFTER INSERT ON chunks
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION chorus_audio_storage_changed();
CREATE TRIGGER chunks_audio_storage_update AFTER UPDATE ON chunks
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION chorus_audio_storage_changed();
CREATE TRIGGER chunks_audio_storage_delete AFTER DELETE ON chunks
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION chorus_audio_storage_changed();

-- Backfill from the chunks already stored: arrivals by received_at, removals by audio_deleted_at.
INSERT INTO audio_storage_totals (tenant_id, satellite_id, bytes, chunks, first_received_at)
SELECT tenant_id, satellite_id,
  coalesce(sum(bytes) FILTER (WHERE audio_deleted_at IS NULL), 0), count(*) FILTER (WHERE audio_deleted_at IS NULL), min(received_at)
FROM chunks
GROUP BY tenant_id, satellite_id;

INSERT INTO audio_storage_hours (tenant_id, satellite_id, hour, added_bytes, removed_bytes)
SELECT tenant_id, satellite_id, hour, sum(added), sum(removed)
FROM (
  SELECT tenant_id, satellite_id, date_trunc('hour', received_at, 'UTC') AS hour, bytes::bigint AS added, 0::bigint AS removed FROM chunks
  UNION ALL
  SELECT tenant_id, satellite_id, date_trunc('hour', audio_deleted_at, 'UTC'), 0, bytes FROM chunks WHERE audio_deleted_at IS NOT NULL
) c
GROUP BY tenant_id, satellite_id, hour;
