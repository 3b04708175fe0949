/**
 * The export files whose lines the database writes (issue 34; docs/exports.md "Performance"): the
 * detections CSV and JSON, and Darwin Core and iNaturalist where no recording is published. On
 * PostgreSQL each streams under COPY, bytes passed on without a JavaScript row per detection;
 * on PGlite CSV and JSON read the same lines batch by batch, and the submission formats are left
 * to the writers over rows.
 */
import type { CopyColumnOptions } from '../../infra/db/index.ts';
import type { DetectionsService, ExportFilter, ExportLineSql } from '../detections/service.ts';
import { reorderCoarsened, WITHHELD } from '../sensitive/service.ts';
import type { Audience, ExportContext } from './types.ts';
import type { LineSource } from './formats/csv.ts';
import { csvLineSql, jsonLineSql } from './formats/detection-lines.ts';
import type { CurveBucket, LinesOptions } from './formats/lines-sql.ts';
import { dwcOccurrenceLineSql, inaturalistLineSql } from './formats/submission-lines.ts';
import { licenseText } from './formats/dwca.ts';
import { INATURALIST_MAX_ROWS, latin1Text, type Geoprivacy } from './formats/inaturalist.ts';
import { renderChecklistLines, renderSubmissionLines } from './render.ts';
import { ebirdChecklistSql } from './formats/ebird-lines.ts';
import { ebirdTaxon, type EbirdTaxon } from './formats/ebird-names.ts';
import { EBIRD_MAX_FILE_BYTES } from './formats/ebird.ts';

export function createLineFiles(deps: {
  detections: Pick<
    DetectionsService,
    'exportLineBytes' | 'exportLineBatches' | 'exportNonAsciiNames' | 'exportStatementBytes' | 'exportTeamFacts'
  >;
  publicUrl: string;
  sensitiveCodes?: (tenantId: string) => Promise<ReadonlySet<string>>;
  calibrationCurves?: (tenantId: string) => Promise<Array<{ modelId: string; buckets: CurveBucket[] }>>;
}) {
  /**
   * The detections CSV or JSON as lines the database writes (formats/lines-sql.ts): under COPY
   * where the database streams it (PostgreSQL), bytes passed on without a JavaScript row per
   * detection, else batch by batch. In a file that leaves the team, sensitive rows are generalised
   * in SQL and moved to the end of their hour (reorderCoarsened's order: by the COPY statement's
   * ORDER BY, or here over the batches).
   */
  async function detections(
    tenantId: string,
    kind: 'csv' | 'json',
    filter: ExportFilter,
    audience: Audience,
    onRows: (n: number) => void,
    ctx: ExportContext,
  ): Promise<LineSource> {
    const options = await linesOptions(tenantId, audience, ctx);
    const line = kind === 'csv' ? csvLineSql(options) : jsonLineSql(options);
    const bytes = await deps.detections.exportLineBytes(filter, line, { onRows });
    if (bytes) return bytes;
    const batches = deps.detections.exportLineBatches(filter, line);
    const ordered = options.sensitive.length ? reorderCoarsened(batches, (r) => r.coarsened, 'outside') : batches;
    return (async function* () {
      let n = 0;
      for await (const batch of ordered) {
        n += batch.length;
        onRows(n);
        yield batch.map((r) => r.line ?? '').join('');
      }
    })();
  }

  /** The options every line format reads: the team's zone, links, curves and (outside the team) sensitive species. */
  async function linesOptions(tenantId: string, audience: Audience, ctx: ExportContext): Promise<LinesOptions> {
    const [curves, codes] = await Promise.all([
      deps.calibrationCurves ? deps.calibrationCurves(tenantId) : [],
      audience === 'outside' && deps.sensitiveCodes ? deps.sensitiveCodes(tenantId) : new Set<string>(),
    ]);
    return {
      timeZone: ctx.timeZone,
      detectionUrlPrefix: `${deps.publicUrl}/detections/`,
      audioUrlPrefix: `${deps.publicUrl}/api/audio/`,
      curves,
      sensitive: [...codes].sort(),
      withheld: WITHHELD,
    };
  }

  /** The lines under COPY, where the caller has made sure the database streams them (exportStreamsLines). */
  async function copied(filter: ExportFilter, line: ExportLineSql, opts: CopyColumnOptions) {
    const pieces = await deps.detections.exportLineBytes(filter, line, opts);
    if (!pieces) throw new Error('the database has no COPY stream: submission files are written from rows here');
    return pieces;
  }

  /**
   * Darwin Core or iNaturalist as lines the database writes (formats/submission-lines.ts), under
   * COPY: only where the database streams them (elsewhere the rows' writers make these files).
   */
  async function submission(
    tenantId: string,
    kind: 'dwca' | 'inaturalist',
    filter: ExportFilter,
    audience: Audience,
    onRows: (n: number) => void,
    ctx: ExportContext,
    opts: { listed: number; geoprivacy?: Geoprivacy },
  ) {
    const options = await linesOptions(tenantId, audience, ctx);
    if (kind === 'dwca') {
      const line = dwcOccurrenceLineSql({ ...options, recordist: ctx.recordist, license: licenseText(ctx) });
      return renderSubmissionLines(kind, await copied(filter, line, { onRows, timeZone: ctx.timeZone }), ctx, 0);
    }
    const names = await deps.detections.exportNonAsciiNames(tenantId);
    const line = inaturalistLineSql({
      ...options,
      geoprivacy: opts.geoprivacy ?? 'open',
      latin1: new Map(names.map((n) => [n, latin1Text(n)])),
    });
    const pieces = await copied(filter, line, { onRows, partLines: INATURALIST_MAX_ROWS, timeZone: ctx.timeZone });
    return renderSubmissionLines(kind, pieces, ctx, opts.listed);
  }

  /**
   * The eBird checklist file aggregated and written by the database (formats/ebird-lines.ts), a
   * checklist a COPY row, parts of 1 MB cut between checklists: only where it streams under COPY.
   * The stream counts checklists, not detections: `onRows` hears `listed` (the rows the filter
   * lists, which the file covers) once the file is written.
   */
  async function checklist(
    tenantId: string,
    filter: ExportFilter,
    onRows: (n: number) => void,
    ctx: ExportContext,
    opts: { listed: number; counts?: 'presence' | 'calls' },
  ) {
    const [options, facts] = await Promise.all([linesOptions(tenantId, 'outside', ctx), deps.detections.exportTeamFacts(tenantId)]);
    const taxa = facts.speciesKeys.flatMap((key) => {
      const taxon = ebirdTaxon(key);
      return taxon ? [{ key, taxon }] : ([] as Array<{ key: string; taxon: EbirdTaxon }>);
    });
    const statement = ebirdChecklistSql({
      detectionUrlPrefix: options.detectionUrlPrefix,
      sensitive: options.sensitive,
      withheld: options.withheld,
      teamName: ctx.teamName,
      counts: opts.counts ?? 'presence',
      taxa,
      models: facts.models,
      satellites: facts.satellites,
    });
    const pieces = await deps.detections.exportStatementBytes(filter, statement, {
      partBytes: EBIRD_MAX_FILE_BYTES,
      timeZone: ctx.timeZone,
    });
    if (!pieces) throw new Error('the database has no COPY stream: the eBird file is written from rows here');
    const counted = (async function* () {
      yield* pieces;
      onRows(opts.listed);
    })();
    return renderChecklistLines(counted, ctx);
  }

  return { detections, submission, checklist };
}
