/** How far verification got: the progress of the window, who verified most, and how often each species was right. */
import { useMemo } from 'react';
import { useLeaderboard, useSpeciesAccuracy, useVerification } from '../../api/hooks/stats';
import { useT } from '../../i18n';
import { ErrorText, Loading } from '../../components/ui';
import { SpeciesLink, StatsFilters, Tile, ZoneNote, useNamer, useStatsFilter, useStatsFormat } from './common';

export function VerificationView() {
  const t = useT();
  const fmt = useStatsFormat();
  const filter = useStatsFilter();
  const progress = useVerification(filter);
  const board = useLeaderboard(filter);
  const accuracy = useSpeciesAccuracy(filter);
  const v = progress.data;
  const species = accuracy.data?.species;
  const names = useNamer(useMemo(() => (species ?? []).map((s) => s.code), [species]));
  const share = (n: number) => fmt.pct(v && v.total > 0 ? n / v.total : 0);
  return (
    <>
      <StatsFilters />
      <ZoneNote answer={v} />
      <ErrorText error={progress.error ?? board.error ?? accuracy.error} />
      {progress.isLoading ? <Loading /> : null}
      {v ? (
        <>
          <h2>{t('stats.verification')}</h2>
          <div className="stat-tiles">
            <Tile label={t('stats.verified')} value={fmt.pct(v.progress)} testId="tile-progress" />
            <Tile label={t('stats.confirmed')} value={fmt.int(v.confirmed)} testId="tile-confirmed" />
            <Tile label={t('stats.rejected')} value={fmt.int(v.rejected)} testId="tile-rejected" />
            <Tile label={t('stats.pendingReview')} value={fmt.int(v.pendingReview)} />
            <Tile label={t('stats.unverified')} value={fmt.int(v.unverified)} />
          </div>
          <div
            className="meter"
            role="img"
            aria-label={t('stats.verification.summary', {
              confirmed: fmt.int(v.confirmed),
              rejected: fmt.int(v.rejected),
              total: v.total,
            })}
          >
            <span className="confirmed" style={{ width: share(v.confirmed) }} />
            <span className="rejected" style={{ width: share(v.rejected) }} />
            <span className="pending" style={{ width: share(v.pendingReview) }} />
          </div>
        </>
      ) : null}
      <div className="grid-2">
        <div>
          <h2>{t('stats.leaderboard')}</h2>
          {board.data && board.data.contributors.length === 0 ? <p>{t('stats.noVotes')}</p> : null}
          {board.data && board.data.contributors.length > 0 ? (
            <div className="table-wrap">
              <table data-testid="leaderboard">
                <thead>
                  <tr>
                    <th scope="col">#</th>
                    <th scope="col">{t('stats.person')}</th>
                    <th scope="col">{t('stats.votes')}</th>
                    <th scope="col">{t('stats.confirms')}</th>
                    <th scope="col">{t('stats.rejects')}</th>
                    <th scope="col">{t('stats.unsure')}</th>
                  </tr>
                </thead>
                <tbody>
                  {board.data.contributors.map((c, i) => (
                    <tr key={c.userId} data-testid="leaderboard-row">
                      <td>{i + 1}</td>
                      <th scope="row">{c.name}</th>
                      <td>{fmt.int(c.votes)}</td>
                      <td>{fmt.int(c.confirms)}</td>
                      <td>{fmt.int(c.rejects)}</td>
                      <td>{fmt.int(c.unsure)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          ) : null}
        </div>
        <div>
          <h2>{t('stats.accuracy')}</h2>
          <p className="muted small">{t('stats.accuracy.hint')}</p>
          {species && species.length === 0 ? <p>{t('stats.noVerified')}</p> : null}
          {species && species.length > 0 ? (
            <div className="table-wrap">
              <table data-testid="species-accuracy">
                <thead>
                  <tr>
                    <th scope="col">{t('stats.species')}</th>
                    <th scope="col">{t('stats.confirmed')}</th>
                    <th scope="col">{t('stats.rejected')}</th>
                    <th scope="col">{t('stats.accuracyCol')}</th>
                  </tr>
                </thead>
                <tbody>
                  {species.map((s) => (
                    <tr key={s.code} data-testid="accuracy-row">
                      <th scope="row">
                        <SpeciesLink code={s.code} name={s.commonName} names={names} />
                      </th>
                      <td>{fmt.int(s.confirmed)}</td>
                      <td>{fmt.int(s.rejected)}</td>
                      <td data-testid="accuracy">{fmt.pct(s.accuracy)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          ) : null}
        </div>
      </div>
    </>
  );
}
