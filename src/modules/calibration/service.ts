/**
 * Confidence calibration (spec hub-http-api §4 "Calibration", §2 "Calibration curve"): one
 * isotonic fit per (team, model) over verified detections (confirmed = 1, rejected = 0 against the
 * raw confidence), refitted on request, read by every detection row as calibrated_confidence.
 */
import type { Db } from '../../infra/db/index.ts';
import type { Clock } from '../../core/clock.ts';
import { type Actor, roleAtLeast } from '../../core/actor.ts';
import type { AuditWriter } from '../audit/writer.ts';
import { calibrate, fitIsotonic, type Bucket } from './pav.ts';
import { createCalibrationRepo } from './repo.ts';

/** A pair needs this many verified samples, both outcomes among them, before it gets a curve. */
export const MIN_SAMPLES = 10;
/** Other api instances see a refit within this long. */
const CACHE_MS = 30_000;

const key = (tenantId: string, modelId: string) => `${tenantId}:${modelId}`;

/** The teams an action without ?tenantId= covers: every team for hub admins, else those where the caller is admin+. */
export function adminTeamsOf(actor: Actor): string[] | null {
  if (actor.teamId) return [actor.teamId];
  if (actor.isPlatformAdmin || actor.kind === 'internal') return null;
  if (actor.kind === 'api_key') return actor.tenantId && roleAtLeast(actor.role, 'admin') ? [actor.tenantId] : [];
  return actor.memberships.filter((m) => roleAtLeast(m.role, 'admin')).map((m) => m.tenantId);
}

export function createCalibrationService(deps: { db: Db; clock: Clock; audit: AuditWriter }) {
  const { db, clock, audit } = deps;
  const repo = createCalibrationRepo(db);
  const cache = new Map<string, { buckets: Bucket[] | null; at: number }>();

  return {
    /** calibrated_confidence of each row, in order: from the pair's curve, else the raw confidence. */
    async calibrated(rows: ReadonlyArray<{ tenantId: string; modelId: string; confidence: number }>): Promise<number[]> {
      const now = Date.now();
      // An export asks for a thousand rows at a time, nearly all of one pair: the pair is looked up when it changes, not per row.
      const pairs = new Map<string, { tenantId: string; modelId: string }>();
      let t: string | null = null;
      let m: string | null = null;
      for (const r of rows) {
        if (r.tenantId === t && r.modelId === m) continue;
        t = r.tenantId;
        m = r.modelId;
        pairs.set(key(t, m), { tenantId: t, modelId: m });
      }
      const missing = [...pairs].filter(([k]) => {
        const c = cache.get(k);
        return !c || now - c.at > CACHE_MS;
      });
      if (missing.length > 0) {
        const found = await repo.bucketsFor(missing.map(([, p]) => p));
        for (const [k] of missing) cache.set(k, { buckets: null, at: now });
        for (const f of found) cache.set(key(f.tenantId, f.modelId), { buckets: f.buckets, at: now });
      }
      t = m = null;
      let buckets: Bucket[] | null | undefined = null;
      return rows.map((r) => {
        if (r.tenantId !== t || r.modelId !== m) {
          t = r.tenantId;
          m = r.modelId;
          buckets = cache.get(key(t, m))?.buckets;
        }
        return buckets ? calibrate(buckets, r.confidence) : r.confidence;
      });
    },

    /** A team's curves, one per model that has one (an export writes calibrated confidences in SQL: exports formats/lines-sql.ts). */
    async curvesOf(tenantId: string): Promise<Array<{ modelId: string; buckets: Bucket[] }>> {
      return (await repo.curves([tenantId])).map((c) => ({ modelId: c.modelId, buckets: c.buckets }));
    },

    /** POST /calibration/refresh: refits every pair in reach (one team, or all a hub admin reaches). */
    async refresh(actor: Actor, input: { modelId?: string }) {
      const teams = adminTeamsOf(actor);
      const [coverage, existing] = await Promise.all([repo.coverage(teams, input.modelId), repo.curves(teams, input.modelId)]);
      const pairs = new Map<string, { tenantId: string; modelId: string }>();
      for (const p of [...coverage, ...existing]) pairs.set(key(p.tenantId, p.modelId), { tenantId: p.tenantId, modelId: p.modelId });
      const byTeam = new Map<string, string[]>();
      for (const p of pairs.values()) byTeam.set(p.tenantId, [...(byTeam.get(p.tenantId) ?? []), p.modelId]);

      const fittedAt = clock.now();
      const refreshed: Array<{ tenantId: string; modelId: string; samples: number; buckets: number; fittedAt: string }> = [];
      const skipped: Array<{ tenantId: string; modelId: string; samples: number; reason: string }> = [];
      for (const [tenantId, models] of byTeam) {
        await db.tx(async (tx) => {
          const done: Array<{ modelId: string; samples: number; buckets: number | null }> = [];
          for (const modelId of models) {
            const samples = await repo.samples(tx, tenantId, modelId);
            const confirmed = samples.filter((s) => s.confirmed).length;
            if (samples.length < MIN_SAMPLES || confirmed === 0 || confirmed === samples.length) {
              // The old fit no longer reflects the votes: readers fall back to the raw confidence.
              await repo.remove(tx, tenantId, modelId);
              const reason =
                samples.length < MIN_SAMPLES
                  ? `fewer than ${MIN_SAMPLES} verified detections`
                  : 'needs both confirmed and rejected detections';
              skipped.push({ tenantId, modelId, samples: samples.length, reason });
              done.push({ modelId, samples: samples.length, buckets: null });
              continue;
            }
            const buckets = fitIsotonic(samples.map((s) => ({ confidence: s.confidence, outcome: s.confirmed ? 1 : 0 })));
            await repo.save(tx, { tenantId, modelId, fittedAt, samples: samples.length, buckets });
            refreshed.push({ tenantId, modelId, samples: samples.length, buckets: buckets.length, fittedAt: fittedAt.toISOString() });
            done.push({ modelId, samples: samples.length, buckets: buckets.length });
          }
          await audit.write(tx, actor, {
            action: 'admin.calibration_refreshed',
            tenantId,
            targetType: 'tenant',
            targetId: tenantId,
            details: { models: done },
          });
        });
        for (const modelId of models) cache.delete(key(tenantId, modelId));
      }
      return { refreshed, skipped };
    },

    /** GET /calibration/curve: the pair's buckets; an empty array (fittedAt null) while it has no curve. */
    async curve(tenantId: string, modelId: string) {
      const [c] = await repo.curves([tenantId], modelId);
      return {
        tenantId,
        modelId,
        fittedAt: c ? new Date(c.fittedAt).toISOString() : null,
        samples: c?.samples ?? 0,
        buckets: c?.buckets ?? [],
      };
    },

    /** GET /calibration/coverage: verified counts per (team, model) and whether a curve is in force. */
    async coverage(actor: Actor, modelId?: string) {
      const teams = adminTeamsOf(actor);
      const [counts, curves] = await Promise.all([repo.coverage(teams, modelId), repo.curves(teams, modelId)]);
      const rows = new Map<string, { tenantId: string; modelId: string; confirmed: number; rejected: number }>();
      for (const c of curves) rows.set(key(c.tenantId, c.modelId), { tenantId: c.tenantId, modelId: c.modelId, confirmed: 0, rejected: 0 });
      for (const c of counts) rows.set(key(c.tenantId, c.modelId), c);
      const curveOf = new Map(curves.map((c) => [key(c.tenantId, c.modelId), c]));
      return {
        minSamples: MIN_SAMPLES,
        coverage: [...rows.values()]
          .sort((a, b) => (a.tenantId + a.modelId).localeCompare(b.tenantId + b.modelId))
          .map((r) => {
            const c = curveOf.get(key(r.tenantId, r.modelId));
            return {
              ...r,
              samples: r.confirmed + r.rejected,
              enough: r.confirmed + r.rejected >= MIN_SAMPLES && r.confirmed > 0 && r.rejected > 0,
              curve: c ? { fittedAt: new Date(c.fittedAt).toISOString(), samples: c.samples, buckets: c.buckets.length } : null,
            };
          }),
      };
    },
  };
}

export type CalibrationService = ReturnType<typeof createCalibrationService>;
