/**
 * Storage in sight (issue 23): the disk the hub writes to (free space, growth, days left) with
 * its warning, shared by the Fleet page and the System area.
 */
import type { SatelliteStorage } from '../api/hooks/satellites';
import { useT } from '../i18n';
import { useFormat } from '../session';

export type HubDisk = SatelliteStorage['hub'];

/** The hub's storage warning: shown only when fewer days remain than the hub setting storage_warning_days. */
export function DiskWarning({ disk }: { disk: HubDisk }) {
  const t = useT();
  if (!disk.warning) return null;
  return (
    <p className="card banner" role="alert" data-testid="storage-warning">
      {t('storage.hubWarning', { days: disk.daysRemaining ?? '—', limit: disk.warningDays })}
      {disk.suggestedRetentionDays !== null ? (
        <span data-testid="retention-suggestion"> {t('storage.suggestRetention', { days: disk.suggestedRetentionDays })}</span>
      ) : null}
    </p>
  );
}

/** A growth rate per day, or "not enough history yet" before the hub gives one (issue 36 point 6). */
export function Growth({ bytes, windowDays, minHistoryDays }: { bytes: number | null; windowDays: number; minHistoryDays: number }) {
  const t = useT();
  const fmt = useFormat();
  if (bytes === null)
    return (
      <>
        {t('storage.noHistory')} <span className="muted small">({t('storage.noHistoryHint', { days: minHistoryDays })})</span>
      </>
    );
  return (
    <>
      {t('storage.perDay', { bytes: fmt.bytes(bytes) })}{' '}
      <span className="muted small">{t('storage.growthHint', { days: windowDays })}</span>
    </>
  );
}

/** Free space (or why it is unknown), growth per day and the days it lasts, as terms of a <dl>. */
export function DiskFacts({ disk, windowDays, minHistoryDays }: { disk: HubDisk; windowDays: number; minHistoryDays: number }) {
  const t = useT();
  const fmt = useFormat();
  const free =
    disk.freeBytes === null
      ? t(disk.freeUnknownReason === 'object_storage_s3' ? 'storage.unknown.s3' : 'storage.unknown.unavailable')
      : disk.totalBytes !== null
        ? t('storage.ofTotal', { free: fmt.bytes(disk.freeBytes), total: fmt.bytes(disk.totalBytes) })
        : fmt.bytes(disk.freeBytes);
  return (
    <>
      <dt>{t('storage.hubGrowth')}</dt>
      <dd data-testid="hub-growth">
        <Growth bytes={disk.growthBytesPerDay} windowDays={windowDays} minHistoryDays={minHistoryDays} />
      </dd>
      <dt>{t('storage.hubFree')}</dt>
      <dd data-testid="hub-free">{free}</dd>
      <dt>{t('storage.daysRemaining')}</dt>
      <dd data-testid="days-remaining">
        {disk.daysRemaining === null
          ? disk.freeBytes === null || disk.growthBytesPerDay === null
            ? '—'
            : t('storage.notGrowing')
          : t('storage.days', { days: disk.daysRemaining })}{' '}
        <span className="muted small">{t('storage.warnBelow', { days: disk.warningDays })}</span>
      </dd>
    </>
  );
}
