-- Issue 35 point 3: one call heard by several recorders (src/modules/detections/observations.ts).
-- An observation is a stitched call grown across satellites: its leader is the one listed row
-- (call_id NULL), every other row of it (the other satellites' calls and all continuations) points
-- at the leader through call_id, as a stitched call's continuations do. So every list, count,
-- stats aggregate (0011, 0021, 0025: their triggers already follow call_id) and export counts one
-- row per observation without a change of its own.
-- recorders: on a leader, how many satellites heard the observation (1: a call of one satellite).
ALTER TABLE detections ADD COLUMN recorders smallint NOT NULL DEFAULT 1;
