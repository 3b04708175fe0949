/**
 * The production broker (DESIGN.md §2): an external Mosquitto 2 with the dynamic-security plugin.
 * The hub connects as the dynsec admin (which must also hold publishClientSend on `#`, or at least
 * `chorus/#`: checked at start) and provisions each satellite as a dynsec client with its own role
 * `sat-{id}` whose ACLs name exactly `chorus/{tenant}/{id}/#` (spec §5 item 4), by commands on
 * `$CONTROL/dynamic-security/v1`, waiting for each answer on `.../response`.
 *
 * Two connections per hub (issue 21 items 5 and 7): this one (clean session, a fresh client id per
 * process) publishes and runs dynsec commands; the ingest session (session.ts, client id
 * `chorus-hub-{hubId}`, clean session off) holds the subscriptions, so the broker keeps queueing
 * for the hub while its dispatcher restarts. One broker serves one hub: at start the hub reads the
 * retained claim on `chorus/_hub/owner` and refuses a broker another hub claimed (hub-claim.ts).
 *
 * Differences from the embedded broker, by Mosquitto's design: a satellite may use any client id
 * (dynsec binds at most one client id to a login, the spec allows two forms), and under MQTT 3.1.1
 * a denied publish is acknowledged and silently dropped instead of closing the client.
 */
import crypto from 'node:crypto';
import type { Broker, BrokerLog } from './types.ts';
import { HubClient, connectMqtt, silentLog } from './hub-client.ts';
import { IngestSession } from './session.ts';
import { checkClaim, OWNER_TOPIC, type HubClaim } from './hub-claim.ts';
import { isTopicSegment, TOPIC_ROOT } from '../../protocol/topics.ts';

export interface MosquittoBrokerOptions {
  /** mqtt://, mqtts://, ws:// or wss:// URL of the broker (MQTT_URL). */
  readonly url: string;
  readonly adminUsername: string;
  readonly adminPassword: string;
  /**
   * Names this hub on the broker: its session's client id `chorus-hub-{hubId}` and its claim.
   * Stable across restarts, different between hubs (createBroker derives it from CHORUS_SECRET).
   */
  readonly hubId: string;
  /**
   * One of several dispatchers of this hub (CHORUS_DISPATCHER_ID): its ingest session is
   * `chorus-hub-{hubId}-{dispatcherId}`. The dispatchers share the ingest filters through one MQTT
   * shared subscription group, so each message goes to one of them.
   */
  readonly dispatcherId?: string | null;
  /** Named in the claim, so a refused second hub's log says which hub holds the broker. */
  readonly publicUrl?: string;
  readonly log?: BrokerLog;
  /** How long to wait for one dynsec answer (default 10 s). */
  readonly commandTimeoutMs?: number;
}

export const DYNSEC_TOPIC = '$CONTROL/dynamic-security/v1';
export const DYNSEC_RESPONSE_TOPIC = `${DYNSEC_TOPIC}/response`;

export const satelliteRole = (satelliteId: string) => `sat-${satelliteId}`;

interface DynsecResponse {
  command: string;
  error?: string;
  data?: Record<string, unknown>;
  correlationData?: string;
}

export class DynsecError extends Error {
  constructor(
    readonly command: string,
    readonly reason: string,
  ) {
    super(`Mosquitto dynamic security: ${command} failed: ${reason}`);
  }
}

function publicUrl(raw: string): string {
  const u = new URL(raw);
  u.username = '';
  u.password = '';
  return u.toString().replace(/\/$/, '');
}

export async function createMosquittoBroker(opts: MosquittoBrokerOptions): Promise<Broker> {
  const log = opts.log ?? silentLog;
  const timeoutMs = opts.commandTimeoutMs ?? 10_000;
  if (!/^[0-9a-zA-Z_-]{1,64}$/.test(opts.hubId)) throw new Error('hubId: 1 to 64 letters, digits, _ or -');
  const sessionId = `chorus-hub-${opts.hubId}`;
  const clientId = `${sessionId}-ctl-${crypto.randomBytes(4).toString('hex')}`;
  const where = `Mosquitto at ${publicUrl(opts.url)}`;
  const hub = await HubClient.start(
    connectMqtt(opts.url, HubClient.options({ clientId, username: opts.adminUsername, password: opts.adminPassword })),
    log,
    `${where} (as ${opts.adminUsername})`,
  );

  const pending = new Map<string, { resolve: (r: DynsecResponse) => void; reject: (e: Error) => void; timer: NodeJS.Timeout }>();
  let seq = 0;

  /** Sends commands in one message; resolves with their answers in order. */
  async function run(commands: Array<Record<string, unknown> & { command: string }>): Promise<DynsecResponse[]> {
    const batch = `${clientId}:${++seq}`;
    const answers = commands.map(
      (c, i) =>
        new Promise<DynsecResponse>((resolve, reject) => {
          const key = `${batch}:${i}`;
          const timer = setTimeout(() => {
            pending.delete(key);
            reject(
              new Error(
                `${where}: no answer to dynamic-security command ${c.command} within ${timeoutMs} ms (is the plugin loaded, and is ${opts.adminUsername} its admin?)`,
              ),
            );
          }, timeoutMs);
          pending.set(key, { resolve, reject, timer });
        }),
    );
    const all = Promise.all(answers);
    all.catch(() => {}); // observed below; keeps a failed publish from leaving it unhandled
    const body = { commands: commands.map((c, i) => ({ ...c, correlationData: `${batch}:${i}` })) };
    try {
      await hub.publish(DYNSEC_TOPIC, JSON.stringify(body), 1);
    } catch (err) {
      for (let i = 0; i < commands.length; i++) settle(`${batch}:${i}`, err as Error);
      throw err;
    }
    return all;
  }

  function settle(key: string, outcome: DynsecResponse | Error) {
    const p = pending.get(key);
    if (!p) return;
    pending.delete(key);
    clearTimeout(p.timer);
    if (outcome instanceof Error) p.reject(outcome);
    else p.resolve(outcome);
  }

  /** Throws the dynsec error text unless the command succeeded or failed in one of the accepted ways. */
  function ok(r: DynsecResponse, ...accepted: string[]): DynsecResponse {
    if (r.error && !accepted.includes(r.error)) throw new DynsecError(r.command, r.error);
    return r;
  }

  const fail = async (err: unknown): Promise<never> => {
    await hub.close();
    throw err;
  };

  try {
    await hub.subscribe(
      DYNSEC_RESPONSE_TOPIC,
      (_topic, payload) => {
        let msg: { responses?: DynsecResponse[] };
        try {
          msg = JSON.parse(payload.toString('utf8'));
        } catch {
          return;
        }
        for (const r of msg.responses ?? []) if (typeof r.correlationData === 'string') settle(r.correlationData, r);
      },
      1,
    );
  } catch (err) {
    await fail(
      new Error(`${where}: ${opts.adminUsername} cannot read dynamic-security answers: ${(err as Error).message}`, { cause: err }),
    );
  }

  // Start-up checks: dynsec answers us, and we may publish under chorus/ (Mosquitto drops a denied
  // publish silently under MQTT 3.1.1, so without this a missing grant would only show as lost messages).
  // The claim: subscribed before the probe, so a retained claim has arrived once the probe has.
  const claim: HubClaim = { hubId: opts.hubId, instance: crypto.randomBytes(8).toString('hex'), publicUrl: opts.publicUrl ?? null };
  let found: HubClaim | null = null;
  let started = false;
  try {
    ok((await run([{ command: 'getClient', username: opts.adminUsername }]))[0]);
    await hub.subscribe(
      OWNER_TOPIC,
      (_topic, payload, meta) => {
        const seen = checkClaim(claim, payload, meta.retain);
        if (seen.kind === 'retained' && !started) found = seen.claim;
        else if (seen.kind === 'retained' && seen.claim.hubId !== opts.hubId)
          // Found on a reconnect: another hub claimed the broker while it was away (and we claim it back).
          (log.error ?? log.warn).call(
            log,
            { claim: seen.claim, hubId: opts.hubId },
            `broker: ${where} was claimed by another Chorus hub (hub id ${seen.claim.hubId}); one broker per hub`,
          );
        else if (seen.kind === 'foreign') (log.error ?? log.warn).call(log, { claim: seen.claim, hubId: opts.hubId }, seen.message);
      },
      1,
    );
    await probePublish(hub, `${TOPIC_ROOT}/_hub/${clientId}/probe`, Math.min(timeoutMs, 5000));
    const held = found as HubClaim | null;
    if (held && held.hubId !== opts.hubId) {
      throw new Error(
        `${where} already serves another Chorus hub (hub id ${held.hubId}${held.publicUrl ? ` at ${held.publicUrl}` : ''}); ` +
          `one broker per hub: its satellites would get this hub's "unknown satellite" answers. Give this hub its own broker, ` +
          `or, when that hub is gone for good, clear its claim: mosquitto_pub -u ADMIN -P PASSWORD -t ${OWNER_TOPIC} -r -n (docs/operations.md)`,
      );
    }
    await hub.publish(OWNER_TOPIC, JSON.stringify(claim), 1, true);
    started = true;
  } catch (err) {
    await fail(err);
  }
  // A broker restarted without persistence forgot the claim: claim it again.
  hub.onReconnect(() => {
    hub.publish(OWNER_TOPIC, JSON.stringify(claim), 1, true).catch((err) => log.warn({ err }, 'broker: could not renew the hub claim'));
  });
  const session = new IngestSession({
    connect: (o) => connectMqtt(opts.url, o),
    clientId: opts.dispatcherId ? `${sessionId}-${opts.dispatcherId}` : sessionId,
    shareGroup: opts.dispatcherId ? `chorus-${opts.hubId}` : undefined,
    username: opts.adminUsername,
    password: opts.adminPassword,
    log,
    where,
  });

  let closed = false;
  return {
    kind: 'mosquitto',
    connected: () => hub.mqtt.connected && session.connected,
    brokerUrl: publicUrl(opts.url),
    wsUrl: /^wss?:/.test(opts.url) ? publicUrl(opts.url) : null,

    async provisionSatellite({ satelliteId, tenantId, password }) {
      if (!isTopicSegment(satelliteId) || !isTopicSegment(tenantId))
        throw new Error('satellite and tenant ids must be single topic levels');
      const rolename = satelliteRole(satelliteId);
      const topic = `${TOPIC_ROOT}/${tenantId}/${satelliteId}/#`;
      const acls = (['publishClientSend', 'subscribePattern', 'publishClientReceive'] as const).map((acltype) => ({
        acltype,
        topic,
        priority: 0,
        allow: true,
      }));
      const [role, client] = await run([
        { command: 'createRole', rolename, textname: `satellite ${satelliteId}`, acls },
        {
          command: 'createClient',
          username: satelliteId,
          password,
          textname: `satellite ${satelliteId} of ${tenantId}`,
          roles: [{ rolename, priority: 0 }],
        },
      ]);
      if (ok(role, 'Role already exists').error) {
        // Re-provision: make sure the role still names the prefix.
        for (const r of await run(acls.map((a) => ({ command: 'addRoleACL', rolename, ...a }))))
          ok(r, 'ACL with this topic already exists');
      }
      if (ok(client, 'Client already exists').error) {
        // Re-provision rotates the password; Mosquitto drops the sessions logged in with the old one.
        const [got] = await run([{ command: 'getClient', username: satelliteId }]);
        const roles = ((ok(got).data?.client as { roles?: Array<{ rolename: string }> } | undefined)?.roles ?? []).map((r) => r.rolename);
        const cmds: Array<Record<string, unknown> & { command: string }> = [];
        if (!roles.includes(rolename)) cmds.push({ command: 'addClientRole', username: satelliteId, rolename, priority: 0 });
        cmds.push({ command: 'setClientPassword', username: satelliteId, password });
        for (const r of await run(cmds)) ok(r);
      }
    },

    async revokeSatellite(satelliteId) {
      // Deleting the client disconnects its live sessions.
      const [client, role] = await run([
        { command: 'deleteClient', username: satelliteId },
        { command: 'deleteRole', rolename: satelliteRole(satelliteId) },
      ]);
      ok(client, 'Client not found');
      ok(role, 'Role not found');
    },

    publish: (topic, payload, o) => hub.publish(topic, payload, o?.qos ?? 0),
    subscribe: (pattern, handler, o) => session.subscribe(pattern, handler, o?.qos ?? 0),
    suspend: () => session.suspend(),

    async close() {
      if (closed) return;
      closed = true;
      for (const key of [...pending.keys()]) settle(key, new Error('broker closed'));
      await session.close();
      await hub.close();
    },
  };
}

async function probePublish(hub: HubClient, topic: string, timeoutMs: number): Promise<void> {
  const nonce = crypto.randomBytes(8).toString('hex');
  let timer: NodeJS.Timeout | undefined;
  const received = new Promise<void>((resolve, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new Error(
            `the MQTT admin user cannot publish under ${TOPIC_ROOT}/ (a denied publish is dropped silently): grant its role full access, e.g. ` +
              `mosquitto_ctrl -u ADMIN dynsec addRoleACL admin publishClientSend '#' allow`,
          ),
        ),
      timeoutMs,
    );
    void hub
      .subscribe(
        topic,
        (_t, payload) => {
          if (payload.toString() === nonce) resolve();
        },
        1,
      )
      .then(() => hub.publish(topic, nonce, 1))
      .catch(reject);
  });
  try {
    await received;
  } finally {
    clearTimeout(timer);
    await hub.unsubscribe(topic).catch(() => {});
  }
}
