/**
 * The day at a glance (issue 36 point 1), the dashboard's home: what the team heard on one day of
 * its time zone, species × hour, the species heard most recently on top. A birder opening the
 * dashboard asks "what is singing today?" before anything else, as station software answers on
 * its first screen; the Detections list is one click away, and each cell opens it filtered to
 * that species and hour. The day lives in the URL (?date=), so yesterday can be linked.
 */
import { useMemo } from 'react';
import { Link, useSearchParams } from 'react-router';
import { useDay } from '../api/hooks/day';
import { useSpeciesPhotos } from '../api/hooks/species-images';
import { DayGrid, DayNav } from '../components/DayGrid';
import { NoTeam } from '../components/NoTeam';
import { SpeciesThumb } from '../components/SpeciesPhoto';
import { EmptyNote, ErrorText, Loading } from '../components/ui';
import { useT } from '../i18n';
import { useSession } from '../session';
import { useSpeciesNames } from '../species';

export default function Day() {
  const t = useT();
  const { team } = useSession();
  const [params, setParams] = useSearchParams();
  const date = params.get('date');
  const q = useDay(team?.id ?? null, date);
  const g = q.data;
  const codes = useMemo(() => g?.species.map((s) => s.code) ?? [], [g]);
  const names = useSpeciesNames(codes);
  const photos = useSpeciesPhotos(codes);
  if (!team) return <NoTeam />;

  const go = (d: string | null) => {
    const next = new URLSearchParams(params);
    if (d && d !== g?.today) next.set('date', d);
    else next.delete('date');
    setParams(next);
  };

  return (
    <section aria-labelledby="day-title">
      <div className="title-row">
        <h1 id="day-title">{t('day.title')}</h1>
        <Link to="/detections">{t('day.allDetections')}</Link>
      </div>
      <ErrorText error={q.error} />
      {g ? (
        <>
          <DayNav grid={g} onGo={go} />
          <p className="muted" data-testid="day-summary">
            {t('day.summary', { calls: g.total, species: g.species.length })} · {t('day.zone', { zone: g.timeZone })}
          </p>
          {g.species.length === 0 ? (
            <EmptyNote>{g.date === g.today ? t('day.noneToday') : t('day.none')}</EmptyNote>
          ) : (
            <DayGrid
              grid={g}
              linkCells
              nameOf={(s) => names(s.code, s.commonName).primary}
              photoOf={(s, name) => <SpeciesThumb photo={photos.byCode.get(s.code)} name={name} link={false} />}
            />
          )}
          <p className="muted small">{t('day.hint')}</p>
        </>
      ) : q.isLoading ? (
        <Loading />
      ) : null}
    </section>
  );
}
