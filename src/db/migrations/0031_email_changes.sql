-- Issue 33 item 3: a new email address takes effect only once confirmed through a link sent to
-- it, and the old address may undo the change for a week. One row per requested change; tokens
-- are stored as SHA-256 hashes, like reset tokens. The row goes with its person (erasure).
CREATE TABLE email_changes (
  id uuid PRIMARY KEY,
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  old_email text NOT NULL,
  new_email text NOT NULL,
  confirm_token_hash text NOT NULL,
  undo_token_hash text NOT NULL,
  created_at timestamptz NOT NULL,
  confirm_expires_at timestamptz NOT NULL,
  undo_expires_at timestamptz NOT NULL,
  confirmed_at timestamptz,
  cancelled_at timestamptz,
  undone_at timestamptz
);
CREATE UNIQUE INDEX email_changes_confirm_key ON email_changes (confirm_token_hash);
CREATE UNIQUE INDEX email_changes_undo_key ON email_changes (undo_token_hash);
CREATE INDEX email_changes_user_idx ON email_changes (user_id, created_at);
