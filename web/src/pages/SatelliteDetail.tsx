/** One satellite: rename, per-field configuration with inherited value and lock, history, archive, delete. */
import { useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { useMembers } from '../api/hooks/members';
import {
  useConfigHistory,
  useDeletionPreview,
  useRefreshConfigHistory,
  useSatellite,
  useSatelliteMutations,
} from '../api/hooks/satellites';
import { TelemetrySparklines } from '../components/Telemetry';
import { useT } from '../i18n';
import { useFormat } from '../session';
import { ErrorText, Field, fieldError, formError, Loading } from '../components/ui';
import { DeviceActions } from './DeviceActions';
import { ListenLive } from './ListenLive';
import { atLeast } from '../roles';
import { useSession } from '../session';
import { SettingsTable, sourceName } from '../components/SettingsTable';
import { FieldNotes } from '../components/notes/FieldNotes';
import { ExpectedSpecies } from '../components/ExpectedSpecies';
import { PositionPicker } from '../components/PositionPicker';
import { messageOf } from '../api/client';
import { LIMITS } from '../limits';

const shown = (v: unknown) => (v === null || v === undefined ? '—' : typeof v === 'object' ? JSON.stringify(v) : String(v));

export default function SatelliteDetail() {
  const { id = '' } = useParams();
  const t = useT();
  const fmt = useFormat();
  const refreshHistory = useRefreshConfigHistory(id);
  const navigate = useNavigate();
  const { role, me, team } = useSession();
  const sat = useSatellite(id);
  const history = useConfigHistory(id);
  // Who changed it: the members list names them for the team's admins; others see themselves by name.
  const mayListMembers = atLeast(role, 'admin') || me.user.isAdmin;
  const tenantId = team?.id ?? '';
  const members = useMembers(tenantId, mayListMembers);
  const who = (userId: string | null) => {
    if (!userId) return null;
    if (userId === me.user.id) return me.user.name;
    return members.data?.members.find((m) => m.userId === userId)?.name ?? t('fleet.history.someone', { id: userId.slice(0, 8) });
  };
  const [name, setName] = useState<string | null>(null);
  // The rename's refusal at the field: an empty name never reaches the hub (issue 23).
  const [nameError, setNameError] = useState<string | null>(null);
  const { rename, archive, remove } = useSatelliteMutations(id);
  const [deleting, setDeleting] = useState(false);
  const [confirmName, setConfirmName] = useState('');
  const preview = useDeletionPreview(id, deleting);

  if (sat.isLoading) return <Loading />;
  if (!sat.data) return <ErrorText error={sat.error} />;
  const s = sat.data;
  const manage = s.can_manage;

  return (
    <section aria-labelledby="sat-title">
      <p>
        <Link to="/fleet">← {t('fleet.back')}</Link>
      </p>
      <div className="title-row">
        <h1 id="sat-title">{s.name}</h1>
        <span className={`pill ${s.online ? 'ok' : 'off'}`}>{s.online ? t('fleet.online') : t('fleet.offline')}</span>
        {s.archived ? <span className="badge">{t('fleet.archived')}</span> : null}
      </div>
      <p className="muted">
        {t('fleet.lastSeen')}: {s.lastSeenAt ? fmt.dateTime(s.lastSeenAt) : t('common.never')} · {t('fleet.version')}: {s.version ?? '—'}
      </p>
      <TelemetrySparklines satelliteId={s.id} />
      {atLeast(role, 'member') && !s.archived ? <ListenLive tenantId={s.tenantId} satelliteId={s.id} /> : null}
      {manage ? (
        <form
          className="row card"
          noValidate
          aria-label={t('fleet.rename')}
          onSubmit={(e) => {
            e.preventDefault();
            const next = (name ?? s.name).trim();
            if (!next) {
              setNameError(t('satellite.nameRequired'));
              return;
            }
            setNameError(null);
            rename.mutate(next, { onSuccess: () => setName(null) });
          }}
        >
          <Field
            label={t('fleet.rename')}
            error={nameError ?? fieldError(rename.error, 'name') ?? (formError(rename.error, []) ? messageOf(rename.error) : null)}
          >
            {(fid, describedBy) => (
              <input
                id={fid}
                aria-describedby={describedBy}
                aria-invalid={nameError || rename.error ? true : undefined}
                required
                value={name ?? s.name}
                onChange={(e) => {
                  setName(e.target.value);
                  if (nameError) setNameError(null);
                }}
                maxLength={LIMITS.satelliteName.maxLength}
              />
            )}
          </Field>
          <button type="submit" disabled={rename.isPending}>
            {t('common.save')}
          </button>
        </form>
      ) : null}

      <PositionPicker satellite={s} manage={manage} />

      <FieldNotes
        tenantId={s.tenantId}
        query={{ satelliteId: s.id, limit: 50 }}
        satellite={{ id: s.id, latitude: s.latitude, longitude: s.longitude }}
        compose
      />

      <ExpectedSpecies satelliteId={s.id} />

      <h2>{t('fleet.overrides')}</h2>
      <SettingsTable scope={{ satelliteId: id }} disabled={!manage} onSaved={refreshHistory} />

      <h2>{t('fleet.history')}</h2>
      <ErrorText error={history.error} />
      <ul className="history">
        {history.data?.history.slice(0, 10).map((h) => {
          const by = who(h.changedBy);
          const changes = Object.entries(h.changes ?? {});
          return (
            <li key={h.id} data-testid="history-entry">
              {fmt.dateTime(h.changedAt)} · {sourceName(t, h.source)}
              {by ? ` · ${t('fleet.history.by', { name: by })}` : null}
              {changes.length > 0 ? (
                <ul className="small">
                  {changes.map(([key, c]) => (
                    <li key={key}>
                      <code>{key}</code>: {shown(c.from)} → {shown(c.to)}
                    </li>
                  ))}
                </ul>
              ) : null}
            </li>
          );
        })}
      </ul>

      {manage ? <DeviceActions id={id} /> : null}

      {manage ? (
        <div className="card danger">
          <div className="row">
            <button type="button" className="secondary" onClick={() => archive.mutate(s.archived)} disabled={archive.isPending}>
              {s.archived ? t('fleet.unarchive') : t('fleet.archive')}
            </button>
            <button type="button" className="danger" onClick={() => setDeleting(true)}>
              {t('common.delete')}
            </button>
          </div>
          <ErrorText error={archive.error} />
          {deleting ? (
            <form
              onSubmit={(e) => {
                e.preventDefault();
                remove.mutate(confirmName, { onSuccess: () => navigate('/fleet') });
              }}
            >
              <h3>{t('fleet.deleteTitle')}</h3>
              <ErrorText error={preview.error} />
              {preview.data ? (
                <p>
                  {t('fleet.deletePreview', {
                    detections: preview.data.detections,
                    chunks: preview.data.chunks,
                    bytes: fmt.bytes(preview.data.audioBytes),
                    alerts: preview.data.alerts,
                    notes: preview.data.fieldNotes,
                  })}
                </p>
              ) : null}
              <Field label={t('fleet.confirmName')}>
                {(fid) => <input id={fid} value={confirmName} onChange={(e) => setConfirmName(e.target.value)} />}
              </Field>
              <div className="row">
                <button type="submit" className="danger" disabled={confirmName !== s.name || remove.isPending}>
                  {t('common.delete')}
                </button>
                <button type="button" className="secondary" onClick={() => setDeleting(false)}>
                  {t('common.cancel')}
                </button>
              </div>
              <ErrorText error={remove.error} />
            </form>
          ) : null}
        </div>
      ) : null}
    </section>
  );
}
