/** Commands to one satellite: push its profile, request an update, rotate its key, read its logs. */
import { useState } from 'react';
import { useSatelliteCommands, useSatelliteLogs } from '../api/hooks/satellites';
import { useT } from '../i18n';
import { useFormat } from '../session';
import { CopyButton, ErrorText } from '../components/ui';

export function DeviceActions({ id }: { id: string }) {
  const t = useT();
  const fmt = useFormat();
  const [waiting, setWaiting] = useState(false);
  const { pushProfile: profile, requestUpdate: update, rotateKey: rotate, requestLogs } = useSatelliteCommands(id, () => setWaiting(true));
  // Polls while the satellite has not answered the latest request.
  const logs = useSatelliteLogs(id, waiting);
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
