-- The caller's teams, own preferences and MFA state, kept ready on the user row.
-- Every request reads its caller (spec §5: admin flag and status fresh from the store); with
-- these facts precomputed that read is one row by primary key instead of three aggregates,
-- which halves its cost in PostgreSQL. Triggers keep the column exact inside the same
-- transaction as the change, so it can never be staler than the tables it summarises.
ALTER TABLE users ADD COLUMN profile jsonb NOT NULL DEFAULT '{"memberships": [], "preferences": {}, "mfaEnrolledAt": null}';

CREATE FUNCTION chorus_user_profile(uid uuid) RETURNS jsonb LANGUAGE sql STABLE AS $$
  SELECT jsonb_build_object(
    'memberships', COALESCE((
      SELECT jsonb_agg(jsonb_build_object('membershipId', m.id, 'tenantId', m.tenant_id, 'role', m.role, 'name', t.name, 'slug', t.slug) ORDER BY t.name, t.id)
      FROM memberships m JOIN tenants t ON t.id = m.tenant_id WHERE m.user_id = uid), '[]'::jsonb),
    'preferences', COALESCE((
      SELECT jsonb_object_agg(st.key, st.value) FROM settings st
      WHERE st.level = 'account' AND st.scope_id = uid::text AND st.value IS NOT NULL), '{}'::jsonb),
    'mfaEnrolledAt', (SELECT a.enrolled_at FROM mfa_accounts a WHERE a.user_id = uid AND a.totp_secret IS NOT NULL))
$$;

CREATE FUNCTION chorus_refresh_user_profile(uid uuid) RETURNS void LANGUAGE sql AS $$
  UPDATE users SET profile = chorus_user_profile(uid) WHERE id = uid
$$;

CREATE FUNCTION chorus_profile_by_user_id() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('UPDATE', 'DELETE') THEN PERFORM chorus_refresh_user_profile(OLD.user_id); END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') AND (TG_OP = 'INSERT' OR NEW.user_id IS DISTINCT FROM OLD.user_id) THEN
    PERFORM chorus_refresh_user_profile(NEW.user_id);
  END IF;
  RETURN NULL;
END $$;

CREATE FUNCTION chorus_profile_by_account_setting() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.level = 'account' THEN PERFORM chorus_refresh_user_profile(OLD.scope_id::uuid); END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') AND NEW.level = 'account' THEN PERFORM chorus_refresh_user_profile(NEW.scope_id::uuid); END IF;
  RETURN NULL;
END $$;

CREATE FUNCTION chorus_profile_by_tenant() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM chorus_refresh_user_profile(m.user_id) FROM memberships m WHERE m.tenant_id = NEW.id;
  RETURN NULL;
END $$;

CREATE TRIGGER memberships_user_profile AFTER INSERT OR UPDATE OR DELETE ON memberships
  FOR EACH ROW EXECUTE FUNCTION chorus_profile_by_user_id();
CREATE TRIGGER mfa_accounts_user_profile AFTER INSERT OR UPDATE OR DELETE ON mfa_accounts
  FOR EACH ROW EXECUTE FUNCTION chorus_profile_by_user_id();
CREATE TRIGGER settings_user_profile AFTER INSERT OR UPDATE OR DELETE ON settings
  FOR EACH ROW EXECUTE FUNCTION chorus_profile_by_account_setting();
CREATE TRIGGER tenants_user_profile AFTER UPDATE OF name, slug ON tenants
  FOR EACH ROW EXECUTE FUNCTION chorus_profile_by_tenant();

UPDATE users SET profile = chorus_user_profile(id);
