-- The species catalog as a table (issue 5: "keep a species catalog table that models' labels map
-- into"). Rows come from the bundled BirdNET v2.4 catalog (assets/species/catalog.json.gz, source
-- 'catalog'), written at start-up whenever its content differs from what was last written
-- (species_catalog_version), and from labels of uploaded models that the catalog does not know
-- (source 'model', code x-<scientific name>, docs/model.md). Names in the other 41 languages stay in
-- the file and are read in memory by code: nothing joins on them.
CREATE TABLE species (
  code text PRIMARY KEY,
  scientific_name text NOT NULL,
  common_name text NOT NULL,
  category text NOT NULL,
  source text NOT NULL CHECK (source IN ('catalog', 'model')),
  -- Position in BirdNET v2.4 label order (its model's output index); null for a model's own species.
  catalog_index integer,
  updated_at timestamptz NOT NULL
);
-- Codes are looked up as typed (translate, remapping a label): case-insensitively.
CREATE INDEX species_lower_code_idx ON species (lower(code));

CREATE TABLE species_catalog_version (
  singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  fingerprint text NOT NULL,
  species_count integer NOT NULL,
  written_at timestamptz NOT NULL
);

-- Each model's labels in output order and the species each maps into, fixed when the model is
-- first mapped: a later catalog never moves an existing model's detections to other codes.
CREATE TABLE model_labels (
  model_id text NOT NULL REFERENCES inference_models (id) ON DELETE CASCADE,
  output_index integer NOT NULL,
  label text NOT NULL,
  species_code text NOT NULL REFERENCES species (code),
  PRIMARY KEY (model_id, output_index)
);
CREATE INDEX model_labels_species_idx ON model_labels (species_code);

-- Moves with every change to a model's label mapping, so each worker process re-reads it on its next job.
ALTER TABLE inference_models ADD COLUMN labels_version integer NOT NULL DEFAULT 0;
