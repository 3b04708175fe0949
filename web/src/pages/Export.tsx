/**
 * Exports (/export, members and up): pick a format birders submit to, narrow the detections
 * with the filters, look at the first rows and the total (and, for eBird, the species left
 * out), then download. A direct download is a plain link (the session cookie goes with a
 * same-origin GET); a large archive, or any export on request, runs as a background job listed
 * under "Recent exports" with its progress and, once done, its file until it expires.
 *
 * Submission formats (eBird, iNaturalist, Darwin Core, xeno-canto) start from confirmed
 * detections, and the preview says how many unconfirmed rows the file would still carry; the
 * formats that name a licence show the team's (issue 34).
 */
import { useMemo, useState, type FormEvent } from 'react';
import { Link, useSearchParams } from 'react-router';
import {
  EXPORT_CHOICES,
  exportUrl,
  LICENSED_CHOICES,
  MEDIA_CHOICES,
  previewOf,
  RECORDINGS_INLINE_MAX,
  SUBMISSION_CHOICES,
  useExportJobs,
  useExportPreview,
  useStartExport,
  type ExportChoice,
  type ExportFilters,
  type ExportJob,
  type ExportPreview,
  type SkippedSpecies,
  type VerificationStatus,
} from '../api/hooks/exports';
import type { Detection } from '../api/hooks/detections';
import { useSatellites } from '../api/hooks/satellites';
import { atLeast } from '../roles';
import { useT } from '../i18n';
import { useFormat, useSession } from '../session';
import { EmptyNote, ErrorText, Field, Loading } from '../components/ui';
import { FilterFields, readFilters } from '../components/exports/FilterFields';
import { presetWindow, type Preset } from '../dates';
import { useSpeciesNames } from '../species';
import { NoTeam } from '../components/NoTeam';
import { PublishAudioOption, PublishedRecordings } from '../components/exports/PublishedAudio';
import { usePublishesAudio } from '../api/hooks/published-audio';

const FILTER_KEYS = ['satelliteId', 'species', 'minConfidence', 'verificationStatus', 'category', 'start', 'end'] as const;

function filtersOf(params: URLSearchParams): ExportFilters {
  const get = (k: string) => params.get(k) || undefined;
  const min = get('minConfidence');
  return {
    satelliteId: get('satelliteId'),
    species: get('species'),
    minConfidence: min !== undefined && Number.isFinite(Number(min)) ? Number(min) : undefined,
    verificationStatus: get('verificationStatus') as VerificationStatus | undefined,
    category: get('category'),
    start: get('start'),
    end: get('end'),
  };
}

const clean = (f: ExportFilters): ExportFilters =>
  Object.fromEntries(Object.entries(f).filter(([, v]) => v !== undefined && v !== '')) as ExportFilters;

export default function Export() {
  const t = useT();
  const { team, role, me } = useSession();
  const tenantId = team?.id ?? null;
  const [params, setParams] = useSearchParams();
  // The choice answers the click at once (a controlled radio waiting for the URL would lag); the URL keeps it for reloads.
  const [what, setWhat] = useState<ExportChoice>(() =>
    (EXPORT_CHOICES as readonly string[]).includes(params.get('what') ?? '') ? (params.get('what') as ExportChoice) : 'csv',
  );
  const filters = useMemo(() => clean(filtersOf(params)), [params]);
  const filterKey = JSON.stringify(filters);
  const [counts, setCounts] = useState<'present' | 'calls'>('present');
  const [includeUnverified, setIncludeUnverified] = useState(false);
  const [background, setBackground] = useState(false);
  const [publishAudio, setPublishAudio] = useState(false);

  const allowed = atLeast(role, 'member');
  const satellites = useSatellites(allowed ? tenantId : null);
  const preview = useExportPreview(allowed ? tenantId : null, previewOf(what, includeUnverified), filters);
  const start = useStartExport(tenantId);
  const publishes = usePublishesAudio(allowed ? tenantId : null);

  if (!team) return <NoTeam />;
  if (!allowed) return <p className="card banner">{t('export.membersOnly')}</p>;

  function choose(c: ExportChoice) {
    setWhat(c);
    const next = new URLSearchParams(params);
    next.set('what', c);
    // What is submitted elsewhere starts from what people confirmed; the status filter can widen it.
    if (SUBMISSION_CHOICES.has(c) && !SUBMISSION_CHOICES.has(what) && !next.get('verificationStatus'))
      next.set('verificationStatus', 'confirmed');
    setParams(next, { replace: true });
  }

  function apply(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const f = readFilters(new FormData(e.currentTarget), true);
    const next = new URLSearchParams();
    next.set('what', what);
    for (const k of FILTER_KEYS) if (f[k] !== undefined) next.set(k, String(f[k]));
    setParams(next);
  }

  function applyPreset(p: Preset) {
    const { start: from, end } = presetWindow(p, new Date(), me.preferences.startOfWeek);
    const next = new URLSearchParams(params);
    next.set('start', from.toISOString());
    if (end) next.set('end', end.toISOString());
    else next.delete('end');
    setParams(next);
  }

  const options = { counts, includeUnverified, publishAudio: publishAudio && publishes === true };
  const fresh = preview.data && !preview.isPlaceholderData ? preview.data : null;
  const forcedBackground =
    fresh !== null && (fresh.background || (what === 'recording' && includeUnverified && fresh.total > RECORDINGS_INLINE_MAX));
  const inBackground = background || forcedBackground;
  const total = fresh ? fresh.total : null;

  return (
    <section aria-labelledby="export-title">
      <h1 id="export-title">{t('export.title')}</h1>
      <p className="muted">{t('export.intro')}</p>

      <fieldset className="card formats">
        <legend>{t('export.what')}</legend>
        {EXPORT_CHOICES.map((c) => (
          <div key={c} className="format">
            <label className="check">
              <input
                type="radio"
                name="what"
                value={c}
                checked={what === c}
                aria-describedby={`export-about-${c}`}
                onChange={() => choose(c)}
              />
              <strong>{t(`export.format.${c}`)}</strong>
            </label>
            <small className="muted" id={`export-about-${c}`}>
              {t(`export.about.${c}`)}
            </small>
          </div>
        ))}
      </fieldset>

      {what === 'checklist' ? (
        <Field label={t('export.counts')} hint={t('export.counts.hint')}>
          {(id) => (
            <select id={id} value={counts} onChange={(e) => setCounts(e.target.value as 'present' | 'calls')}>
              <option value="present">{t('export.counts.present')}</option>
              <option value="calls">{t('export.counts.calls')}</option>
            </select>
          )}
        </Field>
      ) : null}
      {what === 'recording' ? (
        <label className="check">
          <input type="checkbox" checked={includeUnverified} onChange={(e) => setIncludeUnverified(e.target.checked)} />
          {t('export.includeUnverified')}
        </label>
      ) : null}

      {MEDIA_CHOICES.has(what) ? <PublishAudioOption publishes={publishes} checked={publishAudio} onChange={setPublishAudio} /> : null}

      <details className="filters" open>
        <summary>{t('det.filters')}</summary>
        <form onSubmit={apply} key={filterKey} className="grid" aria-label={t('det.filters')}>
          <FilterFields values={filters} satellites={satellites.data?.satellites ?? []} onPreset={applyPreset} />
          <div className="row">
            <button type="submit">{t('det.apply')}</button>
            <button type="button" className="secondary" onClick={() => setParams(new URLSearchParams({ what }))}>
              {t('det.clear')}
            </button>
          </div>
        </form>
      </details>
      <ErrorText error={satellites.error} />

      {LICENSED_CHOICES.has(what) && preview.data ? <LicenseNote preview={preview.data} /> : null}

      <h2>{t('export.preview')}</h2>
      <ErrorText error={preview.error} />
      {preview.isLoading ? <Loading /> : null}
      {preview.data ? (
        <Preview
          rows={preview.data.rows}
          total={total}
          skipped={what === 'checklist' ? preview.data.skipped : undefined}
          unverifiedNote={what === 'recording' && !includeUnverified && !filters.verificationStatus}
          unconfirmed={SUBMISSION_CHOICES.has(what) ? preview.data.unverified : undefined}
        />
      ) : null}

      <div className="card">
        {forcedBackground ? (
          <p className="muted" role="note">
            {t('export.backgroundForced')}
          </p>
        ) : (
          <label className="check">
            <input type="checkbox" checked={background} onChange={(e) => setBackground(e.target.checked)} />
            {t('export.background')}
          </label>
        )}
        <div className="row">
          {inBackground ? (
            <button type="button" disabled={start.isPending} onClick={() => start.mutate(exportUrl(team.id, what, filters, options, true))}>
              {t('export.start')}
            </button>
          ) : (
            <a className="button" href={exportUrl(team.id, what, filters, options)} download data-testid="export-download">
              {t('export.download')}
            </a>
          )}
          {total === 0 ? <span className="muted small">{t('export.empty')}</span> : null}
        </div>
        <ErrorText error={start.error} />
        {start.isSuccess ? (
          <p className="muted small" role="status">
            {t('export.started')}
          </p>
        ) : null}
      </div>

      <h2>{t('export.jobs')}</h2>
      <Jobs tenantId={team.id} />
      {atLeast(role, 'admin') ? <PublishedRecordings tenantId={team.id} /> : null}
    </section>
  );
}

/** The team's licence, what it means for the file, where to change it, and GBIF's refusal when it applies. */
function LicenseNote({ preview }: { preview: ExportPreview }) {
  const t = useT();
  const l = preview.license;
  return (
    <div className="card" data-testid="export-license">
      <p>
        <strong>{t('export.license')}</strong>{' '}
        {l.url ? (
          <a href={l.url} target="_blank" rel="noreferrer">
            {l.name}
          </a>
        ) : (
          l.name
        )}
      </p>
      <p className="muted small">
        {t('export.license.about')} <Link to="/team">{t('export.license.change')}</Link>
      </p>
      {preview.warnings.map((w) => (
        <p key={w.code} className="banner" role="alert" data-testid="export-warning">
          {w.code === 'LICENSE_NOT_ACCEPTED_BY_GBIF' ? t('export.license.notGbif', { name: l.name }) : w.message}
        </p>
      ))}
    </div>
  );
}

function Preview({
  rows,
  total,
  skipped,
  unverifiedNote,
  unconfirmed,
}: {
  rows: Detection[];
  total: number | null;
  skipped: SkippedSpecies[] | undefined;
  unverifiedNote: boolean;
  unconfirmed: ExportPreview['unverified'];
}) {
  const t = useT();
  const fmt = useFormat();
  const speciesName = useSpeciesNames(useMemo(() => rows.map((d) => d.speciesCode), [rows]));
  return (
    <>
      <p data-testid="export-total" aria-live="polite">
        <strong>{total !== null ? t('export.total', { n: total }) : t('common.loading')}</strong>
        {total !== null && total > rows.length ? <span className="muted"> · {t('export.firstRows', { n: rows.length })}</span> : null}
      </p>
      {unverifiedNote ? <p className="muted small">{t('export.confirmedOnly')}</p> : null}
      {unconfirmed && unconfirmed.rows > 0 ? (
        <p className="banner" role="note" data-testid="export-unverified">
          {t('export.unverifiedRows', {
            n: unconfirmed.rows,
            lowest: unconfirmed.lowestConfidence !== null ? fmt.pct(unconfirmed.lowestConfidence) : '—',
          })}
        </p>
      ) : null}
      {rows.length > 0 ? (
        <div className="table-wrap">
          <table aria-label={t('export.preview')}>
            <thead>
              <tr>
                <th scope="col">{t('export.col.when')}</th>
                <th scope="col">{t('det.sort.species')}</th>
                <th scope="col">{t('det.satellite')}</th>
                <th scope="col">{t('det.confidence')}</th>
                <th scope="col">{t('det.status')}</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((d) => {
                const name = speciesName(d.speciesCode, d.commonName);
                return (
                  <tr key={d.id} data-testid="preview-row">
                    <td>{fmt.dateTime(d.detectedAt)}</td>
                    <td>
                      {name.primary} <em className="muted">{d.scientificName}</em>
                    </td>
                    <td>{d.satelliteName ?? d.satelliteId}</td>
                    <td>{fmt.pct(d.calibrated_confidence ?? d.confidence)}</td>
                    <td>{t(`det.status.${d.verificationStatus}`)}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      ) : null}
      {skipped && skipped.length > 0 ? (
        <div className="card" data-testid="export-skipped">
          <h3>{t('export.skipped')}</h3>
          <ul>
            {skipped.map((s) => (
              <li key={s.speciesCode} data-testid="skipped-species">
                {t('export.skipped.item', {
                  name: s.commonName,
                  code: s.speciesCode,
                  n: s.count,
                  reason: skipReason(t, s.reason),
                })}
              </li>
            ))}
          </ul>
        </div>
      ) : null}
    </>
  );
}

function skipReason(t: ReturnType<typeof useT>, reason: string): string {
  if (reason === 'not_a_bird') return t('export.skipped.not_a_bird');
  if (reason === 'not_in_ebird_taxonomy') return t('export.skipped.not_in_ebird_taxonomy');
  return reason;
}

function Jobs({ tenantId }: { tenantId: string }) {
  const t = useT();
  const jobs = useExportJobs(tenantId);
  const rows = jobs.data?.jobs ?? [];
  return (
    <>
      <ErrorText error={jobs.error} />
      {jobs.isSuccess && rows.length === 0 ? <EmptyNote>{t('export.jobs.none')}</EmptyNote> : null}
      {rows.length > 0 ? (
        <div className="table-wrap">
          <table aria-label={t('export.jobs')}>
            <thead>
              <tr>
                <th scope="col">{t('export.col.started')}</th>
                <th scope="col">{t('export.col.format')}</th>
                <th scope="col">{t('export.col.status')}</th>
                <th scope="col">{t('export.col.progress')}</th>
                <th scope="col">{t('export.col.file')}</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((j) => (
                <JobRow key={j.id} j={j} />
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </>
  );
}

function JobRow({ j }: { j: ExportJob }) {
  const t = useT();
  const fmt = useFormat();
  return (
    <tr data-testid="export-job" data-status={j.status}>
      <td>{fmt.dateTime(j.createdAt)}</td>
      <td>{t(`export.format.${j.format}`)}</td>
      <td>
        <span className={`badge job-${j.status}`} data-testid="job-status">
          {t(`export.status.${j.status}`)}
        </span>
        {j.error ? <ErrorText error={j.error} /> : null}
      </td>
      <td>
        {j.status === 'queued' || j.status === 'running' ? (
          <progress value={j.rowsDone} max={j.rowsTotal ?? undefined} aria-label={t('export.col.progress')} />
        ) : null}{' '}
        {j.rowsTotal !== null ? t('export.rows', { done: j.rowsDone, total: j.rowsTotal }) : t('export.rowsDone', { done: j.rowsDone })}
      </td>
      <td>
        {j.status === 'done' && j.downloadUrl ? (
          <>
            <a href={j.downloadUrl} download={j.filename ?? true}>
              {t('export.downloadFile', { name: j.filename ?? '' })}
            </a>
            {j.bytes !== null ? <span className="muted small"> ({fmt.bytes(j.bytes)})</span> : null}
            <div className="muted small">{t('export.expires', { date: fmt.dateTime(j.expiresAt) })}</div>
          </>
        ) : (
          '—'
        )}
      </td>
    </tr>
  );
}
