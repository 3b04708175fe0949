/**
 * A team's public page at /t/:slug (issue 20): anyone may open it without signing in, in the
 * visitor's language (species names too; ?lang= picks another), with the team's species photos
 * and their credits. Link previews in chat apps come from the hub, which answers bots at this
 * address with the page's Open Graph HTML.
 */
import { useState } from 'react';
import { Link, useParams, useSearchParams } from 'react-router';
import { usePublicTeamPage, type PublicTeamPage } from '../api/hooks/public-pages';
import { usePublicDay } from '../api/hooks/day';
import { DayGrid, DayNav } from '../components/DayGrid';
import { useLang, useT } from '../i18n';
import { EmptyNote, ErrorText, Loading } from '../components/ui';

export function PublicTeam() {
  const t = useT();
  const uiLang = useLang();
  const { slug = '' } = useParams();
  const [search] = useSearchParams();
  const lang = search.get('lang') || uiLang;
  const q = usePublicTeamPage(slug, lang);
  const notFound = (q.error as { status?: number } | null)?.status === 404;
  return (
    <main className="narrow public-team" id="main">
      {q.isLoading ? <Loading /> : null}
      {notFound ? <p className="card">{t('pub.notFound')}</p> : <ErrorText error={q.error} />}
      {q.data ? <PageBody page={q.data} /> : null}
      {q.data ? <PublicDay slug={slug} lang={lang} /> : null}
    </main>
  );
}

/** The day at a glance (issue 36): the hub leaves sensitive species out, or gives them as a day total only. */
function PublicDay({ slug, lang }: { slug: string; lang: string }) {
  const t = useT();
  const [date, setDate] = useState<string | null>(null);
  const q = usePublicDay(slug, date, lang);
  const g = q.data;
  return (
    <section className="card" aria-labelledby="pub-day" data-testid="public-day">
      <h2 id="pub-day">{t('day.title')}</h2>
      <ErrorText error={q.error} />
      {g ? (
        <>
          <DayNav grid={g} onGo={(d) => setDate(d && d !== g.today ? d : null)} />
          <p className="muted">{t('day.summary', { calls: g.total, species: g.species.length })}</p>
          {g.species.length === 0 ? <EmptyNote>{t('day.none')}</EmptyNote> : <DayGrid grid={g} />}
        </>
      ) : null}
    </section>
  );
}

function PageBody({ page }: { page: PublicTeamPage }) {
  const t = useT();
  const lang = useLang();
  const day = (d: string) => new Date(`${d}T12:00:00Z`).toLocaleDateString(lang, { day: 'numeric', month: 'short', timeZone: 'UTC' });
  const max = Math.max(1, ...page.dailyTotals.map((d) => d.detections));
  return (
    <>
      <header className="card">
        <h1>{page.name}</h1>
        {page.description ? <p>{page.description}</p> : null}
        <p className="muted">{t('pub.since', { date: new Date(page.since).toLocaleDateString(lang) })}</p>
        <dl className="public-counts">
          <div>
            <dt>{t('pub.species')}</dt>
            <dd data-testid="count-species">{page.counts.species}</dd>
          </div>
          <div>
            <dt>{t('pub.detections')}</dt>
            <dd data-testid="count-detections">{page.counts.detections}</dd>
          </div>
          <div>
            <dt>{t('pub.devices')}</dt>
            <dd data-testid="count-devices">{page.counts.devices}</dd>
          </div>
        </dl>
        {page.join ? (
          <p>
            <Link to="/teams">{page.join.policy === 'open' ? t('pub.joinOpen') : t('pub.joinRequest')}</Link>
          </p>
        ) : null}
      </header>

      <section className="card" aria-labelledby="pub-top">
        <h2 id="pub-top">{t('pub.topSpecies')}</h2>
        {page.topSpecies.length === 0 ? <EmptyNote>{t('pub.none')}</EmptyNote> : null}
        <ul className="public-species">
          {page.topSpecies.map((s) => (
            <li key={s.code}>
              {s.photo ? (
                <figure>
                  <img src={s.photo.url} alt={s.commonName} width={128} height={128} loading="lazy" />
                  <figcaption data-testid="photo-credit">
                    {t('pub.photo')}{' '}
                    {s.photo.sourceUrl ? (
                      <a href={s.photo.sourceUrl} rel="noopener noreferrer" target="_blank">
                        {s.photo.credit}
                      </a>
                    ) : (
                      s.photo.credit
                    )}{' '}
                    (
                    {s.photo.licenceUrl ? (
                      <a href={s.photo.licenceUrl} rel="noopener noreferrer license" target="_blank">
                        {s.photo.licence}
                      </a>
                    ) : (
                      s.photo.licence
                    )}
                    )
                  </figcaption>
                </figure>
              ) : null}
              <strong>{s.commonName}</strong> <em>{s.scientificName}</em> · {t('pub.detectionCount', { n: s.detections })}
            </li>
          ))}
        </ul>
      </section>

      <section className="card" aria-labelledby="pub-daily">
        <h2 id="pub-daily">{t('pub.daily')}</h2>
        <div
          className="public-bars"
          role="img"
          aria-label={t('pub.dailyLabel', { n: page.dailyTotals.reduce((a, d) => a + d.detections, 0) })}
        >
          {page.dailyTotals.map((d) => (
            <span key={d.date} title={`${day(d.date)}: ${d.detections}`} style={{ height: `${Math.round((d.detections / max) * 100)}%` }} />
          ))}
        </div>
      </section>

      <section className="card" aria-labelledby="pub-firsts">
        <h2 id="pub-firsts">{t('pub.firsts')}</h2>
        {page.recentFirsts.length === 0 ? <EmptyNote>{t('pub.none')}</EmptyNote> : null}
        <ul>
          {page.recentFirsts.map((d) => (
            <li key={d.date}>
              <time dateTime={d.date}>{day(d.date)}</time>: {d.species.map((s) => s.commonName).join(', ')}
            </li>
          ))}
        </ul>
      </section>

      {page.towns && page.towns.length > 0 ? (
        <section className="card" aria-labelledby="pub-towns">
          <h2 id="pub-towns">{t('pub.towns')}</h2>
          <p>{page.towns.join(', ')}</p>
        </section>
      ) : null}
    </>
  );
}
