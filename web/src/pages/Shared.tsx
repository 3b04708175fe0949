/**
 * The public page a share link opens: species, time, confidence, badges and the audio, with the
 * hub's name and the place generalised by the hub (issue 23); nothing about the team. A visitor
 * has no preferences here, so texts, the date and the numbers follow the browser's language.
 */
import { useMemo } from 'react';
import { useParams } from 'react-router';
import { useSharedDetection, type SharedDetection } from '../api/hooks/share';
import { pickLang, translator, type T } from '../i18n';
import { ErrorText, Loading } from '../components/ui';

/** The browser's language tags, best first; "en" when it names none. */
const visitorLocales = (): string[] => {
  const list = typeof navigator === 'undefined' ? [] : [...(navigator.languages ?? []), navigator.language];
  return list.filter(Boolean).length ? list.filter(Boolean) : ['en'];
};

/** "52° N, 10° E" in the visitor's digits. */
function area(t: T, place: NonNullable<SharedDetection['place']>, locale: string): string {
  const n = new Intl.NumberFormat(locale, { maximumFractionDigits: 0 });
  const lat = place.latitude ?? 0;
  const lon = place.longitude ?? 0;
  return t('shared.heardAround', {
    lat: `${n.format(Math.abs(lat))}° ${t(lat < 0 ? 'shared.south' : 'shared.north')}`,
    lon: `${n.format(Math.abs(lon))}° ${t(lon < 0 ? 'shared.west' : 'shared.east')}`,
  });
}

export function Shared() {
  const { id = '', token = '' } = useParams();
  const q = useSharedDetection(id, token);
  const locales = useMemo(visitorLocales, []);
  const t = useMemo(() => translator(pickLang(locales[0])), [locales]);
  const when = useMemo(() => new Intl.DateTimeFormat(locales, { dateStyle: 'long', timeStyle: 'short' }), [locales]);
  // A sensitive species is shared by the day only (issue 33): its UTC day, without a time.
  const day = useMemo(() => new Intl.DateTimeFormat(locales, { dateStyle: 'long', timeZone: 'UTC' }), [locales]);
  const d = q.data;
  const place = d?.place ? (d.place.name ? t('shared.heardIn', { place: d.place.name }) : area(t, d.place, locales[0])) : null;
  return (
    <main className="narrow" id="main" lang={pickLang(locales[0])}>
      {q.isLoading ? <Loading /> : null}
      <ErrorText error={q.error} />
      {d ? (
        <article className="card shared">
          <p className="small" data-testid="shared-hub">
            {t('shared.on', { hub: d.hubName })}
          </p>
          <h1 className="wrap">{d.commonName}</h1>
          <p>
            <em>{d.scientificName}</em>
          </p>
          <p>
            <time dateTime={d.detectedAt} data-testid="shared-when">
              {(d.timePrecision === 'day' ? day : when).format(new Date(d.detectedAt))}
            </time>{' '}
            · {t('det.confidence')} {new Intl.NumberFormat(locales, { style: 'percent' }).format(d.calibrated_confidence)}
          </p>
          <p data-testid="shared-place">{place ?? t('shared.noPlace')}</p>
          <p>
            {d.isFirstOfSeason ? <span className="badge season">{t('det.badge.firstOfSeason')}</span> : null}
            {d.isRare ? <span className="badge rare">{t('det.badge.rare')}</span> : null}
          </p>
          {d.spectrogramUrl ? <img src={new URL(d.spectrogramUrl).pathname} alt="" style={{ maxWidth: '100%' }} /> : null}
          {d.audioUrl ? <audio controls preload="none" src={new URL(d.audioUrl).pathname} aria-label={t('det.play')} /> : null}
          {d.modelAttribution ? (
            <p className="small muted" data-testid="shared-model-attribution">
              {d.modelAttribution}
            </p>
          ) : null}
        </article>
      ) : null}
    </main>
  );
}
