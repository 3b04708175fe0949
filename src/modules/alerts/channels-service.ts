import type { Db } from '../../infra/db/index.ts';
import type { Clock } from '../../core/clock.ts';
import { roleAtLeast, type TeamActor } from '../../core/actor.ts';
import type { AuditWriter } from '../audit/writer.ts';
import { newId } from '../../core/crypto.ts';
import { badRequest, notFound } from '../../core/errors.ts';
import { createAlertsRepo, type ChannelRow, type DeliveryRow } from './repo.ts';
import { configForViewer, hasSecret, maskEmailsIn, splitConfig, urlToCheck, type SplitConfig } from './channel-config.ts';
import type { ChannelConfigInput, ChannelCreateInput, ChannelUpdateInput } from './schemas.ts';
import type { ChannelType } from './delivery/types.ts';
import { checkUrl, OutboundRefused, type AllowList } from './delivery/outbound.ts';
import { SAMPLE_PAYLOAD, validateTemplate } from './delivery/template.ts';
import type { Dispatcher } from './dispatch.ts';
import { formatConfidence, wordsOf, type TeamLocale } from './words.ts';
import { SAMPLE_STREAM } from './delivery/stream-send.ts';
import { STREAM_CHANNEL_TYPES, type StreamChannelType } from './schemas.ts';

const isStream = (type: ChannelType): type is StreamChannelType => (STREAM_CHANNEL_TYPES as readonly string[]).includes(type);

const iso = (d: Date) => new Date(d).toISOString();

export const presentDelivery = (d: DeliveryRow) => ({
  id: d.id,
  alertId: d.alertId,
  event: d.event,
  status: d.status,
  attempts: d.attempts,
  receiverStatus: d.receiverStatus,
  durationMs: d.durationMs,
  error: d.error,
  createdAt: iso(d.createdAt),
  updatedAt: iso(d.updatedAt),
});

export function createChannelsService(deps: {
  db: Db;
  clock: Clock;
  audit: AuditWriter;
  dispatcher: Pick<Dispatcher, 'sealSecrets' | 'openChannel' | 'attempt'>;
  allow: AllowList;
  /** Reads the hub's allow list again (index.ts) before a URL is judged. */
  refreshAllow?: () => Promise<void>;
  teamName: (tenantId: string) => Promise<string | null>;
  /** The team's language and zone: a test reads like the team's real alerts. */
  locale?: (tenantId: string) => Promise<TeamLocale>;
  /** Drops a Home Assistant channel's broker connection in this process (changed or deleted channel). */
  closeConnection?: (channelId: string) => void;
}) {
  const { db, clock, audit, dispatcher } = deps;
  const repo = createAlertsRepo(db);

  /** `full`: for Admin and above; below, URLs keep only scheme and host and email addresses are masked. */
  const present = (c: ChannelRow, split: SplitConfig, last: DeliveryRow | null, full = true) => {
    const delivery = last ? presentDelivery(last) : null;
    return {
      id: c.id,
      tenantId: c.tenantId,
      type: c.type,
      name: c.name,
      config: full ? split.config : configForViewer(split.config),
      payload_template: c.payloadTemplate,
      hasSecret: hasSecret(c.type, split.secrets),
      lastDelivery: delivery && !full && delivery.error ? { ...delivery, error: maskEmailsIn(delivery.error) } : delivery,
      createdAt: iso(c.createdAt),
      updatedAt: iso(c.updatedAt),
    };
  };

  async function checkOutbound(url: string | null) {
    if (!url) return;
    await deps.refreshAllow?.();
    try {
      await checkUrl(url, deps.allow);
    } catch (err) {
      // Who can allow a LAN receiver, and where (issue 36 point 6).
      if (err instanceof OutboundRefused && err.code === 'URL_NOT_ALLOWED')
        throw badRequest(
          `${err.message.replace(/; list it in OUTBOUND_ALLOW_HOSTS to allow it$/, '')}: a hub admin can allow it under Admin → Hub settings → outbound_allow_hosts (or the operator in OUTBOUND_ALLOW_HOSTS)`,
          err.code,
        );
      if (err instanceof OutboundRefused) throw badRequest(err.message, err.code);
      throw err;
    }
  }

  function checkTemplate(type: ChannelType, template: string | null) {
    if (template === null) return;
    if (type !== 'webhook') throw badRequest('payload_template applies to webhook channels only', 'INVALID_CHANNEL_CONFIG');
    const problem = validateTemplate(template);
    if (problem) throw badRequest(`payload_template does not render to valid JSON: ${problem}`, 'INVALID_TEMPLATE');
  }

  async function save(
    actor: TeamActor,
    existing: ChannelRow | null,
    input: { type: ChannelType; name: string; config?: ChannelConfigInput; payload_template?: string | null },
  ) {
    const tenantId = actor.teamId;
    const id = existing?.id ?? newId();
    // A channel changing type starts from nothing: no secret of the old type carries over.
    const previous = existing && existing.type === input.type ? dispatcher.openChannel(existing) : null;
    const split = splitConfig(input.type, input.config ?? {}, previous);
    const template = input.payload_template === undefined ? (existing?.payloadTemplate ?? null) : input.payload_template || null;
    checkTemplate(input.type, template);
    if (input.config) await checkOutbound(urlToCheck(input.config));
    const now = clock.now();
    const row: ChannelRow = {
      id,
      tenantId,
      type: input.type,
      name: input.name,
      config: split.config,
      secrets: dispatcher.sealSecrets(id, split.secrets),
      payloadTemplate: template,
      createdAt: existing?.createdAt ?? now,
      updatedAt: now,
    };
    await db.tx(async (tx) => {
      await repo.saveChannel(tx, { ...row, createdBy: actor.userId });
      await audit.write(tx, actor, {
        action: existing ? 'admin.alert_channel_updated' : 'admin.alert_channel_created',
        tenantId,
        targetType: 'alert_channel',
        targetId: id,
        // Names and kinds only: never a URL, address list or secret in the audit log.
        details: { name: row.name, type: row.type, hasSecret: hasSecret(input.type, split.secrets) },
      });
    });
    if (existing) deps.closeConnection?.(id);
    return present(row, split, null);
  }

  async function require(tenantId: string, id: string) {
    const c = await repo.findChannel(tenantId, id);
    if (!c) throw notFound('No such channel');
    return c;
  }

  return {
    async list(actor: TeamActor) {
      const [rows, last] = await Promise.all([repo.listChannels(actor.teamId), repo.lastDeliveries(actor.teamId)]);
      const lastOf = new Map(last.map((d) => [d.channelId, d]));
      const full = roleAtLeast(actor.teamRole, 'admin');
      return rows.map((c) => present(c, dispatcher.openChannel(c), lastOf.get(c.id) ?? null, full));
    },
    create: (actor: TeamActor, input: ChannelCreateInput) => save(actor, null, input),
    async update(actor: TeamActor, id: string, input: ChannelUpdateInput) {
      const existing = await require(actor.teamId, id);
      return save(actor, existing, {
        config: input.config,
        payload_template: input.payload_template,
        type: input.type ?? existing.type,
        name: input.name ?? existing.name,
      });
    },
    async remove(actor: TeamActor, id: string) {
      const tenantId = actor.teamId;
      const removed = await db.tx(async (tx) => {
        if (!(await repo.deleteChannel(tx, tenantId, id))) return false;
        await audit.write(tx, actor, { action: 'admin.alert_channel_deleted', tenantId, targetType: 'alert_channel', targetId: id });
        return true;
      });
      if (!removed) throw notFound('No such channel');
      deps.closeConnection?.(id);
    },

    /** A sample alert through the same sender, signature included; recorded among the channel's deliveries. */
    async test(actor: TeamActor, id: string) {
      const c = await require(actor.teamId, id);
      const now = clock.now();
      const deliveryId = newId();
      if (isStream(c.type)) return runTest(c, deliveryId, { ...SAMPLE_STREAM, detectedAt: now.toISOString() }, now);
      const teamName = (await deps.teamName(c.tenantId)) ?? '';
      const locale = deps.locale ? await deps.locale(c.tenantId) : null;
      const payload = { ...SAMPLE_PAYLOAD, timestamp: now.toISOString(), teamName };
      if (locale) {
        const conf = formatConfidence(SAMPLE_PAYLOAD.confidence ?? 0, locale.language);
        Object.assign(payload, {
          language: locale.language,
          timeZone: locale.timeZone,
          ruleName: locale.language === 'de' ? 'Kanaltest' : SAMPLE_PAYLOAD.ruleName,
          message: wordsOf(locale.language).testMessage(SAMPLE_PAYLOAD.commonName ?? '', conf, SAMPLE_PAYLOAD.satelliteName ?? ''),
        });
      }
      return runTest(c, deliveryId, payload, now);
    },

    deliveries: async (tenantId: string, id: string, limit: number) => {
      await require(tenantId, id);
      return (await repo.deliveriesOf(tenantId, id, limit)).map(presentDelivery);
    },
    teamOfChannel: repo.teamOfChannel,
  };

  /** Records the sample among the channel's deliveries and makes one attempt, no retry: the caller waits for the answer. */
  async function runTest(c: ChannelRow, deliveryId: string, payload: DeliveryRow['payload'], now: Date) {
    await db.tx((tx) =>
      repo.insertDeliveries(tx, [
        {
          id: deliveryId,
          tenantId: c.tenantId,
          channelId: c.id,
          alertId: null,
          event: 'test',
          status: 'pending',
          payload,
          createdAt: now,
          updatedAt: now,
        },
      ]),
    );
    const outcome = await dispatcher.attempt(deliveryId, { retry: false });
    if (!outcome) throw notFound('No such channel');
    return {
      delivered: outcome.delivered,
      status: outcome.status,
      durationMs: outcome.durationMs,
      ...(outcome.error ? { error: outcome.error } : {}),
    };
  }
}

export type ChannelsService = ReturnType<typeof createChannelsService>;
