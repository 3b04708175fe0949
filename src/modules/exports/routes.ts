import { Type } from 'typebox';
import type { FastifyReply } from 'fastify';
import { access, defineRoute } from '../../core/permissions.ts';
import { IdParams, NoContent, NotJson, Uuid } from '../../core/schemas.ts';
import type { TeamActor } from '../../core/actor.ts';
import type { ExportsService, ExportRequest } from './service.ts';
import type { ScheduledExports } from './scheduled.ts';
import {
  ChecklistExportQuery,
  DetectionsExportQuery,
  ExportJobList,
  ExportJobView,
  ExportPreview,
  ObservationExportQuery,
  PreviewQuery,
  RecordingExportQuery,
  ReportExportQuery,
  ScheduledCreateBody,
  ScheduledExportList,
  ScheduledExportView,
  ScheduledUpdateBody,
  type ExportFilters,
} from './schemas.ts';

const isTrue = (v: string | undefined) => v === '1' || v === 'true';

/** The filters of an export query, without its other members. */
function filtersOf(q: ExportFilters & Record<string, unknown>): ExportFilters {
  const { satelliteId, species, minConfidence, verificationStatus, category, start, end } = q;
  return { satelliteId, species, minConfidence, verificationStatus, category, start, end };
}

/** A file as an attachment; a background job as 202 with the job. */
async function answer(exportsSvc: ExportsService, actor: TeamActor, req: ExportRequest, background: boolean, reply: FastifyReply) {
  const opened = await exportsSvc.open(actor, req, background);
  if (opened.mode === 'job') {
    reply.code(202);
    return opened.job;
  }
  reply.header('content-type', opened.contentType);
  reply.header('content-disposition', `attachment; filename="${opened.filename}"`);
  reply.header('cache-control', 'no-store');
  return opened.body;
}

const fileResponses = (media: string, what: string) => ({ 200: NotJson(media, what), 202: ExportJobView });

export function exportsRoutes(exportsSvc: ExportsService, scheduled: ScheduledExports) {
  const team = { in: 'query', key: 'tenantId' } as const;
  return [
    defineRoute({
      method: 'GET',
      url: '/export/detections',
      action: 'exports.detections',
      access: access.role('member'),
      team,
      audit: [],
      summary: 'The detections the Detections page lists under the filters, as CSV (RFC 4180) or one JSON array; streamed',
      tags: ['exports'],
      schema: { querystring: DetectionsExportQuery, response: fileResponses('text/csv', 'CSV with a header, or a JSON array') },
      handler: ({ actor, query, reply }) =>
        answer(
          exportsSvc,
          actor,
          { kind: query.format === 'json' ? 'json' : 'csv', filters: filtersOf(query), options: {} },
          isTrue(query.background),
          reply,
        ),
    }),
    defineRoute({
      method: 'GET',
      url: '/export/checklist',
      action: 'exports.checklist',
      access: access.role('member'),
      team,
      audit: [],
      summary: 'eBird Record Format (Extended) CSV: one checklist per satellite and local day',
      tags: ['exports'],
      schema: { querystring: ChecklistExportQuery, response: fileResponses('text/csv', 'eBird import file, no header') },
      handler: ({ actor, query, reply }) =>
        answer(
          exportsSvc,
          actor,
          { kind: 'checklist', filters: filtersOf(query), options: { counts: query.counts === 'calls' ? 'calls' : 'presence' } },
          isTrue(query.background),
          reply,
        ),
    }),
    defineRoute({
      method: 'GET',
      url: '/export/observation',
      action: 'exports.observation',
      access: access.role('member'),
      team,
      audit: ['audio.published'],
      summary: "iNaturalist's CSV import (format=inaturalist, default) or a Darwin Core Archive for GBIF (format=dwca)",
      tags: ['exports'],
      schema: { querystring: ObservationExportQuery, response: fileResponses('text/csv', 'iNaturalist CSV, or a zip (application/zip)') },
      handler: ({ actor, query, reply }) =>
        answer(
          exportsSvc,
          actor,
          {
            kind: query.format === 'dwca' ? 'dwca' : 'inaturalist',
            filters: filtersOf(query),
            options: { geoprivacy: query.geoprivacy },
            publishAudio: isTrue(query.publishAudio),
          },
          isTrue(query.background),
          reply,
        ),
    }),
    defineRoute({
      method: 'GET',
      url: '/export/recording',
      action: 'exports.recording',
      access: access.role('member'),
      team,
      audit: ['audio.published'],
      summary: "A xeno-canto submission: metadata.csv and each recording's audio in a zip; confirmed detections unless includeUnverified",
      tags: ['exports'],
      schema: { querystring: RecordingExportQuery, response: fileResponses('application/zip', 'Zip of metadata.csv and audio/*.wav') },
      handler: ({ actor, query, reply }) =>
        answer(
          exportsSvc,
          actor,
          {
            kind: 'recording',
            filters: filtersOf(query),
            options: {},
            includeUnverified: isTrue(query.includeUnverified),
            publishAudio: isTrue(query.publishAudio),
          },
          isTrue(query.background),
          reply,
        ),
    }),
    defineRoute({
      method: 'GET',
      url: '/export/report',
      action: 'exports.report',
      access: access.role('member'),
      team,
      audit: [],
      summary: 'PDF report of the same detections: totals, top species, daily and hourly charts, satellites, species list',
      tags: ['exports'],
      schema: { querystring: ReportExportQuery, response: fileResponses('application/pdf', 'The report') },
      handler: ({ actor, query, reply }) => {
        const paper = actor.person?.preferences?.paperSize;
        // The report speaks the person's language where it has one (labels, numbers, percentages).
        const language = String(actor.person?.preferences?.primaryLanguage ?? '').startsWith('de') ? ('de' as const) : ('en' as const);
        const options = { paperSize: paper === 'letter' ? ('letter' as const) : ('a4' as const), language };
        return answer(exportsSvc, actor, { kind: 'report', filters: filtersOf(query), options }, isTrue(query.background), reply);
      },
    }),
    defineRoute({
      method: 'GET',
      url: '/export/preview',
      action: 'exports.preview',
      access: access.role('member'),
      team,
      audit: [],
      summary:
        "The first rows an export would hold, its total, whether it runs in the background, what an eBird checklist leaves out, the team's licence (with a warning when GBIF would refuse it) and, for submission formats, the rows nobody confirmed",
      tags: ['exports'],
      schema: { querystring: PreviewQuery, response: { 200: ExportPreview } },
      handler: ({ actor, query }) => {
        const kind = query.kind === 'detections' ? 'csv' : query.kind === 'observation' ? (query.format ?? 'inaturalist') : query.kind;
        const includeUnverified = isTrue(query.includeUnverified);
        return exportsSvc.preview(actor.teamId, { kind, filters: filtersOf(query), options: {}, includeUnverified }, query.limit ?? 10);
      },
    }),
    defineRoute({
      method: 'GET',
      url: '/export/jobs',
      action: 'exports.jobs.list',
      access: access.role('member'),
      team,
      audit: [],
      summary: "The team's background exports, newest first (kept 24 hours)",
      tags: ['exports'],
      schema: { querystring: Type.Object({ tenantId: Type.Optional(Uuid) }), response: { 200: ExportJobList } },
      handler: async ({ actor }) => ({ jobs: await exportsSvc.jobs(actor.teamId) }),
    }),
    defineRoute({
      method: 'GET',
      url: '/export/jobs/:id',
      action: 'exports.jobs.read',
      access: access.role('member'),
      team: { resource: 'exportJob', param: 'id' },
      audit: [],
      summary: 'One background export: status and progress',
      tags: ['exports'],
      schema: { params: IdParams, response: { 200: ExportJobView } },
      handler: ({ actor, params }) => exportsSvc.job(actor.teamId, params.id),
    }),
    defineRoute({
      method: 'GET',
      url: '/export/jobs/:id/file',
      action: 'exports.jobs.download',
      access: access.role('member'),
      team: { resource: 'exportJob', param: 'id' },
      audit: [],
      summary: "A finished background export's file",
      tags: ['exports'],
      schema: { params: IdParams, response: { 200: NotJson('application/octet-stream', 'The file') } },
      handler: async ({ actor, params, reply }) => {
        const f = await exportsSvc.download(actor.teamId, params.id);
        reply.header('content-type', f.contentType);
        reply.header('content-length', String(f.bytes));
        reply.header('content-disposition', `attachment; filename="${f.filename}"`);
        return f.body;
      },
    }),

    defineRoute({
      method: 'GET',
      url: '/exports/scheduled',
      action: 'exports.scheduled.list',
      access: access.role('admin'),
      team,
      audit: [],
      summary: "The team's scheduled exports with their last and next runs",
      tags: ['exports'],
      schema: { querystring: Type.Object({ tenantId: Type.Optional(Uuid) }), response: { 200: ScheduledExportList } },
      handler: async ({ actor }) => ({ scheduled: await scheduled.list(actor.teamId) }),
    }),
    defineRoute({
      method: 'POST',
      url: '/exports/scheduled',
      action: 'exports.scheduled.create',
      access: access.role('admin'),
      team: { in: 'body', key: 'tenantId' },
      audit: ['admin.scheduled_export_created'],
      summary: 'Creates a scheduled export; the cron expression is checked (400 INVALID_SCHEDULE with the reason)',
      tags: ['exports'],
      schema: { body: ScheduledCreateBody, response: { 201: ScheduledExportView } },
      handler: async ({ actor, body, reply }) => {
        reply.code(201);
        return scheduled.create(actor, body);
      },
    }),
    defineRoute({
      method: 'PUT',
      url: '/exports/scheduled/:id',
      action: 'exports.scheduled.update',
      access: access.role('admin'),
      team: { resource: 'scheduledExport', param: 'id' },
      audit: ['admin.scheduled_export_updated'],
      summary: 'Replaces a scheduled export',
      tags: ['exports'],
      schema: { params: IdParams, body: ScheduledUpdateBody, response: { 200: ScheduledExportView } },
      handler: ({ actor, params, body }) => scheduled.update(actor, params.id, body),
    }),
    defineRoute({
      method: 'POST',
      url: '/exports/scheduled/:id/run',
      action: 'exports.scheduled.run',
      access: access.role('admin'),
      team: { resource: 'scheduledExport', param: 'id' },
      audit: ['admin.scheduled_export_run'],
      summary:
        'Runs a scheduled export now: the window since its last run, through its channel; the next scheduled run stays (409 CONFLICT while a run is under way)',
      tags: ['exports'],
      schema: { params: IdParams, response: { 200: ScheduledExportView } },
      handler: ({ actor, params }) => scheduled.runNow(actor, params.id),
    }),
    defineRoute({
      method: 'DELETE',
      url: '/exports/scheduled/:id',
      action: 'exports.scheduled.delete',
      access: access.role('admin'),
      team: { resource: 'scheduledExport', param: 'id' },
      audit: ['admin.scheduled_export_deleted'],
      summary: 'Deletes a scheduled export',
      tags: ['exports'],
      schema: { params: IdParams, response: { 204: NoContent } },
      handler: async ({ actor, params, reply }) => {
        await scheduled.remove(actor, params.id);
        reply.code(204);
        return undefined;
      },
    }),
  ];
}
