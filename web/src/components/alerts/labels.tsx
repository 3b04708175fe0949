/** Names shown for alert events, channel types, deliveries and a channel test's answer. */
import { ALERT_EVENTS, type AlertEvent } from '../../api/hooks/alerts';
import type { AlertChannel, ChannelTest, ChannelType, Delivery } from '../../api/hooks/alert-rules';
import { useT, type T } from '../../i18n';

const TONE: Partial<Record<AlertEvent, string>> = { rare_species: 'rare', first_of_season: 'season', satellite_offline: 'status-rejected' };

export function EventBadge({ event }: { event: AlertEvent }) {
  const t = useT();
  return (
    <span className={`badge ${TONE[event] ?? ''}`} data-testid="alert-event">
      {t(`alerts.event.${event}`)}
    </span>
  );
}

export const channelTypeName = (t: T, type: ChannelType) => t(`channels.type.${type}`);

/** What may be shown of a channel's config: the addresses, the redacted URL, the chat host or the chat id. */
export function channelTarget(c: AlertChannel): string {
  const cfg = c.config as { addresses?: string[]; url?: string; host?: string; chatId?: string; brokerUrl?: string; apiUrl?: string };
  return cfg.addresses?.join(', ') ?? cfg.url ?? cfg.host ?? cfg.chatId ?? cfg.brokerUrl ?? cfg.apiUrl ?? '';
}

/** "Delivered — HTTP 200 in 35 ms" / "Failed — HTTP 401: …" / "Failed — connection refused". */
export function testOutcome(t: T, r: ChannelTest): string {
  const http = r.status !== null ? t('channels.http', { status: r.status }) : null;
  if (r.delivered) return http ? t('channels.delivered', { http, ms: r.durationMs }) : t('channels.deliveredPlain', { ms: r.durationMs });
  const why = [http, r.error].filter(Boolean).join(': ');
  return t('channels.failed', { why: why || t('channels.noAnswer') });
}

/** One delivery in a line: its state, the receiver's status and the error. */
export function deliveryOutcome(t: T, d: Pick<Delivery, 'status' | 'receiverStatus' | 'error'>): string {
  const parts = [t(`channels.status.${d.status}`)];
  if (d.receiverStatus !== null) parts.push(t('channels.http', { status: d.receiverStatus }));
  if (d.error) parts.push(d.error);
  return parts.join(' — ');
}

/** An event's name in the interface language (a delivery's event arrives as a plain string). */
export const eventName = (t: T, event: string) =>
  (ALERT_EVENTS as string[]).includes(event) ? t(`alerts.event.${event as AlertEvent}`) : event;
