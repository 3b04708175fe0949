/**
 * Test factories (in the manner of Outline's): they create rows on demand so a test names
 * only what it cares about. People get a real session and a real JWT, as login would give.
 */
import crypto from 'node:crypto';
import type { Hub } from './hub.ts';
import { INTERNAL_KEY } from './hub.ts';
import { client, type Credential } from './http.ts';
import { hashPassword } from '../../src/modules/users/passwords.ts';
import { createUsersRepo } from '../../src/modules/users/repo.ts';
import { createTeamsRepo } from '../../src/modules/teams/repo.ts';
import { newId } from '../../src/core/crypto.ts';
import type { Role } from '../../src/core/actor.ts';
import { chunkStorageKey } from '../../src/modules/audio/service.ts';

export const PASSWORD = 'correct-horse-battery';
let passwordHash: Promise<string> | null = null;

export interface TestUser extends Credential {
  id: string;
  email: string;
  name: string;
  password: string;
  token: string;
  sessionId: string;
}

export interface TestTeam {
  id: string;
  name: string;
  slug: string;
}

export function factories(hub: Hub) {
  const api = client(hub.url);
  const users = createUsersRepo(hub.infra.db);
  const teams = createTeamsRepo(hub.infra.db);
  const uniq = () => crypto.randomBytes(4).toString('hex');

  async function signIn(id: string): Promise<{ token: string; sessionId: string }> {
    const session = await hub.infra.db.tx((tx) => hub.services.auth.issueSession(tx, id, '127.0.0.1', 'factory'));
    return { token: hub.services.jwt.sign({ sub: id, sid: session.sessionId }), sessionId: session.sessionId };
  }

  const f = {
    internal: { token: INTERNAL_KEY } as Credential,

    async user(opts: { admin?: boolean; name?: string; email?: string } = {}): Promise<TestUser> {
      passwordHash ??= hashPassword(PASSWORD);
      const id = newId();
      const name = opts.name ?? `Person ${uniq()}`;
      const email = opts.email ?? `p-${uniq()}@example.org`;
      await hub.infra.db.tx((tx) =>
        users.insert(tx, { id, email, name, passwordHash: '', isAdmin: opts.admin ?? false, at: hub.clock.now() }),
      );
      await hub.sql.query('UPDATE users SET password_hash = $2 WHERE id = $1', [id, await passwordHash]);
      return { id, email, name, password: PASSWORD, ...(await signIn(id)) };
    },

    /** A team created over HTTP by its owner. */
    async team(owner: TestUser, name = `Team ${uniq()}`): Promise<TestTeam> {
      const res = await api.post('/auth/create-tenant', { name }, owner);
      if (res.status !== 201) throw new Error(`team creation failed: ${res.status} ${res.text}`);
      return res.body;
    },

    async addMember(team: TestTeam, user: TestUser, role: Role): Promise<string> {
      const id = newId();
      await hub.infra.db.tx((tx) => teams.insertMembership(tx, { id, tenantId: team.id, userId: user.id, role, at: hub.clock.now() }));
      // Written beside the API: the hub's memory of who is signed in must hear of it as a request would tell it.
      hub.services.credentials.forget();
      return id;
    },

    async member(team: TestTeam, role: Role, opts: { name?: string } = {}): Promise<TestUser & { membershipId: string }> {
      const u = await f.user(opts);
      return { ...u, membershipId: await f.addMember(team, u, role) };
    },

    async apiKey(
      team: TestTeam,
      creator: TestUser,
      role: 'viewer' | 'member' | 'admin' = 'member',
    ): Promise<{ id: string; token: string }> {
      const res = await api.post('/auth/api-keys', { tenantId: team.id, name: `key ${uniq()}`, role }, creator);
      if (res.status !== 201) throw new Error(`api key creation failed: ${res.status} ${res.text}`);
      return { id: res.body.id, token: res.body.key };
    },

    /** One team with every role, a second team, a hub admin and a team key. */
    async world() {
      const owner = await f.user({ name: 'Olive Owner' });
      const team = await f.team(owner);
      const ownerMembership = (
        await hub.sql.one<{ id: string }>('SELECT id FROM memberships WHERE tenant_id = $1 AND user_id = $2', [team.id, owner.id])
      ).id;
      const admin = await f.member(team, 'admin', { name: 'Ada Admin' });
      const member = await f.member(team, 'member', { name: 'Mel Member' });
      const viewer = await f.member(team, 'viewer', { name: 'Vic Viewer' });
      const otherOwner = await f.user({ name: 'Otto Other' });
      const otherTeam = await f.team(otherOwner);
      const hubAdmin = await f.user({ admin: true, name: 'Hub Admin' });
      const key = await f.apiKey(team, owner, 'member');
      return { team, owner: { ...owner, membershipId: ownerMembership }, admin, member, viewer, otherTeam, otherOwner, hubAdmin, key };
    },
  };
  return f;
}

/** A team made over HTTP by a person made for it (its owner). */
export async function makeTeam(hub: Hub): Promise<TestTeam & { owner: TestUser }> {
  const f = factories(hub);
  const owner = await f.user();
  return { ...(await f.team(owner)), owner };
}

/** A satellite row for tests that need one before satellites can be registered over HTTP. */
export async function makeSatellite(
  hub: Hub,
  team: TestTeam,
  registeredBy: TestUser | null,
  name = `Sat ${crypto.randomBytes(3).toString('hex')}`,
) {
  const id = newId();
  const at = hub.clock.now();
  await hub.sql.query(
    `INSERT INTO satellites (id, tenant_id, name, registered_by, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $5)`,
    [id, team.id, name, registeredBy?.id ?? null, at],
  );
  return { id, name, tenantId: team.id };
}

/** A satellite-scoped API key, as registration will mint one. */
export async function makeSatelliteKey(hub: Hub, satellite: { id: string; tenantId: string }): Promise<string> {
  const { mintKey } = await import('../../src/modules/api-keys/service.ts');
  const { key, hash, prefix } = mintKey();
  await hub.sql.query(
    `INSERT INTO api_keys (id, tenant_id, satellite_id, name, role, key_hash, key_prefix, created_at) VALUES ($1, $2, $3, 'satellite', 'member', $4, $5, $6)`,
    [newId(), satellite.tenantId, satellite.id, hash, prefix, hub.clock.now()],
  );
  return key;
}

/** What a chunk or detection belongs to: its satellite, else a team-owned satellite of `team`, else of a new team. */
interface Parent {
  satellite?: { id: string; tenantId: string };
  team?: TestTeam;
}

async function parentSatellite(hub: Hub, spec: Parent): Promise<{ id: string; tenantId: string }> {
  return spec.satellite ?? makeSatellite(hub, spec.team ?? (await makeTeam(hub)), null);
}

export interface ChunkSpec extends Parent {
  id?: string;
  /** Recorded and received at; the hub clock's now when left out. */
  at?: Date;
  durationMs?: number;
  /** The WAV stored under the chunk's key; no object is stored when left out. */
  audio?: Buffer;
  contentType?: string;
  /** Storage key; the hub's own layout (audio/{team}/{satellite}/{date}/{id}.wav) when left out. */
  key?: string;
  /** The row's byte count; the audio's length, else 1. */
  bytes?: number;
  latitude?: number;
  longitude?: number;
}

/** A stored chunk as the ingester leaves it: the row, and its audio object when given. */
export async function makeChunk(
  hub: Hub,
  spec: ChunkSpec = {},
): Promise<{ id: string; key: string; at: Date; tenantId: string; satelliteId: string }> {
  const sat = await parentSatellite(hub, spec);
  const id = spec.id ?? newId();
  const at = spec.at ?? hub.clock.now();
  const key = spec.key ?? chunkStorageKey(sat.tenantId, sat.id, id, at);
  if (spec.audio) await hub.infra.storage.put(key, spec.audio, spec.contentType);
  await hub.sql.query(
    `INSERT INTO chunks (id, tenant_id, satellite_id, recorded_at, duration_ms, sample_rate, storage_key, bytes, latitude, longitude, received_at)
     VALUES ($1, $2, $3, $4, $5, 48000, $6, $7, $8, $9, $4)`,
    [
      id,
      sat.tenantId,
      sat.id,
      at,
      spec.durationMs ?? 3000,
      key,
      spec.bytes ?? spec.audio?.length ?? 1,
      spec.latitude ?? null,
      spec.longitude ?? null,
    ],
  );
  return { id, key, at, tenantId: sat.tenantId, satelliteId: sat.id };
}

export interface DetectionSpec extends Parent {
  id?: string;
  /** The chunk it was heard in (a makeChunk result); its satellite is then the detection's. */
  chunk?: { id: string; tenantId: string; satelliteId: string };
  /** The chunk id alone; a chunk id without a row when neither is given. */
  chunkId?: string;
  code?: string;
  scientificName?: string;
  commonName?: string;
  category?: string;
  confidence?: number;
  /** Detected at (and created at); the hub clock's now when left out. */
  at?: Date;
  startMs?: number;
  endMs?: number;
  modelId?: string;
  // Left out, these keep the table's defaults (unverified, not tentative, promoted, no call, no badges).
  verificationStatus?: string;
  tentative?: boolean;
  promoted?: boolean;
  callId?: string | null;
  callChunks?: number;
  firstOfSeason?: boolean;
  firstOfDay?: boolean;
  /** Marks it rare with this reason. */
  rare?: string;
}

/** A detection row as the worker writes it: a European Robin at 0.9 from the built-in model unless told otherwise. */
export async function makeDetection(hub: Hub, spec: DetectionSpec = {}): Promise<string> {
  const sat = spec.chunk ? { id: spec.chunk.satelliteId, tenantId: spec.chunk.tenantId } : await parentSatellite(hub, spec);
  const id = spec.id ?? newId();
  const at = spec.at ?? hub.clock.now();
  const columns: Record<string, unknown> = {
    id,
    tenant_id: sat.tenantId,
    satellite_id: sat.id,
    chunk_id: spec.chunk?.id ?? spec.chunkId ?? newId(),
    species_code: spec.code ?? 'eurrob1',
    scientific_name: spec.scientificName ?? 'Erithacus rubecula',
    common_name: spec.commonName ?? 'European Robin',
    category: spec.category ?? 'bird',
    confidence: spec.confidence ?? 0.9,
    detected_at: at,
    start_ms: spec.startMs ?? 0,
    end_ms: spec.endMs ?? 3000,
    model_id: spec.modelId ?? 'builtin',
    verification_status: spec.verificationStatus,
    tentative: spec.tentative,
    promoted: spec.promoted,
    call_id: spec.callId,
    call_chunks: spec.callChunks,
    is_first_of_season: spec.firstOfSeason,
    is_first_of_day: spec.firstOfDay,
    is_rare: spec.rare === undefined ? undefined : true,
    rare_reason: spec.rare,
    created_at: at,
  };
  const given = Object.entries(columns).filter(([, v]) => v !== undefined);
  await hub.sql.query(
    `INSERT INTO detections (${given.map(([c]) => c).join(', ')}) VALUES (${given.map((_, i) => `$${i + 1}`).join(', ')})`,
    given.map(([, v]) => v),
  );
  return id;
}
