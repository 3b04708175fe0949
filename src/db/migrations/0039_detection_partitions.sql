-- chorus:postgres-only
-- Issue 37, detections at the scale of years: on PostgreSQL, detections is partitioned by UTC month
-- of detected_at, so a team's year reads twelve partitions' indexes however many years the table
-- holds, and an old month can be detached (docs/operations.md "Detections at the scale of years").
-- The embedded database (PGlite) keeps one table: the migration runner records this file there
-- without running it (the first line). Every query is the same on both.
--
-- A partitioned table's unique keys must hold the partition key, so `id` alone can no longer be
-- the primary key that votes, comments, annotations, embeddings and alerts point at. Each id is
-- kept once more in detection_ids, filled and emptied by statement triggers on detections; those
-- foreign keys point there, with their ON DELETE actions unchanged (docs/decisions.md "Issue 37").
-- The conversion reads what the table carries from the catalog (indexes, triggers, foreign keys
-- both ways) rather than naming it, so it rebuilds whatever earlier migrations gave the table.

-- Every detection's id, unique across all partitions.
CREATE TABLE detection_ids (id uuid PRIMARY KEY);

-- The partition of one UTC month (the month of `at`), created when missing; false when a table of
-- its name exists (a partition, or a detached month an operator kept under that name). Rows of that
-- month waiting in the default partition (a recording older than every partition) move in first: a
-- partition cannot be created while the default partition holds rows of its range. Rows moved
-- between partitions keep their ids and counts: the triggers of detections fire on statements
-- against the partitioned table, not on one partition.
CREATE FUNCTION chorus_detection_partition_ensure(at timestamptz) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
  parent regclass := 'detections'::regclass;
  ns text := (SELECT relnamespace::regnamespace::text FROM pg_class WHERE oid = parent);
  lo timestamptz := date_trunc('month', at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC';
  hi timestamptz := (date_trunc('month', at AT TIME ZONE 'UTC') + interval '1 month') AT TIME ZONE 'UTC';
  part text := 'detections_' || to_char(at AT TIME ZONE 'UTC', 'YYYY_MM');
  waiting boolean;
BEGIN
  IF to_regclass(format('%s.%I', ns, part)) IS NOT NULL THEN
    RETURN false;
  END IF;
  EXECUTE format('SELECT EXISTS (SELECT 1 FROM %s.detections_default WHERE detected_at >= $1 AND detected_at < $2)', ns)
    INTO waiting USING lo, hi;
  IF waiting THEN
    EXECUTE format('CREATE TABLE %s.%I (LIKE %s INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING STORAGE)', ns, part, parent);
    EXECUTE format('WITH moved AS (DELETE FROM %s.detections_default WHERE detected_at >= $1 AND detected_at < $2 RETURNING *)
                    INSERT INTO %s.%I SELECT * FROM moved', ns, ns, part) USING lo, hi;
    EXECUTE format('ALTER TABLE %s ATTACH PARTITION %s.%I FOR VALUES FROM (%L) TO (%L)', parent, ns, part, lo, hi);
  ELSE
    EXECUTE format('CREATE TABLE %s.%I PARTITION OF %s FOR VALUES FROM (%L) TO (%L)', ns, part, parent, lo, hi);
  END IF;
  RETURN true;
END $$;

-- The partitions of the month of `at` and the `ahead` months after it, and of every month the
-- default partition holds rows of; how many were created. The hub runs it at start and daily
-- (src/modules/detections/partitions.ts); two processes take turns.
CREATE FUNCTION chorus_detection_partitions_ensure(at timestamptz, ahead integer) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
  ns text := (SELECT relnamespace::regnamespace::text FROM pg_class WHERE oid = 'detections'::regclass);
  created integer := 0;
  m timestamptz;
BEGIN
  PERFORM pg_advisory_xact_lock(734114);
  FOR m IN EXECUTE format(
    'SELECT (date_trunc(''month'', $1 AT TIME ZONE ''UTC'') + make_interval(months => i)) AT TIME ZONE ''UTC''
       FROM generate_series(0, $2) AS i
     UNION
     SELECT DISTINCT date_trunc(''month'', detected_at AT TIME ZONE ''UTC'') AT TIME ZONE ''UTC'' FROM %s.detections_default
     ORDER BY 1', ns) USING at, ahead
  LOOP
    IF chorus_detection_partition_ensure(m) THEN
      created := created + 1;
    END IF;
  END LOOP;
  RETURN created;
END $$;

-- detection_ids follows detections: statement triggers with the changed rows as tables, so a bulk
-- insert writes the ids in one statement. A second row with an id already taken fails here (the
-- primary key) as it failed on detections before.
CREATE FUNCTION chorus_detection_ids_changed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO detection_ids (id) SELECT id FROM new_rows;
  ELSE
    DELETE FROM detection_ids d USING old_rows o WHERE d.id = o.id;
  END IF;
  RETURN NULL;
END $$;

-- An id never changes (detection_ids would lose track of it).
CREATE FUNCTION chorus_detection_id_fixed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.id IS DISTINCT FROM OLD.id THEN
    RAISE EXCEPTION 'a detection''s id does not change' USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END $$;

DO $$
DECLARE
  old regclass := 'detections'::regclass;
  ns text := (SELECT relnamespace::regnamespace::text FROM pg_class WHERE oid = 'detections'::regclass);
  index_defs text[];
  trigger_defs text[];
  outgoing_defs text[];
  incoming_defs text[] := '{}';
  r record;
  def text;
  m timestamptz;
BEGIN
  IF (SELECT relkind FROM pg_class WHERE oid = old) = 'p' THEN
    RETURN;
  END IF;
  IF EXISTS (SELECT 1 FROM pg_index WHERE indrelid = old AND indisunique AND NOT indisprimary) THEN
    RAISE EXCEPTION 'detections has a unique index besides its primary key: it cannot be partitioned by time as it is';
  END IF;
  IF EXISTS (SELECT 1 FROM pg_constraint WHERE conrelid = old AND confrelid = old) THEN
    RAISE EXCEPTION 'detections has a foreign key to itself: it cannot be partitioned by time as it is';
  END IF;

  -- What the table carries besides columns, defaults and checks (LIKE copies those), as DDL that
  -- names `detections`, read before the rename.
  SELECT coalesce(array_agg(pg_get_indexdef(i.indexrelid) ORDER BY c.relname), '{}') INTO index_defs
    FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
    WHERE i.indrelid = old AND NOT i.indisprimary;
  SELECT coalesce(array_agg(pg_get_triggerdef(t.oid) ORDER BY t.tgname), '{}') INTO trigger_defs
    FROM pg_trigger t WHERE t.tgrelid = old AND NOT t.tgisinternal;
  SELECT coalesce(array_agg(format('ALTER TABLE %s.detections ADD CONSTRAINT %I %s', ns, conname, pg_get_constraintdef(oid)) ORDER BY conname), '{}')
    INTO outgoing_defs
    FROM pg_constraint WHERE conrelid = old AND contype = 'f';

  -- The foreign keys pointing at detections (id) move to detection_ids (id).
  FOR r IN
    SELECT c.conname, c.conrelid::regclass AS tbl, c.confdeltype,
      (SELECT string_agg(quote_ident(a.attname), ', ' ORDER BY k.ord)
         FROM unnest(c.conkey) WITH ORDINALITY AS k (attnum, ord)
         JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.attnum) AS cols,
      (SELECT array_agg(a.attname ORDER BY k.ord)
         FROM unnest(c.confkey) WITH ORDINALITY AS k (attnum, ord)
         JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.attnum) AS refcols
    FROM pg_constraint c WHERE c.confrelid = old AND c.contype = 'f'
  LOOP
    IF r.refcols <> ARRAY['id']::name[] THEN
      RAISE EXCEPTION 'foreign key % on % points at detections by columns other than id', r.conname, r.tbl;
    END IF;
    EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', r.tbl, r.conname);
    incoming_defs := incoming_defs || format(
      'ALTER TABLE %s ADD CONSTRAINT %I FOREIGN KEY (%s) REFERENCES %s.detection_ids (id) ON DELETE %s', r.tbl, r.conname, r.cols, ns,
      CASE r.confdeltype WHEN 'c' THEN 'CASCADE' WHEN 'n' THEN 'SET NULL' WHEN 'd' THEN 'SET DEFAULT' WHEN 'r' THEN 'RESTRICT' ELSE 'NO ACTION' END);
  END LOOP;

  EXECUTE format('ALTER TABLE %s.detections RENAME TO detections_unpartitioned', ns);
  EXECUTE format('CREATE TABLE %s.detections (LIKE %s.detections_unpartitioned INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING STORAGE INCLUDING COMMENTS)
                  PARTITION BY RANGE (detected_at)', ns, ns);
  EXECUTE format('CREATE TABLE %s.detections_default PARTITION OF %s.detections DEFAULT', ns, ns);
  -- A partition for every month with rows, and the current month and three ahead.
  FOR m IN EXECUTE format('SELECT DISTINCT date_trunc(''month'', detected_at AT TIME ZONE ''UTC'') AT TIME ZONE ''UTC'' FROM %s.detections_unpartitioned', ns)
  LOOP
    PERFORM chorus_detection_partition_ensure(m);
  END LOOP;
  PERFORM chorus_detection_partitions_ensure(now(), 3);

  -- The rows, before any index or trigger exists on the new table (the counts kept by the
  -- triggers already hold them; indexes are built once, not row by row).
  EXECUTE format('INSERT INTO %s.detections SELECT * FROM %s.detections_unpartitioned', ns, ns);
  EXECUTE format('INSERT INTO %s.detection_ids (id) SELECT id FROM %s.detections_unpartitioned', ns, ns);
  EXECUTE format('DROP TABLE %s.detections_unpartitioned', ns);

  EXECUTE format('ALTER TABLE %s.detections ADD CONSTRAINT detections_pkey PRIMARY KEY (id, detected_at)', ns);
  FOREACH def IN ARRAY index_defs || trigger_defs || outgoing_defs || incoming_defs
  LOOP
    EXECUTE def;
  END LOOP;
  EXECUTE format('CREATE TRIGGER detections_ids_insert AFTER INSERT ON %s.detections
                  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION chorus_detection_ids_changed()', ns);
  EXECUTE format('CREATE TRIGGER detections_ids_delete AFTER DELETE ON %s.detections
                  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION chorus_detection_ids_changed()', ns);
  EXECUTE format('CREATE TRIGGER detections_id_fixed BEFORE UPDATE OF id ON %s.detections
                  FOR EACH ROW EXECUTE FUNCTION chorus_detection_id_fixed()', ns);
  -- Autovacuum analyzes partitions, never the partitioned table: its statistics are taken here.
  EXECUTE format('ANALYZE %s.detections', ns);
END
$$;
