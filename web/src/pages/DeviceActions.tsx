/** Commands to one satellite: push its profile, request an update, rotate its key, read its logs. */
import { useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, data } from '../api/client';
import { useT } from '../i18n';
import { useFormat } from '../session';
import { CopyButton, ErrorText } from '../components/ui';

interface Logs {
  requestId: string;
  requestedAt: string;
  receivedAt: string | null;
  lines: string[] | null;
}

export function DeviceActions({ id }: { id: string }) {
  const t = useT();
  const fmt = useFormat();
  const qc = useQueryClient();
  const path = { params: { path: { id } } };
  const profile = useMutation({ mutationFn: () => data(api.POST('/api/satellites/{id}/profile', path)) });
  const update = useMutation({
    mutationFn: () => data<{ targetVersion?: string }>(api.POST('/api/satellites/{id}/update', path)),
    onSuccess: () => qc.invalidateQueries({ queryKey: ['satellite', id] }),
  });
  const rotate = useMutation({ mutationFn: () => data<{ apiKey: string }>(api.POST('/api/satellites/{id}/rotate-api-key', path)) });
  const [waiting, setWaiting] = useState(false);
  const requestLogs = useMutation({
    mutationFn: () => data(api.POST('/api/satellites/{id}/logs/request', { ...path, body: {} })),
    onSuccess: () => {
      setWaiting(true);
      void qc.invalidateQueries({ queryKey: ['logs', id] });
    },
  });
  const logs = useQuery({
    queryKey: ['logs', id],
    queryFn: () => data<{ logs: Logs | null }>(api.GET('/api/satellites/{id}/logs', path)),
    // Poll while the satellite has not answered the latest request.
    refetchInterval: (q) => (waiting && !q.state.data?.logs?.receivedAt ? 3000 : false),
  });
  const l = logs.data?.logs;

  return (
    <div className="card">
      <h2>{t('fleet.actions')}</h2>
      <div className="row">
        <button type="button" className="secondary" onClick={() => profile.mutate()} disabled={profile.isPending}>
          {t('fleet.pushProfile')}
        </button>
        <button type="button" className="secondary" onClick={() => update.mutate()} disabled={update.isPending}>
          {t('fleet.requestUpdate')}
        </button>
        <button type="button" className="secondary" onClick={() => rotate.mutate()} disabled={rotate.isPending}>
          {t('fleet.rotateKey')}
        </button>
        <button type="button" className="secondary" onClick={() => requestLogs.mutate()} disabled={requestLogs.isPending}>
          {t('fleet.requestLogs')}
        </button>
      </div>
      <ErrorText error={profile.error} />
      {profile.isSuccess ? <p role="status">{t('fleet.sent')}</p> : null}
      <ErrorText error={update.error} />
      {update.data ? <p role="status">{t('fleet.updateRequested', { version: update.data.targetVersion ?? '—' })}</p> : null}
      <ErrorText error={rotate.error} />
      {rotate.data ? (
        <p className="row" role="region" aria-label={t('fleet.apiKey')}>
          {t('fleet.apiKey')}: <code>{rotate.data.apiKey}</code> <CopyButton text={rotate.data.apiKey} />
        </p>
      ) : null}
      <ErrorText error={requestLogs.error} />
      <ErrorText error={logs.error} />
      {l ? (
        <>
          <p className="muted small">
            {t('fleet.logsRequested', { at: fmt.dateTime(l.requestedAt) })}{' '}
            {l.receivedAt ? `· ${fmt.dateTime(l.receivedAt)}` : `· ${t('fleet.logsWaiting')}`}
          </p>
          {l.lines ? <pre className="logs">{l.lines.join('\n')}</pre> : null}
        </>
      ) : null}
    </div>
  );
}
