/**
 * "Add a satellite": mints a member-role API key for the team (a viewer key cannot register a
 * satellite) and shows the one-line command that starts the reference satellite against this
 * hub, for a trial with the synthetic soundscape, a Raspberry Pi's sound card and a file or stream.
 */
import { useState } from 'react';
import { useT } from '../i18n';
import { useCreateApiKey } from '../api/hooks/api-keys';
import { useHubInfo } from '../api/hooks/system';
import { CopyButton, ErrorText } from './ui';

/** The command a person pastes; every value it carries is URL-, key- or number-shaped, so it needs no quoting. */
export function satelliteCommand(
  hub: string,
  token: string,
  tenantId: string,
  source?: string,
  position?: { latitude: number; longitude: number } | null,
): string {
  return (
    `npx chorus satellite --hub ${hub} --token ${token} --tenant ${tenantId}${source ? ` --source ${source}` : ''}` +
    (position ? ` --latitude ${position.latitude} --longitude ${position.longitude}` : '')
  );
}

/** A coordinate typed with a point or a comma, or null when the text is no number in range. */
function coordinate(text: string, limit: number): number | null {
  const x = Number(text.trim().replace(',', '.'));
  return text.trim() !== '' && Number.isFinite(x) && Math.abs(x) <= limit ? x : null;
}

export function SatelliteSetup({ tenantId, first }: { tenantId: string; first: boolean }) {
  const t = useT();
  const info = useHubInfo();
  const [token, setToken] = useState<string | null>(null);
  const [open, setOpen] = useState(first);
  const [lat, setLat] = useState('');
  const [lon, setLon] = useState('');
  const create = useCreateApiKey(tenantId, (created) => setToken(created.key));
  const hub = info.data?.publicUrl ?? location.origin;

  if (!open) {
    return (
      <p>
        <button type="button" onClick={() => setOpen(true)}>
          {t('setup.add')}
        </button>
      </p>
    );
  }
  const latN = coordinate(lat, 90);
  const lonN = coordinate(lon, 180);
  const position = latN !== null && lonN !== null ? { latitude: latN, longitude: lonN } : null;
  const variants: { label: string; source?: string }[] = [
    { label: t('setup.trial') },
    { label: t('setup.pi'), source: 'alsa:default' },
    { label: t('setup.stream'), source: 'rtsp://camera.local/stream' },
  ];
  return (
    <section className="card" aria-labelledby="setup-title" data-testid="satellite-setup">
      <h2 id="setup-title">{first ? t('setup.firstTitle') : t('setup.title')}</h2>
      <p>{t('setup.intro')}</p>
      {token ? (
        <>
          <p className="muted">{t('setup.keyOnce')}</p>
          <fieldset className="row" data-testid="setup-position">
            <legend>{t('setup.position')}</legend>
            <label>
              {t('position.latitude')}
              <input inputMode="decimal" size={10} value={lat} onChange={(e) => setLat(e.target.value)} />
            </label>
            <label>
              {t('position.longitude')}
              <input inputMode="decimal" size={10} value={lon} onChange={(e) => setLon(e.target.value)} />
            </label>
            <p className="muted small">{t('setup.positionHint')}</p>
          </fieldset>
          {variants.map((v) => {
            const command = satelliteCommand(hub, token, tenantId, v.source, position);
            return (
              <div key={v.label}>
                <h3>{v.label}</h3>
                <pre className="wrap" data-testid="satellite-command">
                  {command}
                </pre>
                <CopyButton text={command} />
              </div>
            );
          })}
          <p className="muted">{t('setup.sources')}</p>
        </>
      ) : (
        <div className="row">
          <button
            type="button"
            disabled={create.isPending}
            onClick={() => create.mutate({ name: t('setup.keyName', { date: new Date().toISOString().slice(0, 10) }), role: 'member' })}
          >
            {t('setup.mint')}
          </button>
          {!first ? (
            <button type="button" className="secondary" onClick={() => setOpen(false)}>
              {t('common.close')}
            </button>
          ) : null}
        </div>
      )}
      <ErrorText error={create.error} />
    </section>
  );
}
