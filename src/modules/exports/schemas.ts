import { Type, type Static } from 'typebox';
import { Nullable, OneOf, Open, Uuid } from '../../core/schemas.ts';

/** Exports and scheduled exports (issue 18; spec §2 "Scheduled export", §4 "Audio, alerts, exports"). */

export const VERIFICATION = ['unverified', 'pending_review', 'confirmed', 'rejected'] as const;

/** The filters of GET /detections that an export takes. */
export const ExportFilterFields = {
  satelliteId: Type.Optional(Uuid),
  species: Type.Optional(Type.String({ minLength: 1, maxLength: 50, description: 'Species code' })),
  minConfidence: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
  verificationStatus: Type.Optional(OneOf(VERIFICATION)),
  category: Type.Optional(Type.String({ minLength: 1, maxLength: 40 })),
  start: Type.Optional(Type.String({ format: 'date-time' })),
  end: Type.Optional(Type.String({ format: 'date-time', description: 'Exclusive' })),
};
export const ExportFilters = Type.Object(ExportFilterFields, { additionalProperties: false });
export type ExportFilters = Static<typeof ExportFilters>;

/**
 * Issue 34 item 4: publish the recordings the file names as public links (the team setting
 * publish_audio must be on: 409 AUDIO_PUBLISHING_OFF otherwise). Without it the file's media
 * URLs are empty.
 */
const PublishAudio = Type.Optional(
  Type.Union([Type.Literal('1'), Type.Literal('true'), Type.Literal('0'), Type.Literal('false')], {
    description: "Publish the recordings as public links (team setting publish_audio); else the file's media URLs are empty",
  }),
);

const Background = Type.Optional(
  Type.Union([Type.Literal('1'), Type.Literal('true'), Type.Literal('0'), Type.Literal('false')], {
    description: 'Run as a background job (202 with the job); large exports do so by themselves',
  }),
);

export const DetectionsExportQuery = Type.Object(
  { tenantId: Type.Optional(Uuid), format: Type.Optional(OneOf(['csv', 'json'] as const)), background: Background, ...ExportFilterFields },
  { additionalProperties: false },
);
export const ChecklistExportQuery = Type.Object(
  {
    tenantId: Type.Optional(Uuid),
    counts: Type.Optional(OneOf(['present', 'calls'] as const)),
    background: Background,
    ...ExportFilterFields,
  },
  { additionalProperties: false },
);
export const ObservationExportQuery = Type.Object(
  {
    tenantId: Type.Optional(Uuid),
    format: Type.Optional(OneOf(['inaturalist', 'dwca'] as const)),
    geoprivacy: Type.Optional(OneOf(['open', 'obscured', 'private'] as const)),
    publishAudio: PublishAudio,
    background: Background,
    ...ExportFilterFields,
  },
  { additionalProperties: false },
);
export const RecordingExportQuery = Type.Object(
  {
    tenantId: Type.Optional(Uuid),
    /** Default: only confirmed detections (what an archive should receive). */
    includeUnverified: Type.Optional(Type.Union([Type.Literal('1'), Type.Literal('true'), Type.Literal('0'), Type.Literal('false')])),
    publishAudio: PublishAudio,
    background: Background,
    ...ExportFilterFields,
  },
  { additionalProperties: false },
);
export const ReportExportQuery = Type.Object(
  { tenantId: Type.Optional(Uuid), background: Background, ...ExportFilterFields },
  { additionalProperties: false },
);
export const PreviewQuery = Type.Object(
  {
    tenantId: Type.Optional(Uuid),
    kind: OneOf(['detections', 'checklist', 'observation', 'recording', 'report'] as const),
    /** kind=observation: the file it previews, as GET /export/observation takes it (default inaturalist). */
    format: Type.Optional(OneOf(['inaturalist', 'dwca'] as const)),
    /** kind=recording: as GET /export/recording takes it (default: confirmed detections only). */
    includeUnverified: Type.Optional(Type.Union([Type.Literal('1'), Type.Literal('true'), Type.Literal('0'), Type.Literal('false')])),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 50, default: 10 })),
    ...ExportFilterFields,
  },
  { additionalProperties: false },
);

export const EXPORT_KINDS = ['csv', 'json', 'checklist', 'inaturalist', 'dwca', 'recording', 'report'] as const;
export type ExportKind = (typeof EXPORT_KINDS)[number];

export const ExportJobView = Open({
  id: Type.String(),
  tenantId: Type.String(),
  format: OneOf(EXPORT_KINDS),
  status: OneOf(['queued', 'running', 'done', 'failed'] as const),
  rowsDone: Type.Integer(),
  rowsTotal: Nullable(Type.Integer()),
  filename: Nullable(Type.String()),
  bytes: Nullable(Type.Integer()),
  error: Nullable(Type.String()),
  downloadUrl: Nullable(Type.String()),
  createdAt: Type.String(),
  finishedAt: Nullable(Type.String()),
  expiresAt: Type.String(),
});
export const ExportJobList = Open({ jobs: Type.Array(ExportJobView) });

export const ExportPreview = Open({
  rows: Type.Array(Open({})),
  total: Type.Integer(),
  background: Type.Boolean(),
  /** The team's publication licence (setting publication_license) and whether GBIF takes it. */
  license: Open({ id: Type.String(), name: Type.String(), title: Type.String(), url: Nullable(Type.String()), gbif: Type.Boolean() }),
  /** What would make an importer refuse the file (Darwin Core: a licence GBIF does not take). */
  warnings: Type.Array(Open({ code: Type.String(), message: Type.String() })),
  /** Submission formats: rows nobody confirmed, and the lowest model confidence among them (null when none). */
  unverified: Type.Optional(Open({ rows: Type.Integer(), lowestConfidence: Nullable(Type.Number()) })),
});

export const SCHEDULED_FORMATS = ['csv', 'json', 'checklist', 'observation'] as const;

const ScheduledFields = {
  name: Type.String({ minLength: 1, maxLength: 100 }),
  format: OneOf(SCHEDULED_FORMATS),
  schedule: Type.String({ minLength: 9, maxLength: 100, description: 'Cron expression (5 or 6 fields)' }),
  timeZone: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: "IANA zone; default the team's" })),
  filters: Type.Optional(
    Type.Object(
      {
        satelliteId: ExportFilterFields.satelliteId,
        species: ExportFilterFields.species,
        minConfidence: ExportFilterFields.minConfidence,
        verificationStatus: ExportFilterFields.verificationStatus,
        category: ExportFilterFields.category,
      },
      { additionalProperties: false },
    ),
  ),
  channelId: Uuid,
  enabled: Type.Optional(Type.Boolean()),
};
export const ScheduledCreateBody = Type.Object({ tenantId: Uuid, ...ScheduledFields }, { additionalProperties: false });
export const ScheduledUpdateBody = Type.Object({ tenantId: Type.Optional(Uuid), ...ScheduledFields }, { additionalProperties: false });
export type ScheduledInput = Static<typeof ScheduledUpdateBody>;

export const ScheduledExportView = Open({
  id: Type.String(),
  tenantId: Type.String(),
  name: Type.String(),
  format: OneOf(SCHEDULED_FORMATS),
  schedule: Type.String(),
  timeZone: Type.String(),
  filters: Open({}),
  channelId: Nullable(Type.String()),
  enabled: Type.Boolean(),
  nextRunAt: Nullable(Type.String()),
  lastRunAt: Nullable(Type.String()),
  lastStatus: Nullable(Type.String()),
  lastError: Nullable(Type.String()),
  lastRows: Nullable(Type.Integer()),
  createdAt: Type.String(),
  updatedAt: Type.String(),
});
export const ScheduledExportList = Open({ scheduled: Type.Array(ScheduledExportView) });
