/**
 * Exports of a team's detections (issue 18): what a format would hold (preview), the file's
 * address for a direct download, background jobs with their progress, and scheduled exports.
 */
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, ApiError, data, type Body, type Query, type RequestBody } from '../client';
import { tActive } from '../../i18n';
import type { Detection } from './detections';

export type ExportJob = Body<'/api/export/jobs', 'get'>['jobs'][number];
export type ExportJobFormat = ExportJob['format'];
export type ScheduledExport = Body<'/api/exports/scheduled', 'get'>['scheduled'][number];
export type ScheduledBody = Omit<RequestBody<'/api/exports/scheduled', 'post'>, 'tenantId'>;
export type ScheduledFormat = ScheduledBody['format'];
export type ScheduledFilters = NonNullable<ScheduledBody['filters']>;
export type PreviewKind = Query<'/api/export/preview', 'get'>['kind'];
export type PreviewFormat = NonNullable<Query<'/api/export/preview', 'get'>['format']>;
export type VerificationStatus = NonNullable<Query<'/api/export/preview', 'get'>['verificationStatus']>;

/** The filters every export takes (all optional; `start` and `end` ISO, `end` exclusive). */
export interface ExportFilters {
  satelliteId?: string;
  species?: string;
  minConfidence?: number;
  verificationStatus?: VerificationStatus;
  category?: string;
  start?: string;
  end?: string;
}

/** A species an eBird checklist leaves out, and why. */
export interface SkippedSpecies {
  speciesCode: string;
  commonName: string;
  reason: string;
  count: number;
}

/** The team's publication licence (team setting publication_license) and whether GBIF takes it. */
export interface PublicationLicense {
  id: string;
  name: string;
  title: string;
  url: string | null;
  gbif: boolean;
}

/**
 * What the preview answers: the first rows (as GET /detections lists them), the total, for eBird
 * what is left out, the team's licence with what an importer would refuse (warnings), and for
 * the submission formats the rows nobody confirmed with their lowest confidence.
 */
export interface ExportPreview {
  rows: Detection[];
  total: number;
  background: boolean;
  skipped?: SkippedSpecies[];
  license: PublicationLicense;
  warnings: { code: string; message: string }[];
  unverified?: { rows: number; lowestConfidence: number | null };
}

/** What can be exported, each with its route, its fixed query and the preview kind that lists the same rows. */
export const EXPORT_CHOICES = ['csv', 'json', 'checklist', 'inaturalist', 'dwca', 'recording', 'report'] as const;
export type ExportChoice = (typeof EXPORT_CHOICES)[number];

/**
 * The formats submitted elsewhere (eBird, iNaturalist, GBIF, xeno-canto): the page preselects
 * confirmed detections for them, and says how many unconfirmed rows a file would carry.
 */
export const SUBMISSION_CHOICES: ReadonlySet<ExportChoice> = new Set(['checklist', 'inaturalist', 'dwca', 'recording']);
/** The formats that name a licence (Darwin Core's license columns and eml.xml, xeno-canto's licence field). */
export const LICENSED_CHOICES: ReadonlySet<ExportChoice> = new Set(['dwca', 'recording']);

const ROUTES: Record<ExportChoice, { path: string; query: Record<string, string>; preview: PreviewKind; format?: PreviewFormat }> = {
  csv: { path: '/api/export/detections', query: { format: 'csv' }, preview: 'detections' },
  json: { path: '/api/export/detections', query: { format: 'json' }, preview: 'detections' },
  checklist: { path: '/api/export/checklist', query: {}, preview: 'checklist' },
  inaturalist: { path: '/api/export/observation', query: { format: 'inaturalist' }, preview: 'observation', format: 'inaturalist' },
  dwca: { path: '/api/export/observation', query: { format: 'dwca' }, preview: 'observation', format: 'dwca' },
  recording: { path: '/api/export/recording', query: {}, preview: 'recording' },
  report: { path: '/api/export/report', query: {}, preview: 'report' },
};

/** What the preview of `choice` asks for: the same rows as the file (a xeno-canto archive: confirmed ones unless asked). */
export interface PreviewTarget {
  kind: PreviewKind;
  format?: PreviewFormat;
  includeUnverified?: boolean;
}

export const previewOf = (choice: ExportChoice, includeUnverified = false): PreviewTarget => ({
  kind: ROUTES[choice].preview,
  ...(ROUTES[choice].format ? { format: ROUTES[choice].format } : {}),
  ...(choice === 'recording' && includeUnverified ? { includeUnverified: true } : {}),
});

/** Past this many recordings a xeno-canto archive runs in the background by itself (the hub's RECORDINGS_INLINE_MAX). */
export const RECORDINGS_INLINE_MAX = 300;

/** The formats whose media URL importers fetch: their recordings may be published as public links (issue 34). */
export const MEDIA_CHOICES: ReadonlySet<ExportChoice> = new Set(['inaturalist', 'dwca', 'recording']);

/** Options of one format: eBird counts, xeno-canto's unverified recordings, publishing the recordings. */
export interface ExportOptions {
  counts?: 'present' | 'calls';
  includeUnverified?: boolean;
  publishAudio?: boolean;
}

/**
 * The export's address with the filters. A same-origin GET carries the session cookie, so a
 * plain link downloads it (as the audio of a detection plays from /api/audio/…).
 */
export function exportUrl(tenantId: string, choice: ExportChoice, filters: ExportFilters, options: ExportOptions = {}, background = false) {
  const { path, query } = ROUTES[choice];
  const q = new URLSearchParams({ tenantId, ...query });
  for (const [k, v] of Object.entries(filters)) if (v !== undefined && v !== '') q.set(k, String(v));
  if (choice === 'checklist' && options.counts) q.set('counts', options.counts);
  if (choice === 'recording' && options.includeUnverified) q.set('includeUnverified', '1');
  if (MEDIA_CHOICES.has(choice) && options.publishAudio) q.set('publishAudio', '1');
  if (background) q.set('background', '1');
  return `${path}?${q.toString()}`;
}

export const exportKeys = {
  preview: (tenantId: string | null, target: PreviewTarget, filters: ExportFilters) =>
    ['export-preview', tenantId, target, filters] as const,
  jobs: (tenantId: string | null) => ['export-jobs', tenantId] as const,
  scheduled: (tenantId: string | null) => ['export-scheduled', tenantId] as const,
};

/** The first rows an export would hold, their total, the licence and the unconfirmed rows. */
export function useExportPreview(tenantId: string | null, target: PreviewTarget, filters: ExportFilters) {
  return useQuery({
    queryKey: exportKeys.preview(tenantId, target, filters),
    enabled: tenantId !== null,
    placeholderData: keepPreviousData,
    queryFn: async () => {
      const { includeUnverified, ...rest } = target;
      const query = {
        tenantId: tenantId!,
        ...rest,
        ...(includeUnverified ? { includeUnverified: '1' as const } : {}),
        limit: 10,
        ...filters,
      };
      return (await data(api.GET('/api/export/preview', { params: { query } }))) as unknown as ExportPreview;
    },
  });
}

const running = (j: ExportJob) => j.status === 'queued' || j.status === 'running';

/** The team's background exports, newest first; polled while one is queued or running. */
export function useExportJobs(tenantId: string | null) {
  return useQuery({
    queryKey: exportKeys.jobs(tenantId),
    enabled: tenantId !== null,
    refetchInterval: (q) => (q.state.data?.jobs.some(running) ? 1000 : false),
    queryFn: () => data(api.GET('/api/export/jobs', { params: { query: { tenantId: tenantId! } } })),
  });
}

/** Starts an export as a background job (the route answers 202 with the job); the jobs list refreshes. */
export function useStartExport(tenantId: string | null) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: async (url: string): Promise<ExportJob> => {
      let res: Response;
      try {
        res = await fetch(url, { credentials: 'same-origin', headers: { accept: 'application/json' } });
      } catch {
        throw new ApiError(0, 'NETWORK', tActive('error.network'));
      }
      const body: unknown = await res.json().catch(() => null);
      if (res.status === 202 && body) return body as ExportJob;
      const e = (body as { error?: { code?: string; message?: string } } | null)?.error;
      throw new ApiError(res.status, e?.code ?? `HTTP_${res.status}`, e?.message ?? tActive('error.http', { status: res.status }));
    },
    onSuccess: (job) => {
      qc.setQueryData<{ jobs: ExportJob[] }>(exportKeys.jobs(tenantId), (old) => ({
        jobs: [job, ...(old?.jobs ?? []).filter((j) => j.id !== job.id)],
      }));
      void qc.invalidateQueries({ queryKey: exportKeys.jobs(tenantId) });
    },
  });
}

/** The team's scheduled exports (admins). */
export function useScheduledExports(tenantId: string | null, enabled = true) {
  return useQuery({
    queryKey: exportKeys.scheduled(tenantId),
    enabled: tenantId !== null && enabled,
    queryFn: () => data(api.GET('/api/exports/scheduled', { params: { query: { tenantId: tenantId! } } })),
  });
}

/** Creating (no id) or replacing (id) a scheduled export, and deleting one; each refreshes the list. */
export function useScheduledMutations(tenantId: string) {
  const qc = useQueryClient();
  const refresh = () => void qc.invalidateQueries({ queryKey: exportKeys.scheduled(tenantId) });
  return {
    save: useMutation({
      mutationFn: ({ id, body }: { id?: string; body: ScheduledBody }) =>
        data(
          id
            ? api.PUT('/api/exports/scheduled/{id}', { params: { path: { id } }, body: { ...body, tenantId } })
            : api.POST('/api/exports/scheduled', { body: { ...body, tenantId } }),
        ),
      onSuccess: refresh,
    }),
    remove: useMutation({
      mutationFn: (id: string) => data(api.DELETE('/api/exports/scheduled/{id}', { params: { path: { id } } })),
      onSuccess: refresh,
    }),
    /** "Run now": the window since the last run, sent through the channel while the button waits. */
    runNow: useMutation({
      mutationFn: (id: string) => data(api.POST('/api/exports/scheduled/{id}/run', { params: { path: { id } } })),
      onSettled: refresh,
    }),
  };
}
