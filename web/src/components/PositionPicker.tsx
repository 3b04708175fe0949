/**
 * A satellite's position on its page: a click on the bundled offline map (raster tiles under it
 * only when map_tile_url is set), this device's GPS, or typed coordinates; saved with
 * PUT /satellites/:id/position. Each click re-centres the map around the chosen place, so a
 * first click on the world finds the region and a second one places the satellite in it.
 */
import { useEffect, useMemo, useRef, useState, type FormEvent } from 'react';
import { useSatelliteMutations } from '../api/hooks/satellites';
import { useEffectiveSettings } from '../api/hooks/settings';
import { useT } from '../i18n';
import { useToast } from '../session';
import { WorldMap, type MapPoint } from './charts/WorldMap';
import { ErrorText, Field, fieldError, formError } from './ui';

/** Five decimals: about a metre, finer than any microphone placement needs. */
const round = (x: number) => Math.round(x * 1e5) / 1e5;

/** What the input shows for a coordinate; typed text is kept as typed until saved. */
const text = (x: number | null) => (x === null ? '' : String(x));

/** The team's tile URL template, or null: the map then stays fully offline. */
function useTileUrl(tenantId: string): string | null {
  const eff = useEffectiveSettings({ tenantId }, !!tenantId);
  const v = eff.data?.settings.find((s) => s.key === 'map_tile_url')?.value;
  return typeof v === 'string' && v.trim() !== '' ? v.trim() : null;
}

export function PositionPicker({
  satellite,
  manage,
}: {
  satellite: { id: string; tenantId: string; name: string; latitude: number | null; longitude: number | null };
  manage: boolean;
}) {
  const t = useT();
  const toast = useToast();
  const tileUrl = useTileUrl(satellite.tenantId);
  const { position } = useSatelliteMutations(satellite.id);
  const [lat, setLat] = useState(text(satellite.latitude));
  const [lon, setLon] = useState(text(satellite.longitude));
  // The saved position may change while the form is open (this form's save read back, another
  // person, a GPS fix): the form follows it, except in a field the person is typing in (a late
  // read-back used to remount the form and put the old latitude back under a new longitude).
  const seeded = useRef({ lat, lon });
  useEffect(() => {
    const prev = seeded.current;
    const next = { lat: text(satellite.latitude), lon: text(satellite.longitude) };
    if (next.lat === prev.lat && next.lon === prev.lon) return;
    seeded.current = next;
    setLat((cur) => (cur === prev.lat ? next.lat : cur));
    setLon((cur) => (cur === prev.lon ? next.lon : cur));
  }, [satellite.latitude, satellite.longitude]);
  const [locating, setLocating] = useState(false);
  const [geoError, setGeoError] = useState<string | null>(null);
  const [typeError, setTypeError] = useState<string | null>(null);

  const latN = lat.trim() === '' ? null : Number(lat.replace(',', '.'));
  const lonN = lon.trim() === '' ? null : Number(lon.replace(',', '.'));
  const valid = latN !== null && lonN !== null && Number.isFinite(latN) && Number.isFinite(lonN);
  const points = useMemo<MapPoint[]>(
    () => (valid ? [{ id: satellite.id, latitude: latN, longitude: lonN, kind: 'satellite', title: satellite.name }] : []),
    [valid, latN, lonN, satellite.id, satellite.name],
  );

  function place(latitude: number, longitude: number) {
    setLat(String(round(latitude)));
    setLon(String(round(longitude)));
  }

  function locate() {
    setGeoError(null);
    if (!('geolocation' in navigator)) {
      setGeoError(t('notes.position.unavailable'));
      return;
    }
    setLocating(true);
    navigator.geolocation.getCurrentPosition(
      (p) => {
        setLocating(false);
        place(p.coords.latitude, p.coords.longitude);
      },
      () => {
        setLocating(false);
        setGeoError(t('notes.position.refused'));
      },
      { enableHighAccuracy: true, timeout: 15_000 },
    );
  }

  function save(body: { latitude: number | null; longitude: number | null }) {
    position.mutate(body, { onSuccess: () => toast(t('position.saved')) });
  }

  function submit(e: FormEvent) {
    e.preventDefault();
    // Text that is no number never reaches the hub (JSON would turn NaN into null: a cleared position).
    const bad = (x: number | null) => x !== null && !Number.isFinite(x);
    if (bad(latN) || bad(lonN) || (latN === null) !== (lonN === null)) {
      setTypeError(t('position.incomplete'));
      return;
    }
    setTypeError(null);
    save({ latitude: latN, longitude: lonN });
  }

  return (
    <section className="card position" aria-labelledby="position-title" data-testid="position-picker">
      <h2 id="position-title">{t('position.title')}</h2>
      {manage ? <p className="muted small">{t('position.hint')}</p> : null}
      <WorldMap points={points} title={t('position.map')} tileUrl={tileUrl} onPick={manage ? place : undefined} />
      {!manage ? (
        <p data-testid="position-shown">
          {satellite.latitude !== null && satellite.longitude !== null
            ? `${satellite.latitude}, ${satellite.longitude}`
            : t('position.none')}
        </p>
      ) : (
        <form className="row" noValidate onSubmit={submit} aria-label={t('position.title')}>
          <Field label={t('position.latitude')} error={fieldError(position.error, 'latitude')}>
            {(id, describedBy) => (
              <input
                id={id}
                aria-describedby={describedBy}
                inputMode="decimal"
                size={10}
                value={lat}
                onChange={(e) => setLat(e.target.value)}
              />
            )}
          </Field>
          <Field label={t('position.longitude')} error={fieldError(position.error, 'longitude')}>
            {(id, describedBy) => (
              <input
                id={id}
                aria-describedby={describedBy}
                inputMode="decimal"
                size={10}
                value={lon}
                onChange={(e) => setLon(e.target.value)}
              />
            )}
          </Field>
          <button type="submit" disabled={position.isPending}>
            {t('common.save')}
          </button>
          <button type="button" className="secondary" onClick={locate} disabled={locating}>
            {locating ? t('notes.position.locating') : t('position.mine')}
          </button>
          {satellite.latitude !== null ? (
            <button
              type="button"
              className="secondary"
              disabled={position.isPending}
              onClick={() => {
                setLat('');
                setLon('');
                save({ latitude: null, longitude: null });
              }}
            >
              {t('position.clear')}
            </button>
          ) : null}
          {(geoError ?? typeError) ? <p className="error">{geoError ?? typeError}</p> : null}
          <ErrorText error={formError(position.error, ['latitude', 'longitude'])} />
        </form>
      )}
    </section>
  );
}
