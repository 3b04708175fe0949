/** The public page a share link opens: species, time, confidence, badges and the audio; nothing about the team. */
import { useParams } from 'react-router';
import { useSharedDetection } from '../api/hooks/share';
import { useT } from '../i18n';
import { ErrorText, Loading } from '../components/ui';

export function Shared() {
  const t = useT();
  const { id = '', token = '' } = useParams();
  const q = useSharedDetection(id, token);
  return (
    <main className="narrow" id="main">
      {q.isLoading ? <Loading /> : null}
      <ErrorText error={q.error} />
      {q.data ? (
        <article className="card">
          <h1>{q.data.commonName}</h1>
          <p>
            <em>{q.data.scientificName}</em>
          </p>
          <p>
            {new Date(q.data.detectedAt).toLocaleString()} · {t('det.confidence')} {Math.round(q.data.calibrated_confidence * 100)}%
          </p>
          <p>
            {q.data.isFirstOfSeason ? <span className="badge season">{t('det.badge.firstOfSeason')}</span> : null}
            {q.data.isRare ? <span className="badge rare">{t('det.badge.rare')}</span> : null}
          </p>
          {q.data.spectrogramUrl ? <img src={new URL(q.data.spectrogramUrl).pathname} alt="" style={{ maxWidth: '100%' }} /> : null}
          <audio controls preload="none" src={new URL(q.data.audioUrl).pathname} aria-label={t('det.play')} />
        </article>
      ) : null}
    </main>
  );
}
