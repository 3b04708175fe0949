/**
 * The team's alerts (GET /alerts): newest first, filtered by state and event in the URL, paged;
 * each acknowledged on its own or all at once. New alerts arrive over the WebSocket (live.tsx
 * refreshes the list and the unread count in the navigation).
 */
import { useMemo } from 'react';
import { Link, useSearchParams } from 'react-router';
import { ALERT_EVENTS, useAcknowledge, useAlerts, type Alert, type AlertEvent } from '../api/hooks/alerts';
import { atLeast } from '../roles';
import { useT } from '../i18n';
import { useFormat, useSession } from '../session';
import { EmptyNote, ErrorText, Field, Loading } from '../components/ui';
import { useSpeciesNames } from '../species';
import { EventBadge } from '../components/alerts/labels';
import { NoTeam } from '../components/NoTeam';

const PAGE = 25;
type State = 'all' | 'unacknowledged' | 'acknowledged';

export default function Alerts() {
  const t = useT();
  const fmt = useFormat();
  const { team, role, me } = useSession();
  const tenantId = team?.id ?? null;
  const isAdmin = atLeast(role, 'admin') || me.user.isAdmin;
  const [params, setParams] = useSearchParams();
  const state = (params.get('state') ?? 'all') as State;
  const event = (params.get('event') ?? '') as AlertEvent | '';
  const page = Math.max(0, Number(params.get('page') ?? 0) || 0);
  const list = useAlerts(tenantId, {
    ...(state === 'all' ? {} : { acknowledged: state === 'acknowledged' }),
    ...(event ? { event } : {}),
    limit: PAGE,
    offset: page * PAGE,
  });
  const ack = useAcknowledge(tenantId);
  const rows = useMemo(() => list.data?.alerts ?? [], [list.data]);
  const speciesName = useSpeciesNames(useMemo(() => rows.flatMap((a) => (a.speciesCode ? [a.speciesCode] : [])), [rows]));

  const set = (key: string, value: string) => {
    const next = new URLSearchParams(params);
    if (value && value !== 'all') next.set(key, value);
    else next.delete(key);
    if (key !== 'page') next.delete('page');
    setParams(next);
  };

  if (!team) return <NoTeam />;
  const total = list.data?.total ?? 0;
  const unread = list.data?.unacknowledged ?? 0;
  const lastPage = Math.max(0, Math.ceil(total / PAGE) - 1);
  const filtered = state !== 'all' || !!event;

  return (
    <section aria-labelledby="alerts-title">
      <div className="title-row">
        <h1 id="alerts-title">{t('alerts.title')}</h1>
        <div className="row">
          <button type="button" disabled={unread === 0 || ack.all.isPending} onClick={() => ack.all.mutate()}>
            {t('alerts.ackAll')}
          </button>
          <Link to="/team/alerts">{t('alerts.rulesLink')}</Link>
        </div>
      </div>
      <ErrorText error={ack.all.error} />
      <div className="row card" role="group" aria-label={t('alerts.filters')}>
        <Field label={t('alerts.state')}>
          {(id) => (
            <select id={id} value={state} onChange={(e) => set('state', e.target.value)}>
              <option value="all">{t('alerts.state.all')}</option>
              <option value="unacknowledged">{t('alerts.state.unacknowledged')}</option>
              <option value="acknowledged">{t('alerts.state.acknowledged')}</option>
            </select>
          )}
        </Field>
        <Field label={t('alerts.event')}>
          {(id) => (
            <select id={id} value={event} onChange={(e) => set('event', e.target.value)}>
              <option value="">{t('alerts.event.any')}</option>
              {ALERT_EVENTS.map((ev) => (
                <option key={ev} value={ev}>
                  {t(`alerts.event.${ev}`)}
                </option>
              ))}
            </select>
          )}
        </Field>
        <span className="muted small" data-testid="alerts-summary">
          {t('alerts.summary', { total, unread })}
        </span>
      </div>
      <ErrorText error={list.error} />
      {list.isLoading ? <Loading /> : null}
      {!list.isLoading && rows.length === 0 ? (
        filtered ? (
          <EmptyNote>{t('alerts.noneFiltered')}</EmptyNote>
        ) : (
          <div className="card" data-testid="alerts-empty">
            <p>{t('alerts.empty')}</p>
            {isAdmin ? (
              <Link to="/team/alerts">{t('alerts.empty.setUp')}</Link>
            ) : (
              <p className="muted small">{t('alerts.empty.askAdmin')}</p>
            )}
          </div>
        )
      ) : null}
      <ol className="alerts" aria-label={t('alerts.title')}>
        {rows.map((a) => (
          <AlertRow
            key={a.id}
            a={a}
            species={a.speciesCode ? speciesName(a.speciesCode, a.commonName ?? a.species ?? a.speciesCode) : null}
            when={fmt.dateTime(a.createdAt)}
            acknowledgedAt={a.acknowledgedAt ? fmt.dateTime(a.acknowledgedAt) : null}
            busy={ack.one.isPending && ack.one.variables === a.id}
            onAck={() => ack.one.mutate(a.id)}
          />
        ))}
      </ol>
      {ack.one.error ? <ErrorText error={ack.one.error} /> : null}
      {total > PAGE ? (
        <nav className="pager row" aria-label={t('common.pages')}>
          <button type="button" className="secondary" disabled={page === 0} onClick={() => set('page', String(page - 1))}>
            {t('det.prev')}
          </button>
          <span>{t('det.page', { page: page + 1 })}</span>
          <button type="button" className="secondary" disabled={page >= lastPage} onClick={() => set('page', String(page + 1))}>
            {t('det.next')}
          </button>
        </nav>
      ) : null}
    </section>
  );
}

function AlertRow(props: {
  a: Alert;
  species: { primary: string; others: string[] } | null;
  when: string;
  acknowledgedAt: string | null;
  busy: boolean;
  onAck: () => void;
}) {
  const t = useT();
  const { a, species } = props;
  return (
    <li className={`card alert${a.acknowledged ? ' acked' : ''}`} data-testid="alert-row" data-id={a.id}>
      <div className="row">
        <EventBadge event={a.event} />
        <strong>{a.message}</strong>
      </div>
      <div className="row small">
        {species ? (
          <span>
            {species.primary}
            {species.others.length > 0 ? <span className="muted"> · {species.others.join(' · ')}</span> : null}
            {a.species ? <em className="muted"> ({a.species})</em> : null}
          </span>
        ) : null}
        {a.satelliteName ? (
          <span>
            {t('alerts.satellite')}: {a.satelliteId ? <Link to={`/fleet/${a.satelliteId}`}>{a.satelliteName}</Link> : a.satelliteName}
          </span>
        ) : null}
        <time dateTime={a.createdAt} className="muted">
          {props.when}
        </time>
        <span className="muted">
          {t('alerts.rule')}: {a.ruleName}
        </span>
        {a.detectionId ? <Link to={`/detections/${a.detectionId}`}>{t('alerts.openDetection')}</Link> : null}
      </div>
      <div className="row">
        {a.acknowledged ? (
          <span className="muted small">{t('alerts.acknowledgedAt', { when: props.acknowledgedAt ?? '—' })}</span>
        ) : (
          <button
            type="button"
            className="secondary"
            disabled={props.busy}
            onClick={props.onAck}
            aria-label={`${t('alerts.ack')}: ${a.message}`}
          >
            {t('alerts.ack')}
          </button>
        )}
      </div>
    </li>
  );
}
