-- Multi-factor sign-in: TOTP, backup codes, passkeys, remembered devices and login challenges.
-- Secrets are sealed (AES-256-GCM) and tokens and codes are stored only as hashes.
-- Timestamps are written from the injected clock, never from now().

-- One row per person who has started or finished TOTP enrollment. MFA is enabled while
-- enrolled_at is set. A pending secret (begin, not yet confirmed) lives beside the confirmed
-- one, so a person can move to a new authenticator without dropping their second factor.
CREATE TABLE mfa_accounts (
  user_id uuid PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
  totp_secret text,
  -- The last TOTP time step accepted: a code of that step or earlier is refused (no reuse).
  totp_last_step integer,
  enrolled_at timestamptz,
  pending_secret text,
  pending_expires_at timestamptz,
  -- Passkey registration in flight (begin → finish).
  registration_challenge text,
  registration_expires_at timestamptz,
  updated_at timestamptz NOT NULL
);

CREATE TABLE mfa_backup_codes (
  id uuid PRIMARY KEY,
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  code_hash text NOT NULL,
  created_at timestamptz NOT NULL,
  used_at timestamptz
);
CREATE INDEX mfa_backup_codes_user_idx ON mfa_backup_codes (user_id);

CREATE TABLE mfa_passkeys (
  id uuid PRIMARY KEY,
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  -- base64url credential id and COSE public key, as the WebAuthn library hands them over.
  credential_id text NOT NULL,
  public_key text NOT NULL,
  sign_count bigint NOT NULL DEFAULT 0,
  transports jsonb NOT NULL DEFAULT '[]',
  name text NOT NULL,
  created_at timestamptz NOT NULL,
  last_used_at timestamptz
);
CREATE UNIQUE INDEX mfa_passkeys_credential_key ON mfa_passkeys (credential_id);
CREATE INDEX mfa_passkeys_user_idx ON mfa_passkeys (user_id);

CREATE TABLE mfa_remembered_devices (
  id uuid PRIMARY KEY,
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  token_hash text NOT NULL,
  user_agent text,
  ip text,
  created_at timestamptz NOT NULL,
  last_used_at timestamptz,
  expires_at timestamptz NOT NULL
);
CREATE UNIQUE INDEX mfa_remembered_devices_token_key ON mfa_remembered_devices (token_hash);
CREATE INDEX mfa_remembered_devices_user_idx ON mfa_remembered_devices (user_id);

-- A password accepted, the second factor outstanding: the mfaToken of POST /auth/login.
CREATE TABLE mfa_challenges (
  id uuid PRIMARY KEY,
  token_hash text NOT NULL,
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  want_token boolean NOT NULL,
  user_agent text,
  -- The WebAuthn challenge of the latest passkey begin on this login, used once.
  webauthn_challenge text,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  used_at timestamptz
);
CREATE UNIQUE INDEX mfa_challenges_token_key ON mfa_challenges (token_hash);
CREATE INDEX mfa_challenges_user_idx ON mfa_challenges (user_id);
