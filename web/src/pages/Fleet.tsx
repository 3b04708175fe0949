/** The fleet: satellites with state and telemetry, and registration with its one-time credentials. */
import { useState, type FormEvent } from 'react';
import { Link } from 'react-router';
import {
  useRegisterSatellite,
  useSatellites,
  useSatelliteStorage,
  useTelemetry,
  type Registration,
  type SatelliteStorage,
} from '../api/hooks/satellites';
import { atLeast } from '../roles';
import { useT, type T } from '../i18n';
import { useFormat, useSession } from '../session';
import { CopyButton, ErrorText, Field, fieldError, formError, Loading } from '../components/ui';
import { NoTeam } from '../components/NoTeam';
import { SatelliteSetup } from '../components/SatelliteSetup';
import { DiskFacts, DiskWarning, Growth } from '../components/Storage';
import { DemoModelNote } from '../components/DemoModelNote';

function uptime(t: T, s: number | null): string {
  if (s === null) return '—';
  const h = Math.floor(s / 3600);
  return h >= 24
    ? t('fleet.uptime.days', { d: Math.floor(h / 24), h: h % 24 })
    : t('fleet.uptime.hours', { h, min: Math.floor((s % 3600) / 60) });
}

/** A wait in the coarsest unit that still says something: seconds, minutes, then hours and minutes. */
function wait(t: T, s: number): string {
  if (s < 60) return t('fleet.wait.seconds', { s });
  if (s < 3600) return t('fleet.wait.minutes', { min: Math.floor(s / 60) });
  return uptime(t, s);
}

const STAT_KEYS = [
  'totalProcessed',
  'totalSent',
  'rejectedSilence',
  'rejectedClassifier',
  'rejectedAmphibian',
  'rejectedInsect',
  'rejectedAnthropogenic',
  'rejectedHumanVoice',
  'rejectedOtherAnimal',
  'rejectedOther',
  'totalBytes',
  'ackedBytes',
  'unackedBytes',
  'rowCount',
  'unackedCount',
  'diskBytes',
  'refusedCount',
  'oldestUnsentAgeSeconds',
] as const;

/** Shown as the outbox's back-off line, not among its counters. */
const BACKOFF_KEYS = ['backoffSeconds', 'retryInSeconds'];

/** Heartbeat counters (as the satellite reported them) with translated labels; byte counts in SI units. */
function stats(t: T, fmt: ReturnType<typeof useFormat>, reported: unknown): string {
  const o = reported as Record<string, number> | null;
  if (!o) return '—';
  // The stored JSON keeps no order (PostgreSQL's jsonb sorts keys by length): the protocol's order, then the rest.
  const rank = (k: string) => {
    const i = (STAT_KEYS as readonly string[]).indexOf(k);
    return i === -1 ? STAT_KEYS.length : i;
  };
  return Object.entries(o)
    .filter(([k]) => !BACKOFF_KEYS.includes(k))
    .sort(([a], [b]) => rank(a) - rank(b) || a.localeCompare(b))
    .map(([k, v]) => {
      const label = (STAT_KEYS as readonly string[]).includes(k) ? t(`fleet.stat.${k as (typeof STAT_KEYS)[number]}`) : k;
      return `${label} ${k.endsWith('Bytes') ? fmt.bytes(v) : k.endsWith('Seconds') ? wait(t, v) : fmt.number(v, 2)}`;
    })
    .join(' · ');
}

/** The outbox's counters, after the hub's "send again later" wait when the satellite is in one (issue 32). */
function OutboxCell({ reported }: { reported: unknown }) {
  const t = useT();
  const fmt = useFormat();
  const o = reported as Record<string, number> | null;
  return (
    <>
      {o && o.backoffSeconds > 0 ? (
        <div>
          <span className="pill warn" data-testid="outbox-backoff">
            {t('fleet.backoff', { since: wait(t, o.backoffSeconds), next: wait(t, o.retryInSeconds ?? 0) })}
          </span>
        </div>
      ) : null}
      {stats(t, fmt, o)}
    </>
  );
}

/** The latest battery and temperature of one satellite, with a small battery line (last 24 samples). */
function TelemetryCell({ id }: { id: string }) {
  const t = useT();
  const fmt = useFormat();
  const q = useTelemetry(id, true);
  if (q.error) return <ErrorText error={q.error} />;
  const samples = q.data?.telemetry ?? [];
  const battery = samples.map((x) => x.batteryLevel).filter((v): v is number => v !== null);
  const temp = [...samples].reverse().find((x) => x.cpuTemp !== null)?.cpuTemp ?? null;
  if (battery.length === 0 && temp === null) return <span className="muted">—</span>;
  const last = battery.length > 0 ? battery[battery.length - 1] : null;
  const w = 60;
  const hgt = 16;
  const points = battery
    .map((v, i) => `${battery.length === 1 ? w : (i / (battery.length - 1)) * w},${(hgt - Math.max(0, Math.min(1, v)) * hgt).toFixed(1)}`)
    .join(' ');
  const label = [
    last !== null ? `${t('fleet.telemetry.battery')} ${Math.round(last * 100)} %` : null,
    temp !== null ? `${fmt.fixed(temp, 1)} °C` : null,
  ]
    .filter(Boolean)
    .join(' · ');
  return (
    <span className="row tight" data-testid="fleet-telemetry" aria-label={label} role="img">
      {battery.length > 1 ? (
        <svg width={w} height={hgt} viewBox={`0 0 ${w} ${hgt}`} aria-hidden="true" className="spark">
          <polyline points={points} fill="none" stroke="currentColor" strokeWidth="1.5" />
        </svg>
      ) : null}
      <span className="small" aria-hidden="true">
        {label}
      </span>
    </span>
  );
}

type StoredSatellite = SatelliteStorage['satellites'][number];

/** The team's audio, its growth, the hub's disk, and the warnings: the hub running out, satellites low on space. */
function FleetStorage({ storage }: { storage: SatelliteStorage }) {
  const t = useT();
  const fmt = useFormat();
  const low = storage.satellites.filter((s) => s.lowFreeSpace);
  return (
    <section className="card" aria-labelledby="fleet-storage-title" data-testid="fleet-storage">
      <h2 id="fleet-storage-title">{t('storage.title')}</h2>
      <DiskWarning disk={storage.hub} />
      {low.length > 0 ? (
        <p className="card banner" role="alert" data-testid="satellites-low">
          {t('storage.satellitesLow', { limit: fmt.bytes(storage.satelliteWarningBytes), names: low.map((s) => s.name).join(', ') })}
        </p>
      ) : null}
      <dl>
        <dt>{t('storage.teamTotal')}</dt>
        <dd data-testid="team-total">
          {fmt.bytes(storage.totalBytes)} <span className="muted small">({t('storage.chunks', { n: storage.chunks })})</span>
        </dd>
        <dt>{t('storage.growth')}</dt>
        <dd data-testid="team-growth">
          <Growth bytes={storage.growthBytesPerDay} windowDays={storage.windowDays} minHistoryDays={storage.minHistoryDays} />
        </dd>
        <DiskFacts disk={storage.hub} windowDays={storage.windowDays} minHistoryDays={storage.minHistoryDays} />
      </dl>
    </section>
  );
}

/** A satellite's audio on the hub, and the free space its own telemetry last reported (flagged when low). */
function StorageCell({ s }: { s: StoredSatellite | undefined }) {
  const t = useT();
  const fmt = useFormat();
  if (!s) return <span className="muted">—</span>;
  return (
    <span data-testid="satellite-storage">
      {fmt.bytes(s.storedBytes)}
      {s.freeBytes !== null ? (
        <>
          <br />
          <span className="small" title={fmt.dateTime(s.freeReportedAt)}>
            {t('storage.satFree', { bytes: fmt.bytes(s.freeBytes) })}
          </span>
          {s.lowFreeSpace ? <span className="pill warn">{t('storage.low')}</span> : null}
        </>
      ) : null}
    </span>
  );
}

/** One telemetry call per listed satellite (an indexed LIMIT query each): the first rows only. */
const TELEMETRY_ROWS = 50;

export default function Fleet() {
  const t = useT();
  const fmt = useFormat();
  const { team, role } = useSession();
  const tenantId = team?.id ?? null;
  const [showArchived, setShowArchived] = useState(false);
  const list = useSatellites(tenantId, showArchived, { refetchInterval: 30_000 });
  const storage = useSatelliteStorage(tenantId);
  const stored = new Map(storage.data?.satellites.map((s) => [s.id, s]) ?? []);

  const [name, setName] = useState('');
  const [creds, setCreds] = useState<{ reg: Registration; name: string } | null>(null);
  const register = useRegisterSatellite(tenantId, (reg, n) => {
    setCreds({ reg, name: n });
    setName('');
  });

  if (!team) return <NoTeam />;
  const mayRegister = atLeast(role, 'member');
  const mayMintKey = atLeast(role, 'admin');
  const empty = list.data?.satellites.length === 0 && !showArchived;

  function submit(e: FormEvent) {
    e.preventDefault();
    register.mutate(name.trim());
  }

  const config = creds
    ? JSON.stringify(
        {
          hub: location.origin,
          satelliteId: creds.reg.id,
          tenantId,
          username: creds.reg.mqtt.username,
          password: creds.reg.mqtt.password,
          brokerUrl: creds.reg.mqtt.brokerUrl,
          wsUrl: creds.reg.mqtt.wsUrl ?? null,
          apiKey: creds.reg.apiKey,
          name: creds.name,
        },
        null,
        2,
      )
    : '';

  return (
    <section aria-labelledby="fleet-title">
      <h1 id="fleet-title">{t('fleet.title')}</h1>
      <DemoModelNote tenantId={team.id} />
      {mayRegister ? (
        <p>
          <Link to="/record" data-testid="fleet-record-here">
            {t('fleet.recordHere')}
          </Link>
        </p>
      ) : null}
      {mayMintKey && list.data ? <SatelliteSetup key={String(empty)} tenantId={team.id} first={empty} /> : null}
      {mayRegister ? (
        <form onSubmit={submit} className="row card" aria-label={t('fleet.register')}>
          <Field label={t('fleet.name')} error={fieldError(register.error, 'name')}>
            {(id, describedBy) => (
              <input
                id={id}
                aria-describedby={describedBy}
                name="satelliteName"
                required
                maxLength={100}
                value={name}
                onChange={(e) => setName(e.target.value)}
              />
            )}
          </Field>
          <button type="submit" disabled={register.isPending}>
            {t('fleet.register')}
          </button>
          <ErrorText error={formError(register.error, ['name'])} />
        </form>
      ) : null}
      {creds ? (
        <div className="card credentials" role="region" aria-label={t('fleet.credentials')} data-testid="credentials">
          <h2>{t('fleet.credentials')}</h2>
          <p>{t('fleet.credentialsHint')}</p>
          <dl>
            <dt>{t('fleet.mqttPassword')}</dt>
            <dd>
              <code data-testid="mqtt-password">{creds.reg.mqtt.password}</code> <CopyButton text={creds.reg.mqtt.password} />
            </dd>
            <dt>{t('fleet.apiKey')}</dt>
            <dd>
              <code data-testid="api-key">{creds.reg.apiKey}</code> <CopyButton text={creds.reg.apiKey} />
            </dd>
          </dl>
          <h3>{t('fleet.config')}</h3>
          <pre>{config}</pre>
          <div className="row">
            <CopyButton text={config} />
            <Link to={`/fleet/${creds.reg.id}`}>{creds.name}</Link>
            <button type="button" className="secondary" onClick={() => setCreds(null)}>
              {t('common.close')}
            </button>
          </div>
        </div>
      ) : null}
      {storage.data ? <FleetStorage storage={storage.data} /> : <ErrorText error={storage.error} />}
      <label className="check">
        <input type="checkbox" checked={showArchived} onChange={(e) => setShowArchived(e.target.checked)} />
        {t('fleet.showArchived')}
      </label>
      <ErrorText error={list.error} />
      {list.isLoading ? <Loading /> : null}
      {list.data && list.data.satellites.length === 0 ? <p>{t('fleet.none')}</p> : null}
      <div className="table-wrap">
        <table>
          <thead>
            <tr>
              <th scope="col">{t('fleet.name')}</th>
              <th scope="col">{t('fleet.online')}</th>
              <th scope="col">{t('fleet.lastSeen')}</th>
              <th scope="col">{t('fleet.version')}</th>
              <th scope="col">{t('fleet.uptime')}</th>
              <th scope="col">{t('fleet.noise')}</th>
              <th scope="col">{t('fleet.outbox')}</th>
              <th scope="col">{t('fleet.filter')}</th>
              <th scope="col">{t('fleet.telemetry')}</th>
              <th scope="col">{t('storage.column')}</th>
            </tr>
          </thead>
          <tbody>
            {list.data?.satellites.map((s, i) => (
              <tr key={s.id} data-testid="satellite-row">
                <th scope="row">
                  <Link to={`/fleet/${s.id}`}>{s.name}</Link>
                  {s.archived ? <span className="badge">{t('fleet.archived')}</span> : null}
                </th>
                <td data-label={t('fleet.online')}>
                  <span className={`pill ${s.online ? 'ok' : 'off'}`}>{s.online ? t('fleet.online') : t('fleet.offline')}</span>
                </td>
                <td data-label={t('fleet.lastSeen')}>{s.lastSeenAt ? fmt.dateTime(s.lastSeenAt) : t('common.never')}</td>
                <td data-label={t('fleet.version')}>
                  {s.version ?? '—'}
                  {s.update_status ? (
                    <span className="muted small"> ({s.update_status === 'updating' ? t('fleet.updating') : s.update_status})</span>
                  ) : null}
                </td>
                <td data-label={t('fleet.uptime')}>{uptime(t, s.uptimeSeconds)}</td>
                <td data-label={t('fleet.noise')}>{fmt.fixed(s.noiseFloorRms, 4)}</td>
                <td className="small" data-label={t('fleet.outbox')}>
                  <OutboxCell reported={s.outboxStats} />
                </td>
                <td className="small" data-label={t('fleet.filter')}>
                  {stats(t, fmt, s.filterStats)}
                </td>
                <td data-label={t('fleet.telemetry')}>{i < TELEMETRY_ROWS ? <TelemetryCell id={s.id} /> : null}</td>
                <td data-label={t('storage.column')}>
                  <StorageCell s={stored.get(s.id)} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}
