-- Accounts, teams, credentials, audit and layered settings.
-- Timestamps are always written from the injected clock, never from now(), so tests can move time.

CREATE TABLE users (
  id uuid PRIMARY KEY,
  email text NOT NULL,
  name text NOT NULL,
  password_hash text NOT NULL,
  is_admin boolean NOT NULL DEFAULT false,
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'blocked')),
  failed_login_attempts integer NOT NULL DEFAULT 0,
  locked_until timestamptz,
  last_login_at timestamptz,
  last_login_ip text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE UNIQUE INDEX users_email_lower_key ON users (lower(email));

CREATE TABLE tenants (
  id uuid PRIMARY KEY,
  name text NOT NULL,
  slug text NOT NULL,
  description text NOT NULL DEFAULT '',
  created_at timestamptz NOT NULL
);
CREATE UNIQUE INDEX tenants_slug_key ON tenants (slug);

CREATE TABLE memberships (
  id uuid PRIMARY KEY,
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  role text NOT NULL CHECK (role IN ('viewer', 'member', 'admin', 'owner')),
  created_at timestamptz NOT NULL,
  UNIQUE (tenant_id, user_id)
);
CREATE INDEX memberships_user_idx ON memberships (user_id);
-- At most one owner per team; "at least one" is kept by the services (ownership moves atomically).
CREATE UNIQUE INDEX memberships_one_owner ON memberships (tenant_id) WHERE role = 'owner';

-- Server-side sessions. A browser cookie and a JWT both point at one row, so logout,
-- blocking and password changes revoke both at once.
CREATE TABLE sessions (
  id uuid PRIMARY KEY,
  token_hash text,
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  kind text NOT NULL CHECK (kind IN ('cookie', 'token')),
  ip text,
  user_agent text,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  revoked_at timestamptz
);
CREATE UNIQUE INDEX sessions_token_hash_key ON sessions (token_hash) WHERE token_hash IS NOT NULL;
CREATE INDEX sessions_user_idx ON sessions (user_id);

CREATE TABLE api_keys (
  id uuid PRIMARY KEY,
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  satellite_id uuid,
  name text NOT NULL,
  role text NOT NULL CHECK (role IN ('viewer', 'member', 'admin')),
  key_hash text NOT NULL,
  key_prefix text NOT NULL,
  created_by uuid REFERENCES users (id) ON DELETE SET NULL,
  created_at timestamptz NOT NULL,
  last_used_at timestamptz,
  expires_at timestamptz,
  revoked_at timestamptz
);
CREATE UNIQUE INDEX api_keys_hash_key ON api_keys (key_hash);
CREATE INDEX api_keys_tenant_idx ON api_keys (tenant_id);

CREATE TABLE invites (
  id uuid PRIMARY KEY,
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  role text NOT NULL CHECK (role IN ('viewer', 'member', 'admin')),
  token_hash text NOT NULL,
  email text,
  created_by uuid REFERENCES users (id) ON DELETE SET NULL,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  used_at timestamptz,
  used_by uuid REFERENCES users (id) ON DELETE SET NULL,
  revoked_at timestamptz
);
CREATE UNIQUE INDEX invites_token_hash_key ON invites (token_hash);
CREATE INDEX invites_tenant_idx ON invites (tenant_id);

CREATE TABLE password_reset_tokens (
  id uuid PRIMARY KEY,
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  token_hash text NOT NULL,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  used_at timestamptz
);
CREATE UNIQUE INDEX password_reset_tokens_hash_key ON password_reset_tokens (token_hash);

-- The login-attempt ledger: per-IP rate limits for login and forgot-password read it.
CREATE TABLE login_attempts (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  kind text NOT NULL CHECK (kind IN ('login', 'forgot_password')),
  ip text NOT NULL,
  email text,
  success boolean NOT NULL,
  created_at timestamptz NOT NULL
);
CREATE INDEX login_attempts_ip_idx ON login_attempts (kind, ip, created_at);

CREATE TABLE audit_log (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  at timestamptz NOT NULL,
  action text NOT NULL,
  actor_type text NOT NULL,
  actor_user_id uuid,
  actor_api_key_id uuid,
  actor_email text,
  ip text,
  tenant_id uuid,
  target_type text,
  target_id text,
  details jsonb NOT NULL DEFAULT '{}'
);
CREATE INDEX audit_log_at_idx ON audit_log (at DESC, id DESC);
CREATE INDEX audit_log_tenant_idx ON audit_log (tenant_id, at DESC);
CREATE INDEX audit_log_action_idx ON audit_log (action, at DESC);
CREATE INDEX audit_log_actor_idx ON audit_log (actor_user_id);

-- Layered settings: one row per (level, scope, key). Adding a setting is a registry entry,
-- not a migration. may_override is the level's lock on the levels below it.
CREATE TABLE settings (
  level text NOT NULL CHECK (level IN ('hub', 'team', 'satellite', 'account')),
  scope_id text NOT NULL,
  key text NOT NULL,
  value jsonb,
  may_override boolean,
  updated_at timestamptz NOT NULL,
  updated_by uuid,
  PRIMARY KEY (level, scope_id, key)
);
