/**
 * Each satellite's recording of one observation (issue 35 point 3): where several recorders heard
 * the call, the detail page lists them, the listed one first, each with its own player.
 */
import { Link } from 'react-router';
import { useT } from '../i18n';
import { useFormat } from '../session';

export interface Recording {
  detectionId: string;
  satelliteId: string;
  satelliteName: string | null;
  audioChunkId: string;
  confidence: number;
  detectedAt: string;
  lead: boolean;
}

export function ObservationRecordings({ recordings, current }: { recordings: readonly Recording[]; current: string }) {
  const t = useT();
  const fmt = useFormat();
  if (recordings.length < 2) return null;
  return (
    <section aria-labelledby="dd-recordings">
      <h2 id="dd-recordings">{t('dd.recordings')}</h2>
      <p className="muted small">{t('det.badge.recorders', { n: recordings.length })}</p>
      <ul data-testid="recordings">
        {recordings.map((r) => (
          <li key={r.detectionId} data-testid="recording">
            {r.detectionId === current ? (
              <strong>{r.satelliteName ?? r.satelliteId}</strong>
            ) : (
              <Link to={`/detections/${r.detectionId}`}>{r.satelliteName ?? r.satelliteId}</Link>
            )}{' '}
            · {fmt.dateTime(r.detectedAt)} · {t('det.raw')} {fmt.pct(r.confidence)}
            {r.lead ? <span className="badge">{t('dd.recordingLead')}</span> : null}
            <div>
              <audio
                controls
                preload="none"
                src={`/api/audio/${encodeURIComponent(r.audioChunkId)}`}
                aria-label={`${t('det.play')} ${r.satelliteName ?? r.satelliteId}`}
              />
            </div>
          </li>
        ))}
      </ul>
    </section>
  );
}
