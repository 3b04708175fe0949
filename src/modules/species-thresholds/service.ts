/**
 * Per-species thresholds (issue 35 item 2, docs/model.md "Per-species thresholds"): per team and
 * species, the lowest raw confidence whose verified detections keep the team's precision target
 * (learn.ts), recomputed after every vote that settles or unsettles a detection of the species.
 *
 * Applied by the detections recorder (a new detection below it is stored tentative and marked,
 * never announced) and by the alert engine (no rule fires for a detection below it). A team admin
 * may pin a value or reset it to none; learning goes on underneath and is restored on request.
 */
import type { Db } from '../../infra/db/index.ts';
import type { Clock } from '../../core/clock.ts';
import type { TeamActor } from '../../core/actor.ts';
import { newId } from '../../core/crypto.ts';
import { validationFailed } from '../../core/errors.ts';
import type { AuditWriter } from '../audit/writer.ts';
import type { SettingsService } from '../settings/service.ts';
import { learnThreshold, MIN_EACH, MIN_VOTES, WILSON_Z } from './learn.ts';
import { createThresholdsRepo, type HistoryRow, type Mode, type ThresholdRow } from './repo.ts';

/** How many recomputations the species view lists, newest first. */
export const HISTORY_LIMIT = 100;

const iso = (d: Date | null) => (d ? new Date(d).toISOString() : null);

function appliedOf(r: ThresholdRow | null): number | null {
  if (!r) return null;
  if (r.mode === 'pinned') return r.pinned;
  if (r.mode === 'learned') return r.learned;
  return null;
}

const view = (code: string, r: ThresholdRow | null) => ({
  speciesCode: code,
  mode: r?.mode ?? ('learned' as Mode),
  threshold: appliedOf(r),
  learned: r?.learned ?? null,
  pinned: r?.pinned ?? null,
  computedAt: iso(r?.computedAt ?? null),
  votes: r?.votes ?? 0,
  confirmed: r?.confirmed ?? 0,
  rejected: r?.rejected ?? 0,
  precision: r?.precision ?? null,
});

const historyView = (h: HistoryRow) => ({ ...h, computedAt: new Date(h.computedAt).toISOString() });

const ACTION_OF = {
  pinned: 'admin.species_threshold_pinned',
  none: 'admin.species_threshold_reset',
  learned: 'admin.species_threshold_learned',
} as const;

export function createSpeciesThresholds(deps: {
  db: Db;
  clock: Clock;
  audit: AuditWriter;
  settings: Pick<SettingsService, 'teamSetting'>;
}) {
  const { db, clock, audit, settings } = deps;
  const repo = createThresholdsRepo(db);
  const targetOf = (tenantId: string) => settings.teamSetting(tenantId, 'species_threshold_target');
  const rules = (target: number) => ({ target, minVotes: MIN_VOTES, minEach: MIN_EACH, wilsonZ: WILSON_Z });

  async function detail(tenantId: string, code: string) {
    const [row, history, target] = await Promise.all([
      repo.find(tenantId, code),
      repo.history(tenantId, code, HISTORY_LIMIT),
      targetOf(tenantId),
    ]);
    return { tenantId, ...rules(target), ...view(code, row), history: history.map(historyView) };
  }

  return {
    /** The thresholds in force for these species of the team, by code (the recorder, before its transaction). */
    async appliedFor(tenantId: string, codes: readonly string[]): Promise<Map<string, number>> {
      if (codes.length === 0) return new Map();
      return new Map((await repo.applied(tenantId, codes)).map((a) => [a.speciesCode, a.threshold]));
    },

    /** The threshold in force for one species (the alert engine); null: none. */
    async thresholdOf(tenantId: string, code: string): Promise<number | null> {
      return appliedOf(await repo.find(tenantId, code));
    },

    /**
     * Learns the species' threshold again from the team's verified detections and records the
     * computation. Under the species row's lock, so votes settling at once are counted by the last.
     */
    async recompute(tenantId: string, code: string) {
      // Read before the transaction: on PGlite a read outside it would wait for it forever.
      const target = await targetOf(tenantId);
      const at = clock.now();
      return db.tx(async (tx) => {
        await repo.lock(tx, tenantId, code, at);
        const learned = learnThreshold(await repo.samples(tx, tenantId, code), target);
        await repo.saveLearned(tx, tenantId, code, learned, at);
        await repo.addHistory(tx, { id: newId(), tenantId, code, at, target, learned });
        return learned;
      });
    },

    /** GET /species-thresholds: every species of the team with a threshold row, and the rules. */
    async list(tenantId: string) {
      const [rows, target] = await Promise.all([repo.list(tenantId), targetOf(tenantId)]);
      return { tenantId, ...rules(target), thresholds: rows.map((r) => view(r.speciesCode, r)) };
    },

    /** GET /species-thresholds/:code: the species' threshold and its history (a species never voted on: nothing yet). */
    detail,

    /** PUT /species-thresholds/:code: pin a value, reset to none, or give it back to the votes; audited. */
    async set(actor: TeamActor, code: string, input: { mode: Mode; threshold?: number }) {
      const tenantId = actor.teamId;
      if (input.mode === 'pinned' && input.threshold === undefined)
        throw validationFailed('threshold is required to pin', { field: 'threshold' });
      if (input.mode !== 'pinned' && input.threshold !== undefined) {
        throw validationFailed('threshold is only given to pin', { field: 'threshold' });
      }
      const at = clock.now();
      await db.tx(async (tx) => {
        const before = await repo.lock(tx, tenantId, code, at);
        const pinned = input.mode === 'pinned' ? input.threshold! : null;
        await repo.setMode(tx, tenantId, code, { mode: input.mode, pinned, at, by: actor.userId ?? null });
        await audit.write(tx, actor, {
          action: ACTION_OF[input.mode],
          tenantId,
          targetType: 'species',
          targetId: code,
          details: {
            speciesCode: code,
            mode: input.mode,
            threshold: appliedOf({ ...before, mode: input.mode, pinned }),
            previous: { mode: before.mode, threshold: appliedOf(before) },
          },
        });
      });
      return detail(tenantId, code);
    },
  };
}

export type SpeciesThresholds = ReturnType<typeof createSpeciesThresholds>;
