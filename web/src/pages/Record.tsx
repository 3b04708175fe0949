/**
 * "Record with this device" (issue 38): a phone or laptop becomes a satellite of the team, with
 * no install. A member names the device; the page registers it (its device id kept in
 * localStorage, so a reload is the same satellite), keeps the one-time broker credentials in
 * this browser, and runs the protocol client of web/src/satellite/ while the page is open.
 * A lazy page: the MQTT client is loaded only here.
 */
import { useEffect, useRef, useState, type FormEvent } from 'react';
import { Link } from 'react-router';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { api, data } from '../api/client';
import { atLeast } from '../roles';
import { useT } from '../i18n';
import { useFormat, useSession } from '../session';
import { ErrorText, Field, fieldError, formError } from '../components/ui';
import { NoTeam } from '../components/NoTeam';
import { Outbox } from '../satellite/outbox';
import { PhoneSatellite, type PhoneStatus } from '../satellite/phone';

const DEVICE_ID_KEY = 'chorus.recorder.deviceId';
const DEVICE_KEY = 'chorus.recorder.device';

/** This browser's satellite: kept in localStorage (the broker password is shown by the hub only once). */
interface Device {
  satelliteId: string;
  tenantId: string;
  name: string;
  username: string;
  password: string;
  wsUrl: string;
}

function loadDevice(): Device | null {
  try {
    const d = JSON.parse(localStorage.getItem(DEVICE_KEY) ?? 'null') as Device | null;
    return d && typeof d.satelliteId === 'string' && typeof d.wsUrl === 'string' ? d : null;
  } catch {
    return null;
  }
}

function deviceId(): string {
  let id = localStorage.getItem(DEVICE_ID_KEY);
  if (!id) {
    id = `browser-${crypto.randomUUID()}`;
    localStorage.setItem(DEVICE_ID_KEY, id);
  }
  return id;
}

export default function Record() {
  const t = useT();
  const { team, role } = useSession();
  const [device, setDevice] = useState<Device | null>(loadDevice);
  if (!team) return <NoTeam />;
  return (
    <section aria-labelledby="record-title" className="record">
      <h1 id="record-title">{t('record.title')}</h1>
      <p>{t('record.intro')}</p>
      {!window.isSecureContext ? <p className="card banner">{t('record.insecure')}</p> : null}
      {device ? (
        <Recorder key={device.satelliteId} device={device} onForget={() => setDevice(null)} />
      ) : atLeast(role, 'member') ? (
        <RegisterDevice tenantId={team.id} onRegistered={setDevice} />
      ) : (
        <p>{t('record.membersOnly')}</p>
      )}
    </section>
  );
}

function RegisterDevice({ tenantId, onRegistered }: { tenantId: string; onRegistered: (d: Device) => void }) {
  const t = useT();
  const [name, setName] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [pending, setPending] = useState(false);

  async function submit(e: FormEvent) {
    e.preventDefault();
    setPending(true);
    setError(null);
    try {
      const reg = await data(api.POST('/api/satellites', { body: { tenantId, name: name.trim(), deviceId: deviceId() } }));
      if (!reg.mqtt.wsUrl) throw new Error(t('record.noWebSocket'));
      const d: Device = {
        satelliteId: reg.id,
        tenantId,
        name: name.trim(),
        username: reg.mqtt.username,
        password: reg.mqtt.password,
        wsUrl: reg.mqtt.wsUrl,
      };
      localStorage.setItem(DEVICE_KEY, JSON.stringify(d));
      onRegistered(d);
    } catch (err) {
      setError(err);
    } finally {
      setPending(false);
    }
  }

  return (
    <form onSubmit={submit} className="card" aria-label={t('record.register')}>
      <Field label={t('record.deviceName')} error={fieldError(error, 'name')}>
        {(id, describedBy) => (
          <input
            id={id}
            aria-describedby={describedBy}
            name="deviceName"
            required
            maxLength={100}
            value={name}
            onChange={(e) => setName(e.target.value)}
          />
        )}
      </Field>
      <button type="submit" disabled={pending}>
        {t('record.register')}
      </button>
      <ErrorText error={formError(error, ['name'])} />
    </form>
  );
}

function Recorder({ device, onForget }: { device: Device; onForget: () => void }) {
  const t = useT();
  const fmt = useFormat();
  const [status, setStatus] = useState<PhoneStatus | null>(null);
  const [error, setError] = useState<unknown>(null);
  const satellite = useRef<PhoneSatellite | null>(null);

  useEffect(() => {
    let closed = false;
    let sat: PhoneSatellite | null = null;
    let outbox: Outbox | null = null;
    // Status arrives with every audio frame; the page shows at most one change per animation frame.
    let frame = 0;
    let latest: PhoneStatus | null = null;
    const show = (s: PhoneStatus) => {
      latest = s;
      if (!frame) frame = requestAnimationFrame(() => ((frame = 0), setStatus(latest)));
    };
    void Outbox.open()
      .then((o) => {
        outbox = o;
        if (closed) return o.close();
        sat = new PhoneSatellite(device, o, show);
        satellite.current = sat;
        sat.connect();
      })
      .catch(setError);
    return () => {
      closed = true;
      cancelAnimationFrame(frame);
      satellite.current = null;
      void (sat?.close() ?? Promise.resolve()).finally(() => outbox?.close());
    };
  }, [device]);

  async function start() {
    setError(null);
    try {
      await satellite.current?.startRecording();
    } catch (err) {
      setError(err);
    }
  }

  function forget() {
    localStorage.removeItem(DEVICE_KEY);
    onForget();
  }

  const s = status;
  return (
    <div className="card" data-testid="recorder">
      <h2>
        <Link to={`/fleet/${device.satelliteId}`}>{device.name}</Link>
      </h2>
      <dl>
        <dt>{t('record.connection')}</dt>
        <dd data-testid="record-connection" data-connected={s?.connected ? 'yes' : 'no'}>
          <span className={`pill ${s?.connected ? 'ok' : 'off'}`}>{s?.connected ? t('fleet.online') : t('fleet.offline')}</span>
        </dd>
        <dt>{t('record.queue')}</dt>
        <dd data-testid="record-queue">{s?.queue ?? 0}</dd>
        <dt>{t('record.sent')}</dt>
        <dd>
          <span data-testid="record-recorded">{s?.recorded ?? 0}</span> / <span data-testid="record-acked">{s?.acked ?? 0}</span>
        </dd>
        <dt>{t('record.level')}</dt>
        <dd>
          <meter data-testid="record-level" min={0} max={1} low={0.5} high={0.9} value={Math.min(1, Math.sqrt(s?.level ?? 0))} />
        </dd>
        <dt>{t('record.position')}</dt>
        <dd data-testid="record-position">
          {s?.position ? `${fmt.fixed(s.position.latitude, 4)}, ${fmt.fixed(s.position.longitude, 4)}` : t('record.noPosition')}
        </dd>
        <dt>{t('record.screen')}</dt>
        <dd>{s?.wakeLock ? t('record.screenOn') : t('record.screenMayLock')}</dd>
        {s?.live ? (
          <>
            <dt>{t('record.live')}</dt>
            <dd>{t('record.liveOn')}</dd>
          </>
        ) : null}
      </dl>
      <div className="row">
        {s?.recording ? (
          <button type="button" onClick={() => void satellite.current?.stopRecording()}>
            {t('record.stop')}
          </button>
        ) : (
          <button type="button" onClick={() => void start()} disabled={!s}>
            {t('record.start')}
          </button>
        )}
        <button type="button" className="secondary" onClick={forget} disabled={s?.recording}>
          {t('record.forget')}
        </button>
      </div>
      <ErrorText error={error} />
      {s?.lastMessage ? <p className="muted small">{s.lastMessage}</p> : null}
      <h3>{t('record.detections')}</h3>
      <RecentDetections device={device} status={s} />
    </div>
  );
}

const SHOWN = 10;

/**
 * The satellite's last detections: the hub's list, fetched again on each `detection` message and
 * each reconnect (a message published while the phone was offline is not delivered later), with
 * the messages themselves shown until the list has them.
 */
function RecentDetections({ device, status }: { device: Device; status: PhoneStatus | null }) {
  const t = useT();
  const fmt = useFormat();
  const heard = status?.detections ?? [];
  const listed = useQuery({
    queryKey: ['record-detections', device.satelliteId, heard[0]?.id ?? null, status?.connected ?? false],
    queryFn: () =>
      data(
        api.GET('/api/detections', {
          params: { query: { tenantId: device.tenantId, satelliteId: device.satelliteId, sortBy: 'date', sortDir: 'desc', limit: SHOWN } },
        }),
      ),
    refetchInterval: 30_000,
    placeholderData: keepPreviousData,
  });
  const rows = [
    ...(listed.data?.detections ?? []).map((d) => ({ id: d.id, name: d.commonName ?? d.scientificName, at: d.detectedAt })),
    ...heard.map((d) => ({ id: d.id, name: d.commonName, at: d.detectedAt })),
  ];
  const shown = rows.filter((r, i) => rows.findIndex((x) => x.id === r.id) === i).slice(0, SHOWN);
  if (!shown.length) return <p className="muted">{t('record.noDetections')}</p>;
  return (
    <ul data-testid="record-detections">
      {shown.map((d) => (
        <li key={d.id}>
          <Link to={`/detections/${d.id}`}>{d.name}</Link> <span className="muted small">{fmt.dateTime(d.at)}</span>
        </li>
      ))}
    </ul>
  );
}
