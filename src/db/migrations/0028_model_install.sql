-- Issue 31 "install in a minute": a model may name the known model it is (a family of the catalog
-- in src/modules/models/known-models.ts: BirdNET v2.4, BirdNET+ V3.0, Perch 2.0), the attribution
-- its licence asks for, and where its file came from. Not to be confused with `family` (0026),
-- which says what the model listens to. The attribution shown with a model's detections is
-- `attribution` when set, else the known family's; both may be null (the built-in model, a model
-- of no known family).
ALTER TABLE inference_models
  ADD COLUMN known_family text,
  ADD COLUMN attribution text,
  ADD COLUMN source_url text;
