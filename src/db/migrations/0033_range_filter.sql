-- Issue 35 point 1, the range filter: a model's kind. A `classifier` hears audio (every model
-- before this migration); a `range` model (BirdNET's species-range "meta model") takes a position
-- and a week of BirdNET's 48-week year and gives one score per label of its labels file, mapped to
-- species like a classifier's (model_labels). A range model is never a team's classifier nor the
-- hub default; its audio columns (family, rate, window) keep their defaults and mean nothing.
ALTER TABLE inference_models
  ADD COLUMN kind text NOT NULL DEFAULT 'classifier' CHECK (kind IN ('classifier', 'range'));

-- A detection whose species scored below the team's range threshold at its satellite's position
-- that week (or that the team's exclude list names) is stored and listed like any other, flagged
-- out_of_range, and raises no alert. range_source: what judged it (null: nothing did: no range
-- model and no eBird key, no position, or a species neither knows); range_score: the range model's
-- score for it (null unless range_source = 'range_model').
ALTER TABLE detections
  ADD COLUMN out_of_range boolean NOT NULL DEFAULT false,
  ADD COLUMN range_source text CHECK (range_source IN ('range_model', 'ebird', 'team_list')),
  ADD COLUMN range_score real;
