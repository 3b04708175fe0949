import type { Db } from '../../infra/db/index.ts';
import { badRequest, notFound } from '../../core/errors.ts';
import { createSessionsRepo, type SessionFilter } from './repo.ts';
import type { CategoryVisibility } from '../detections/visibility.ts';

/** The longest range GET /sessions/timeline answers (a continuously recording satellite sends 28,800 chunks a day). */
export const TIMELINE_MAX_HOURS = 24;

export function createSessionsService(deps: {
  db: Db;
  calibrated: (rows: Array<{ tenantId: string; modelId: string; confidence: number }>) => Promise<number[]>;
  /** The detections list's: sessions count what that list shows. */
  visibility: Pick<CategoryVisibility, 'of' | 'visible'>;
}) {
  const { calibrated, visibility } = deps;
  const repo = createSessionsRepo(deps.db);
  return {
    /** GET /sessions: {sessions, total}. Detections in categories a team hides are not counted. */
    async list(f: SessionFilter) {
      const { rows, total } = await repo.list({ ...f, categories: await visibility.of(f.tenantIds) });
      return {
        sessions: rows.map((r) => ({
          id: r.id,
          tenantId: r.tenantId,
          satelliteId: r.satelliteId,
          satelliteName: r.satelliteName,
          start: new Date(r.start).toISOString(),
          end: new Date(r.end).toISOString(),
          durationMs: new Date(r.end).getTime() - new Date(r.start).getTime(),
          chunkCount: r.chunkCount,
          detectionCount: r.detectionCount,
          speciesCount: r.speciesCount,
          topSpecies: r.topSpecies ?? [],
        })),
        total,
      };
    },

    /** GET /sessions/timeline: the satellite's chunks and listed detections in [from, to). */
    async timeline(tenantId: string, satelliteId: string, from: Date, to: Date) {
      if (!(to > from)) throw badRequest('to must be later than from', 'INVALID_RANGE');
      if (to.getTime() - from.getTime() > TIMELINE_MAX_HOURS * 3_600_000) {
        throw badRequest(`The range may span at most ${TIMELINE_MAX_HOURS} hours`, 'RANGE_TOO_LONG');
      }
      if (!(await repo.satelliteInTeam(tenantId, satelliteId))) throw notFound('No such satellite in this team');
      const shown = await visibility.visible(tenantId);
      const [chunks, detections] = await Promise.all([
        repo.chunksIn(tenantId, satelliteId, from, to),
        repo.detectionsIn(tenantId, satelliteId, from, to, shown),
      ]);
      const cal = await calibrated(detections.map((d) => ({ tenantId, modelId: d.modelId, confidence: d.confidence })));
      return {
        tenantId,
        satelliteId,
        from: from.toISOString(),
        to: to.toISOString(),
        chunks: chunks.map((c) => ({ id: c.id, recordedAt: new Date(c.recordedAt).toISOString(), durationMs: c.durationMs })),
        detections: detections.map((d, i) => ({
          ...d,
          calibrated_confidence: cal[i],
          detectedAt: new Date(d.detectedAt).toISOString(),
          callEndAt: new Date(d.callEndAt).toISOString(),
        })),
      };
    },
  };
}

export type SessionsService = ReturnType<typeof createSessionsService>;
