/** One satellite: rename, per-field configuration with inherited value and lock, history, archive, delete. */
import { useState, type FormEvent } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, data } from '../api/client';
import type { DeletionPreview, EffectiveSettings, Satellite, SettingEntry } from '../api/types';
import { useT } from '../i18n';
import { useFormat } from '../session';
import { bytes, ErrorText, Field, Loading } from '../components/ui';
import { DeviceActions } from './DeviceActions';

const show = (v: unknown) => (v === null || v === undefined ? '—' : typeof v === 'object' ? JSON.stringify(v) : String(v));

function parseInput(raw: string, like: unknown): unknown {
  if (typeof like === 'number') return Number(raw);
  if (typeof like === 'boolean') return raw === 'true';
  if (typeof like === 'string') return raw;
  return JSON.parse(raw);
}

function SettingRow({ entry, satelliteId, disabled }: { entry: SettingEntry; satelliteId: string; disabled: boolean }) {
  const t = useT();
  const qc = useQueryClient();
  const current = entry.own ?? entry.value;
  const [draft, setDraft] = useState(() => (typeof current === 'object' ? JSON.stringify(current) : String(current)));
  const save = useMutation({
    mutationFn: (value: unknown) =>
      data<EffectiveSettings>(api.PATCH('/api/settings/effective', { params: { query: { satelliteId } }, body: { values: { [entry.key]: value } } })),
    onSuccess: (res) => {
      qc.setQueryData(['effective', satelliteId], res);
      void qc.invalidateQueries({ queryKey: ['config-history', satelliteId] });
    },
  });
  const locked = entry.lockedBy !== null;
  const inputId = `set-${entry.key}`;

  function submit(e: FormEvent) {
    e.preventDefault();
    let value: unknown;
    try {
      value = parseInput(draft, entry.value);
    } catch {
      save.reset();
      return;
    }
    save.mutate(value);
  }

  return (
    <tr data-testid={`setting-${entry.key}`}>
      <th scope="row">
        <label htmlFor={inputId}>{entry.key}</label>
      </th>
      <td data-testid="value">
        {show(entry.value)} <span className="muted small">({entry.source})</span>
      </td>
      <td className="muted">
        {show(entry.inherited.value)} <span className="small">({entry.inherited.from})</span>
      </td>
      <td>{locked ? <span className="badge rare">{t('fleet.locked', { by: entry.lockedBy! })}</span> : null}</td>
      <td>
        <form onSubmit={submit} className="row tight">
          {typeof entry.value === 'boolean' ? (
            <select id={inputId} value={draft} disabled={disabled || locked} onChange={(e) => setDraft(e.target.value)}>
              <option value="true">true</option>
              <option value="false">false</option>
            </select>
          ) : (
            <input
              id={inputId}
              type={typeof entry.value === 'number' ? 'number' : 'text'}
              step="any"
              value={draft}
              disabled={disabled || locked}
              onChange={(e) => setDraft(e.target.value)}
              aria-describedby={`${inputId}-err`}
            />
          )}
          <button type="submit" disabled={disabled || locked || save.isPending}>
            {t('common.save')}
          </button>
          {entry.own !== null && entry.own !== undefined ? (
            <button type="button" className="secondary" disabled={disabled || save.isPending} onClick={() => save.mutate(null)}>
              {t('fleet.inherit')}
            </button>
          ) : null}
        </form>
        <ErrorText error={save.error} id={`${inputId}-err`} />
      </td>
    </tr>
  );
}

export default function SatelliteDetail() {
  const { id = '' } = useParams();
  const t = useT();
  const fmt = useFormat();
  const qc = useQueryClient();
  const navigate = useNavigate();
  const sat = useQuery({ queryKey: ['satellite', id], queryFn: () => data<Satellite>(api.GET('/api/satellites/{id}', { params: { path: { id } } })) });
  const eff = useQuery({
    queryKey: ['effective', id],
    queryFn: () => data<EffectiveSettings>(api.GET('/api/settings/effective', { params: { query: { satelliteId: id } } })),
  });
  const history = useQuery({
    queryKey: ['config-history', id],
    queryFn: () => data<{ history: Array<{ id: string; changedAt: string; source: string } & Record<string, unknown>> }>(api.GET('/api/satellites/{id}/config/history', { params: { path: { id } } })),
  });
  const [name, setName] = useState<string | null>(null);
  const rename = useMutation({
    mutationFn: (n: string) => data<Satellite>(api.PATCH('/api/satellites/{id}', { params: { path: { id } }, body: { name: n } })),
    onSuccess: () => {
      setName(null);
      void qc.invalidateQueries({ queryKey: ['satellite', id] });
      void qc.invalidateQueries({ queryKey: ['satellites'] });
    },
  });
  const archive = useMutation({
    mutationFn: (archived: boolean) =>
      data(archived ? api.POST('/api/satellites/{id}/unarchive', { params: { path: { id } } }) : api.POST('/api/satellites/{id}/archive', { params: { path: { id } } })),
    onSuccess: () => {
      void qc.invalidateQueries({ queryKey: ['satellite', id] });
      void qc.invalidateQueries({ queryKey: ['satellites'] });
    },
  });
  const [deleting, setDeleting] = useState(false);
  const [confirmName, setConfirmName] = useState('');
  const preview = useQuery({
    queryKey: ['deletion-preview', id],
    enabled: deleting,
    queryFn: () => data<DeletionPreview>(api.GET('/api/satellites/{id}/deletion-preview', { params: { path: { id } } })),
  });
  const remove = useMutation({
    mutationFn: () => data(api.DELETE('/api/satellites/{id}', { params: { path: { id } }, body: { confirmName } })),
    onSuccess: () => {
      void qc.invalidateQueries({ queryKey: ['satellites'] });
      navigate('/fleet');
    },
  });

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
      {manage ? (
        <form
          className="row card"
          onSubmit={(e) => {
            e.preventDefault();
            if (name?.trim()) rename.mutate(name.trim());
          }}
        >
          <Field label={t('fleet.rename')}>{(fid) => <input id={fid} value={name ?? s.name} onChange={(e) => setName(e.target.value)} maxLength={100} />}</Field>
          <button type="submit" disabled={rename.isPending}>
            {t('common.save')}
          </button>
          <ErrorText error={rename.error} />
        </form>
      ) : null}

      <h2>{t('fleet.overrides')}</h2>
      <ErrorText error={eff.error} />
      <div className="table-wrap">
        <table className="settings">
          <thead>
            <tr>
              <th scope="col">{t('fleet.setting')}</th>
              <th scope="col">{t('fleet.value')}</th>
              <th scope="col">{t('fleet.inherited')}</th>
              <th scope="col">{t('fleet.lock')}</th>
              <th scope="col">{t('common.save')}</th>
            </tr>
          </thead>
          <tbody>
            {eff.data?.settings.map((e) => (
              <SettingRow key={`${e.key}:${JSON.stringify(e.own)}`} entry={e} satelliteId={id} disabled={!manage} />
            ))}
          </tbody>
        </table>
      </div>

      <h2>{t('fleet.history')}</h2>
      <ErrorText error={history.error} />
      <ul className="history">
        {history.data?.history.slice(0, 10).map((h) => (
          <li key={h.id}>
            {fmt.dateTime(h.changedAt)} · {h.source}
          </li>
        ))}
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
                remove.mutate();
              }}
            >
              <h3>{t('fleet.deleteTitle')}</h3>
              <ErrorText error={preview.error} />
              {preview.data ? (
                <p>
                  {t('fleet.deletePreview', {
                    detections: preview.data.detections,
                    chunks: preview.data.chunks,
                    bytes: bytes(preview.data.audioBytes),
                    alerts: preview.data.alerts,
                    notes: preview.data.fieldNotes,
                  })}
                </p>
              ) : null}
              <Field label={t('fleet.confirmName')}>{(fid) => <input id={fid} value={confirmName} onChange={(e) => setConfirmName(e.target.value)} />}</Field>
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
