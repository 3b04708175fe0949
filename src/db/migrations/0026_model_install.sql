-- Issue 31 "install in a minute": a model may name the known family it belongs to
-- (src/modules/models/known-models.ts), the attribution its licence asks for, and where its file
-- came from. The attribution shown with a model's detections is this column when set, else the
-- family's; both may be null (the built-in model, a model of no known family).
ALTER TABLE inference_models ADD COLUMN family text;
ALTER TABLE inference_models ADD COLUMN attribution text;
ALTER TABLE inference_models ADD COLUMN source_url text;
