import type { Db } from '../../infra/db/index.ts';
import type { Clock } from '../../core/clock.ts';
import { type Actor, isPerson, roleAtLeast, roleIn, systemActor } from '../../core/actor.ts';
import { canManageDevice } from '../../core/device-rule.ts';
import type { AuditWriter } from '../audit/writer.ts';
import { newId, randomHex, sha256Hex } from '../../core/crypto.ts';
import { badRequest, forbidden, notFound } from '../../core/errors.ts';
import type { SettingsService } from '../settings/service.ts';
import type { ApiKeysService } from '../api-keys/service.ts';
import { createSatellitesRepo, type SatelliteRow, type SatellitesRepo } from './repo.ts';
import { createDeviceRepo } from './device-repo.ts';
import { createSatelliteRemote } from './remote-service.ts';
import { handOverObservations } from '../detections/observations.ts';

/** What the satellites module needs of the broker (src/infra/broker). */
export interface BrokerCommands {
  readonly brokerUrl: string;
  /** The WebSocket address, when there is one (returned with brokerUrl at registration). */
  readonly wsUrl?: string | null;
  provisionSatellite(s: { satelliteId: string; tenantId: string; password: string }): Promise<void>;
  revokeSatellite(satelliteId: string): Promise<void>;
  publish(topic: string, payload: Buffer | string, opts?: { qos?: 0 | 1 | 2 }): Promise<void>;
}

/** What it needs of object storage (src/infra/storage). */
export interface ObjectRemover {
  deleteMany(keys: string[]): Promise<void>;
}

const iso = (d: Date | null) => (d ? new Date(d).toISOString() : null);

export interface RegisterInput {
  tenantId: string;
  name: string;
  deviceId?: string;
  replaceSatelliteId?: string;
  latitude?: number;
  longitude?: number;
}

export function createSatellitesService(deps: {
  db: Db;
  clock: Clock;
  audit: AuditWriter;
  settings: Pick<SettingsService, 'teamSetting' | 'write' | 'effective' | 'satelliteConfig' | 'deleteScope'>;
  /** The satellite's API keys belong to the api-keys module. */
  apiKeys: Pick<ApiKeysService, 'replaceSatelliteKey' | 'revokeSatelliteKeys' | 'deleteSatelliteKeys'>;
  broker: BrokerCommands;
  storage: ObjectRemover;
  /** What a deletion unlinks but keeps, counted by the modules that own it (both built before this one). */
  linked: {
    alerts: (satelliteId: string) => Promise<number>;
    fieldNotes: (satelliteId: string) => Promise<number>;
    /** In the deletion's transaction, before the row goes: notes keep the satellite's name (field-notes module). */
    keepName: (tx: Db, satelliteId: string, name: string) => Promise<unknown>;
  };
}) {
  const { db, clock, audit, settings, apiKeys, broker, storage } = deps;
  const repo = createSatellitesRepo(db);
  const devices = createDeviceRepo(db);

  /** The device rule as a flag for responses (Outline-style policies in the payload). */
  function canManage(actor: Actor, s: SatelliteRow, policy: string): boolean {
    const device = { id: s.id, registeredBy: s.registeredBy, devicePolicy: policy };
    return canManageDevice(actor, roleIn(actor, s.tenantId), device, { satelliteKeyRoute: false });
  }

  async function present(actor: Actor, s: SatelliteRow, team?: { policy: string; thresholdMin: number }) {
    const t = team ?? {
      policy: await settings.teamSetting(s.tenantId, 'device_policy'),
      thresholdMin: await settings.teamSetting(s.tenantId, 'offline_threshold_minutes'),
    };
    const lastSeen = s.lastSeenAt ? new Date(s.lastSeenAt) : null;
    return {
      id: s.id,
      tenantId: s.tenantId,
      name: s.name,
      deviceId: s.deviceId,
      registered_by: s.registeredBy,
      registered_by_name: s.registeredByName,
      registered_by_me: s.registeredBy !== null && s.registeredBy === actor.userId,
      can_manage: canManage(actor, s, t.policy),
      configLocked: s.configLocked,
      archived: s.archived,
      // A satellite that said goodbye (stopped cleanly) is offline at once, not after the threshold.
      online: s.stoppedAt === null && lastSeen !== null && clock.now().getTime() - lastSeen.getTime() < t.thresholdMin * 60_000,
      lastSeenAt: iso(lastSeen),
      version: s.version,
      stream: s.stream,
      state: s.state,
      update_status: s.updateStatus,
      targetVersion: s.targetVersion,
      latitude: s.latitude,
      longitude: s.longitude,
      uptimeSeconds: s.uptimeSeconds,
      noiseFloorRms: s.noiseFloorRms,
      filterStats: s.filterStats,
      outboxStats: s.outboxStats,
      createdAt: iso(s.createdAt),
    };
  }

  async function require(tenantId: string, id: string, tx: Db = db): Promise<SatelliteRow> {
    const s = await repo.find(tenantId, id, tx);
    if (!s) throw notFound('No such satellite');
    return s;
  }

  /** New broker password and API key; previous keys of the satellite stop working (api-keys module). */
  async function mintCredentials(tx: Db, s: { id: string; tenantId: string }) {
    const password = randomHex(32);
    const apiKey = await apiKeys.replaceSatelliteKey(tx, { tenantId: s.tenantId, satelliteId: s.id }, clock.now());
    await tx.run('UPDATE satellites SET mqtt_password_hash = $2 WHERE id = $1', [s.id, sha256Hex(password)]);
    return { password, apiKey };
  }

  function reply(id: string, creds: { password: string; apiKey: string }) {
    return {
      id,
      mqtt: { username: id, password: creds.password, brokerUrl: broker.brokerUrl, ...(broker.wsUrl ? { wsUrl: broker.wsUrl } : {}) },
      apiKey: creds.apiKey,
    };
  }

  const remote = createSatelliteRemote({ db, clock, audit, settings, broker, repo, devices, require });

  return {
    ...remote,
    present,

    async list(actor: Actor, f: Parameters<SatellitesRepo['list']>[0]) {
      const { rows, total } = await repo.list(f);
      const teams = new Map<string, { policy: string; thresholdMin: number }>();
      for (const id of new Set(rows.map((r) => r.tenantId))) {
        teams.set(id, {
          policy: await settings.teamSetting(id, 'device_policy'),
          thresholdMin: await settings.teamSetting(id, 'offline_threshold_minutes'),
        });
      }
      return { satellites: await Promise.all(rows.map((r) => present(actor, r, teams.get(r.tenantId)))), total };
    },

    get: async (actor: Actor, tenantId: string, id: string) => present(actor, await require(tenantId, id)),

    /**
     * Registration (spec §4 POST /satellites and §3): a new entry, or re-registration of the
     * entry holding deviceId (rotates credentials, unarchives), or — with replaceSatelliteId —
     * the device takes over another entry, whose id, settings and history it keeps.
     */
    async register(actor: Actor, input: RegisterInput): Promise<{ status: 201 | 200; body: ReturnType<typeof reply> }> {
      const tenantId = input.tenantId;
      const isAdmin = roleAtLeast(actor.teamRole, 'admin');
      if (!isAdmin && (await settings.teamSetting(tenantId, 'device_policy')) === 'admins') {
        throw forbidden('Only team admins may register devices in this team', 'DEVICE_POLICY_ADMINS');
      }
      const mayAdminister = (s: SatelliteRow) => isAdmin || (s.registeredBy !== null && s.registeredBy === actor.userId);
      const now = clock.now();

      return db.tx(async (tx) => {
        const holding = input.deviceId ? await repo.findByDeviceId(tenantId, input.deviceId, tx) : null;

        if (input.replaceSatelliteId) {
          if (!input.deviceId) throw badRequest('replaceSatelliteId needs a deviceId', 'VALIDATION_FAILED');
          const target = await repo.find(tenantId, input.replaceSatelliteId, tx);
          if (!target) throw notFound('No such satellite to replace');
          if (!mayAdminister(target)) throw forbidden('You may not administer the satellite to replace');
          if (holding && holding.id !== target.id) {
            if (!mayAdminister(holding)) throw forbidden('You may not administer the entry this device holds');
            await repo.update(tx, tenantId, holding.id, { archived: true, deviceId: null, passwordHash: null }, now);
            await apiKeys.revokeSatelliteKeys(tx, holding.id, now);
            await broker.revokeSatellite(holding.id);
          }
          await repo.update(
            tx,
            tenantId,
            target.id,
            { deviceId: input.deviceId, archived: false, name: input.name, latitude: input.latitude, longitude: input.longitude },
            now,
          );
          const creds = await mintCredentials(tx, target);
          await broker.provisionSatellite({ satelliteId: target.id, tenantId, password: creds.password });
          await audit.write(tx, actor, {
            action: 'device.satellite_replaced',
            targetType: 'satellite',
            targetId: target.id,
            details: { previous: holding?.id ?? null, deviceId: input.deviceId },
          });
          return { status: 200 as const, body: reply(target.id, creds) };
        }

        if (holding) {
          // Re-registration: the registrant, an admin, or a member claiming a team-owned device.
          const claim = holding.registeredBy === null && isPerson(actor);
          if (!mayAdminister(holding) && !claim) throw forbidden('This device is registered by someone else');
          await repo.update(
            tx,
            tenantId,
            holding.id,
            {
              name: input.name,
              latitude: input.latitude,
              longitude: input.longitude,
              registeredBy: holding.registeredBy ?? actor.userId,
              archived: false,
            },
            now,
          );
          const creds = await mintCredentials(tx, holding);
          await broker.provisionSatellite({ satelliteId: holding.id, tenantId, password: creds.password });
          await audit.write(tx, actor, {
            action: 'device.satellite_reregistered',
            targetType: 'satellite',
            targetId: holding.id,
            details: { deviceId: input.deviceId },
          });
          if (holding.archived) {
            await audit.write(tx, actor, {
              action: 'device.satellite_unarchived_by_heartbeat',
              targetType: 'satellite',
              targetId: holding.id,
              details: { via: 're-registration' },
            });
          }
          return { status: 200 as const, body: reply(holding.id, creds) };
        }

        if (input.deviceId) {
          // Adoption by name: a device naming its id for the first time takes over the active entry
          // of its exact name that holds no device id (registered before it had one), when the caller
          // is that entry's registrant or an admin. Without a device id nothing is taken over, so a
          // second satellite given the same name never unseats the first.
          const adopted = (await repo.adoptableByName(tenantId, input.name, tx)).find(mayAdminister);
          if (adopted) {
            await repo.update(
              tx,
              tenantId,
              adopted.id,
              { deviceId: input.deviceId, latitude: input.latitude, longitude: input.longitude },
              now,
            );
            const creds = await mintCredentials(tx, adopted);
            await broker.provisionSatellite({ satelliteId: adopted.id, tenantId, password: creds.password });
            await audit.write(tx, actor, {
              action: 'device.satellite_reregistered',
              targetType: 'satellite',
              targetId: adopted.id,
              details: { adoptedByName: true, name: input.name, deviceId: input.deviceId },
            });
            return { status: 200 as const, body: reply(adopted.id, creds) };
          }
        }

        const id = newId();
        await repo.insert(tx, {
          id,
          tenantId,
          name: input.name,
          deviceId: input.deviceId ?? null,
          registeredBy: isPerson(actor) ? actor.userId : null,
          passwordHash: '',
          latitude: input.latitude ?? null,
          longitude: input.longitude ?? null,
          at: now,
        });
        const creds = await mintCredentials(tx, { id, tenantId });
        await broker.provisionSatellite({ satelliteId: id, tenantId, password: creds.password });
        await audit.write(tx, actor, {
          action: 'device.satellite_registered',
          targetType: 'satellite',
          targetId: id,
          details: { name: input.name, deviceId: input.deviceId ?? null },
        });
        return { status: 201 as const, body: reply(id, creds) };
      });
    },

    // Responses are built after the transaction: building one reads settings, and PGlite runs
    // one session, so a read outside the open transaction would wait for it forever.
    async rename(actor: Actor, tenantId: string, id: string, name: string) {
      const s = await db.tx(async (tx) => {
        const found = await require(tenantId, id, tx);
        await repo.update(tx, tenantId, id, { name }, clock.now());
        await audit.write(tx, actor, {
          action: 'admin.satellite_renamed',
          targetType: 'satellite',
          targetId: id,
          details: { from: found.name, to: name },
        });
        return found;
      });
      return present(actor, { ...s, name });
    },

    /** Both coordinates or neither: a position with one of them is no place on the map. */
    async setPosition(actor: Actor, tenantId: string, id: string, pos: { latitude: number | null; longitude: number | null }) {
      if ((pos.latitude === null) !== (pos.longitude === null)) {
        throw badRequest('Give both latitude and longitude, or neither to clear the position', 'POSITION_INCOMPLETE');
      }
      const s = await db.tx(async (tx) => {
        const found = await require(tenantId, id, tx);
        // null is written (undefined would leave the column as it is): both null clears the position.
        await repo.update(tx, tenantId, id, { latitude: pos.latitude, longitude: pos.longitude }, clock.now());
        await audit.write(tx, actor, {
          action: 'admin.satellite_position_changed',
          targetType: 'satellite',
          targetId: id,
          details: { from: { latitude: found.latitude, longitude: found.longitude }, to: pos },
        });
        return found;
      });
      return present(actor, { ...s, latitude: pos.latitude, longitude: pos.longitude });
    },

    async rotateApiKey(actor: Actor, tenantId: string, id: string) {
      return db.tx(async (tx) => {
        const s = await require(tenantId, id, tx);
        const key = await apiKeys.replaceSatelliteKey(tx, { tenantId, satelliteId: s.id }, clock.now());
        await audit.write(tx, actor, { action: 'admin.satellite_api_key_rotated', targetType: 'satellite', targetId: id });
        return { apiKey: key };
      });
    },

    async setArchived(actor: Actor, tenantId: string, id: string, archived: boolean) {
      const s = await db.tx(async (tx) => {
        const found = await require(tenantId, id, tx);
        if (found.archived !== archived) {
          await repo.update(tx, tenantId, id, { archived }, clock.now());
          await audit.write(tx, actor, {
            action: archived ? 'admin.satellite_archived' : 'admin.satellite_unarchived',
            targetType: 'satellite',
            targetId: id,
          });
        }
        return found;
      });
      return present(actor, { ...s, archived });
    },

    async deletionPreview(tenantId: string, id: string) {
      await require(tenantId, id);
      const facts = await repo.deletionFacts(tenantId, id);
      const [alerts, fieldNotes] = await Promise.all([deps.linked.alerts(id), deps.linked.fieldNotes(id)]);
      return {
        detections: facts.detections,
        promoted: facts.promoted,
        chunks: facts.chunks,
        audioBytes: facts.audioBytes,
        alerts,
        fieldNotes,
      };
    },

    /** Audio objects first (a crash leaves rows pointing at nothing, never orphan objects), then rows cascade. */
    async delete(actor: Actor, tenantId: string, id: string, confirmName: string | undefined) {
      const s = await require(tenantId, id);
      if (confirmName !== undefined && confirmName !== s.name) {
        throw badRequest('confirmName differs from the device name', 'CONFIRM_NAME_MISMATCH');
      }
      const facts = await repo.deletionFacts(tenantId, id);
      const [alerts, fieldNotes] = await Promise.all([deps.linked.alerts(id), deps.linked.fieldNotes(id)]);
      const keys = await repo.chunkKeys(db, tenantId, id);
      await storage.deleteMany(keys.map((k) => k.key));
      await db.tx(async (tx) => {
        await apiKeys.deleteSatelliteKeys(tx, id);
        await settings.deleteScope(tx, 'satellite', id);
        await deps.linked.keepName(tx, id, s.name);
        // Observations it led or shared with other satellites stay listed (issue 35 point 3).
        await handOverObservations(tx, tenantId, id);
        await repo.delete(tx, tenantId, id);
        await audit.write(tx, actor, {
          action: 'admin.satellite_deleted',
          targetType: 'satellite',
          targetId: id,
          details: {
            name: s.name,
            chunks: facts.chunks,
            audioBytes: facts.audioBytes,
            detections: facts.detections,
            promoted: facts.promoted,
            alerts,
            fieldNotes,
          },
        });
      });
      await broker.revokeSatellite(id);
    },

    /** What the guard and the live hub know of a device (its team, registrant and the team's device policy). */
    deviceFacts: (satelliteId: string) => repo.deviceFacts(satelliteId),

    /**
     * Departure handler: the leaver's devices become team-owned (audited
     * admin.satellite_transferred); unless kept, they are disconnected. The departure handlers
     * are not given the acting person, so the entries are written by the hub itself (actor type
     * internal); the leave, removal or deletion entry of the same transaction names who acted.
     */
    async release(tx: Db, tenantId: string, userId: string, keepDevices: boolean) {
      const owned = await repo.registeredIn(tx, tenantId, userId);
      const now = clock.now();
      const hub = systemActor(['admin.satellite_transferred']);
      for (const { id } of owned) {
        await repo.update(tx, tenantId, id, { registeredBy: null, ...(keepDevices ? {} : { passwordHash: null }) }, now);
        await audit.write(tx, hub, {
          action: 'admin.satellite_transferred',
          tenantId,
          targetType: 'satellite',
          targetId: id,
          details: { from: userId, to: null, disconnected: !keepDevices },
        });
        if (!keepDevices) {
          await apiKeys.revokeSatelliteKeys(tx, id, now);
          await broker.revokeSatellite(id);
        }
      }
    },
  };
}

export type SatellitesService = ReturnType<typeof createSatellitesService>;
