/** The hub admin's species photo cache: statistics, retry of failed downloads, a re-crop of every photo, and clearing it. */
import { useImageCacheActions, useImageCacheStats } from '../../api/hooks/species-images';
import { useT } from '../../i18n';
import { useFormat } from '../../session';
import { ErrorText, Loading } from '../ui';

export function ImageCache() {
  const t = useT();
  const fmt = useFormat();
  const stats = useImageCacheStats();
  const { clear, retry, recrop } = useImageCacheActions();
  const s = stats.data;
  return (
    <div data-testid="image-cache">
      {stats.isLoading ? <Loading /> : null}
      <ErrorText error={stats.error ?? clear.error ?? retry.error ?? recrop.error} />
      {s ? (
        <dl className="stats">
          <dt>{t('imageCache.photos')}</dt>
          <dd data-testid="image-cache-photos">{s.photos}</dd>
          <dt>{t('imageCache.species')}</dt>
          <dd>
            {t('imageCache.byStatus', {
              ready: s.species.ready,
              pending: s.species.pending,
              failed: s.species.failed,
              none: s.species.none,
            })}
          </dd>
          <dt>{t('imageCache.bytes')}</dt>
          <dd>{t('imageCache.sizes', { original: fmt.bytes(s.originalBytes), display: fmt.bytes(s.displayBytes) })}</dd>
          <dt>{t('imageCache.awaiting')}</dt>
          <dd>{s.awaitingAnalysis}</dd>
          <dt>{t('imageCache.providers')}</dt>
          <dd>{s.providers.length > 0 ? s.providers.join(', ') : t('imageCache.off')}</dd>
        </dl>
      ) : null}
      <div className="actions">
        <button type="button" onClick={() => retry.mutate()} disabled={retry.isPending}>
          {t('imageCache.retry')}
        </button>
        <button type="button" onClick={() => recrop.mutate()} disabled={recrop.isPending}>
          {t('imageCache.recrop')}
        </button>
        <button
          type="button"
          className="danger"
          onClick={() => {
            if (window.confirm(t('imageCache.confirmClear'))) clear.mutate();
          }}
          disabled={clear.isPending}
        >
          {t('imageCache.clear')}
        </button>
      </div>
      {retry.data ? <p role="status">{t('imageCache.retried', { n: retry.data.queued })}</p> : null}
      {recrop.data ? <p role="status">{t('imageCache.recropStarted', { n: recrop.data.photos })}</p> : null}
      {clear.data ? <p role="status">{t('imageCache.cleared', { n: clear.data.photos })}</p> : null}
    </div>
  );
}
