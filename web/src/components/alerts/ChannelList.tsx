/**
 * The team's channels: where each one sends, its last delivery, and for admins a test send
 * (the receiver's answer shown inline), editing, deleting and the recent deliveries.
 */
import { useState } from 'react';
import { useChannelMutations, useDeliveries, useTestChannel, type AlertChannel } from '../../api/hooks/alert-rules';
import { useT } from '../../i18n';
import { useFormat } from '../../session';
import { ConfirmDelete, EmptyNote, ErrorText } from '../ui';
import { ChannelForm } from './ChannelForm';
import { channelTarget, channelTypeName, deliveryOutcome, eventName, testOutcome } from './labels';

export function ChannelList({ tenantId, channels, editable }: { tenantId: string; channels: AlertChannel[]; editable: boolean }) {
  const t = useT();
  const [adding, setAdding] = useState(false);
  return (
    <>
      {channels.length === 0 ? <EmptyNote>{t('channels.none')}</EmptyNote> : null}
      <ul className="plain">
        {channels.map((c) => (
          <ChannelItem key={c.id} tenantId={tenantId} c={c} editable={editable} />
        ))}
      </ul>
      {editable ? (
        adding ? (
          <ChannelForm tenantId={tenantId} channel={null} onDone={() => setAdding(false)} />
        ) : (
          <button type="button" onClick={() => setAdding(true)}>
            {t('channels.add')}
          </button>
        )
      ) : null}
    </>
  );
}

function ChannelItem({ tenantId, c, editable }: { tenantId: string; c: AlertChannel; editable: boolean }) {
  const t = useT();
  const fmt = useFormat();
  const [editing, setEditing] = useState(false);
  const [open, setOpen] = useState(false);
  const test = useTestChannel(tenantId, c.id);
  const { remove } = useChannelMutations(tenantId);
  if (editing) return <ChannelForm tenantId={tenantId} channel={c} onDone={() => setEditing(false)} />;
  return (
    <li className="card" data-testid="channel" aria-label={c.name}>
      <div className="row">
        <strong>{c.name}</strong>
        <span className="badge">{channelTypeName(t, c.type)}</span>
        <code className="small">{channelTarget(c)}</code>
        {c.hasSecret ? <span className="pill ok">{t('channels.hasSecret')}</span> : null}
      </div>
      <p className="muted small">
        {t('channels.last')}:{' '}
        {c.lastDelivery ? `${deliveryOutcome(t, c.lastDelivery)} · ${fmt.dateTime(c.lastDelivery.createdAt)}` : t('common.never')}
      </p>
      {editable ? (
        <div className="row">
          <button type="button" disabled={test.isPending} onClick={() => test.mutate()}>
            {test.isPending ? t('channels.testing') : t('channels.test')}
          </button>
          <button type="button" className="secondary" onClick={() => setEditing(true)}>
            {t('channels.editButton')}
          </button>
          <ConfirmDelete
            question={t('channels.deleteConfirm', { name: c.name })}
            pending={remove.isPending}
            onDelete={() => remove.mutate(c.id)}
          />
        </div>
      ) : null}
      {test.data ? (
        <p className={`test-result ${test.data.delivered ? 'ok' : 'bad'}`} role="status" data-testid="test-result">
          {testOutcome(t, test.data)}
        </p>
      ) : null}
      <ErrorText error={test.error ?? remove.error} />
      {editable ? (
        <details onToggle={(e) => setOpen((e.target as HTMLDetailsElement).open)}>
          <summary>{t('channels.deliveries')}</summary>
          {open ? <Deliveries channelId={c.id} /> : null}
        </details>
      ) : null}
    </li>
  );
}

function Deliveries({ channelId }: { channelId: string }) {
  const t = useT();
  const fmt = useFormat();
  const q = useDeliveries(channelId, true);
  const rows = q.data?.deliveries ?? [];
  return (
    <div className="table-wrap">
      <ErrorText error={q.error} />
      {q.isSuccess && rows.length === 0 ? <EmptyNote>{t('channels.deliveries.none')}</EmptyNote> : null}
      {rows.length > 0 ? (
        <table>
          <thead>
            <tr>
              <th scope="col">{t('channels.deliveries.when')}</th>
              <th scope="col">{t('alerts.event')}</th>
              <th scope="col">{t('channels.deliveries.status')}</th>
              <th scope="col">{t('channels.deliveries.attempts')}</th>
              <th scope="col">{t('channels.deliveries.duration')}</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((d) => (
              <tr key={d.id} data-testid="delivery">
                <td>{fmt.dateTime(d.createdAt)}</td>
                <td>{eventName(t, d.event)}</td>
                <td>{deliveryOutcome(t, d)}</td>
                <td>{d.attempts}</td>
                <td>{d.durationMs !== null ? `${d.durationMs} ms` : '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </div>
  );
}
