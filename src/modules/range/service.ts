/**
 * The range filter (issue 35 point 1, docs/model.md "Range filter"): which species a satellite can
 * expect at its position in a week, from the hub's range model (BirdNET's species-range "meta
 * model", uploaded as a model of kind `range`), and the verdict on each species a chunk's model
 * heard: out of range when its score is below the team's threshold.
 *
 * - The team's lists override the model: a code on `range_include_species` is never out of range,
 *   one on `range_exclude_species` always is (with or without a range model).
 * - Without a range model, eBird's recent reports near the position when a key is configured
 *   (ebird-range.ts): a bird not reported there is out of range.
 * - Without a range model, a position, or a label for the species in the range model, nothing is
 *   judged: the detection is not flagged. Voices and noises (human_voice, anthropogenic) are never
 *   judged: they have no range.
 * - Verdicts flag, they never drop: the detection is stored and listed with `outOfRange` and
 *   raises no alert (the inference worker, docs/decisions.md "Range filter").
 * - Scores are cached per model, position (0.01°) and week; sessions per model id (files never
 *   change under an id).
 */
import type { Clock } from '../../core/clock.ts';
import type { Db } from '../../infra/db/index.ts';
import type { ObjectStorage } from '../../infra/storage/index.ts';
import { ModelError } from '../../infra/classifier/types.ts';
import { birdnetWeek, RangeModel } from '../../infra/classifier/range.ts';
import { parseLabels } from '../../infra/classifier/labels.ts';
import { notFound } from '../../core/errors.ts';
import type { ModelsService } from '../models/service.ts';
import type { DeviceService } from '../satellites/device-service.ts';
import type { SettingsService } from '../settings/service.ts';
import { createLabelSpecies } from '../species/catalog-sync.ts';
import type { SpeciesCatalog } from '../species/catalog.ts';
import type { LabelSpecies } from '../species/label-species.ts';
import type { EbirdService } from '../ebird/service.ts';
import { createEbirdRange } from './ebird-range.ts';

/** BirdNET-Analyzer's default location filter threshold (its `--sf_thresh`). */
export const DEFAULT_RANGE_THRESHOLD = 0.03;
/** Categories without a range: never flagged by the model. */
const UNJUDGED = new Set(['human_voice', 'anthropogenic']);
const SCORE_CACHE = 512;

/** A range model's row as the models service hands it out. */
type ModelRow = NonNullable<Awaited<ReturnType<ModelsService['activeRange']>>>;

export interface RangeSettings {
  threshold: number;
  include: readonly string[];
  exclude: readonly string[];
}

export interface RangeVerdict {
  outOfRange: boolean;
  /** What decided: the range model, eBird's recent reports, or a team list. */
  source: 'range_model' | 'ebird' | 'team_list';
  /** The range model's score (null: no range model judged it). */
  score: number | null;
}

interface Loaded {
  model: RangeModel;
  /** The species of each output, in output order. */
  species: LabelSpecies[];
  /** The species by lower-case code. */
  byCode: Map<string, LabelSpecies>;
}

interface Position {
  latitude: number;
  longitude: number;
  positionSource: 'telemetry' | 'profile';
}

/** A satellite's position: its latest GPS fix, else its profile's (as the map places it). */
function positionOf(p: {
  fixLatitude: number | null;
  fixLongitude: number | null;
  profileLatitude: number | null;
  profileLongitude: number | null;
}): Position | null {
  if (p.fixLatitude !== null && p.fixLongitude !== null)
    return { latitude: p.fixLatitude, longitude: p.fixLongitude, positionSource: 'telemetry' };
  if (p.profileLatitude !== null && p.profileLongitude !== null)
    return { latitude: p.profileLatitude, longitude: p.profileLongitude, positionSource: 'profile' };
  return null;
}

const lower = (codes: readonly string[]) => new Set(codes.map((c) => c.toLowerCase()));

export function createRangeService(deps: {
  db: Db;
  clock: Clock;
  storage: Pick<ObjectStorage, 'get'>;
  models: Pick<ModelsService, 'activeRange'>;
  devices: Pick<DeviceService, 'positions'>;
  settings: Pick<SettingsService, 'teamSettings'>;
  catalog: () => SpeciesCatalog;
  /** eBird (when a key is configured): the fallback where no range model is installed. */
  ebird?: Pick<EbirdService, 'recent' | 'configured'>;
}) {
  const ebird = deps.ebird ? createEbirdRange({ ebird: deps.ebird, clock: deps.clock, catalog: deps.catalog }) : null;
  const labelSpecies = createLabelSpecies(deps.db, deps.catalog, deps.clock);
  const sessions = new Map<string, Promise<Loaded>>();
  const scores = new Map<string, Map<string, number>>();

  function load(row: ModelRow): Promise<Loaded> {
    let made = sessions.get(row.id);
    if (made) return made;
    made = (async () => {
      const [bytes, labelsText] = await Promise.all([deps.storage.get(row.modelKey ?? ''), deps.storage.get(row.labelsKey ?? '')]);
      if (!bytes || !labelsText) throw new ModelError(`the files of range model ${row.id} are not in storage`);
      const labels = parseLabels(labelsText.toString('utf8'));
      const model = await RangeModel.load({ model: new Uint8Array(bytes), labelCount: labels.length, name: `range model "${row.name}"` });
      const species = await labelSpecies(row.id, labels);
      return { model, species, byCode: new Map(species.map((s) => [s.speciesCode.toLowerCase(), s])) };
    })();
    sessions.set(row.id, made);
    made.catch(() => sessions.delete(row.id));
    return made;
  }

  /** Per species code, the range model's score at a position in a week (the best of its labels for that code). */
  async function scoresAt(row: ModelRow, at: Position, week: number): Promise<Map<string, number>> {
    const key = `${row.id}:${at.latitude.toFixed(2)}:${at.longitude.toFixed(2)}:${week}`;
    const hit = scores.get(key);
    if (hit) {
      // Most recently used last: the oldest entry goes first when full.
      scores.delete(key);
      scores.set(key, hit);
      return hit;
    }
    const { model, species } = await load(row);
    const raw = await model.scores(at.latitude, at.longitude, week);
    const byCode = new Map<string, number>();
    species.forEach((s, i) => {
      const code = s.speciesCode.toLowerCase();
      byCode.set(code, Math.max(byCode.get(code) ?? 0, raw[i]));
    });
    scores.set(key, byCode);
    if (scores.size > SCORE_CACHE) scores.delete(scores.keys().next().value!);
    return byCode;
  }

  async function positionOfSatellite(tenantId: string, satelliteId: string): Promise<Position | null> {
    const [p] = await deps.devices.positions([tenantId], satelliteId);
    return p ? positionOf(p) : null;
  }

  /** The team's range settings as the worker and the view read them. */
  async function settingsOf(tenantId: string): Promise<RangeSettings> {
    const v = await deps.settings.teamSettings(tenantId);
    return rangeSettingsOf(v);
  }

  return {
    /**
     * The verdict on each species heard in a chunk recorded at `at` by the satellite, keyed by
     * species code (as given). Species nothing judges are absent from the map.
     */
    async judge(q: {
      tenantId: string;
      satelliteId: string;
      /** Where the chunk was recorded, when it says; else the satellite's position. */
      position?: { latitude: number; longitude: number } | null;
      at: Date;
      species: ReadonlyArray<{ speciesCode: string; category: string }>;
      settings: RangeSettings;
    }): Promise<Map<string, RangeVerdict>> {
      const out = new Map<string, RangeVerdict>();
      const include = lower(q.settings.include);
      const exclude = lower(q.settings.exclude);
      const open: Array<{ speciesCode: string; category: string }> = [];
      for (const s of q.species) {
        const code = s.speciesCode.toLowerCase();
        if (include.has(code)) out.set(s.speciesCode, { outOfRange: false, source: 'team_list', score: null });
        else if (exclude.has(code)) out.set(s.speciesCode, { outOfRange: true, source: 'team_list', score: null });
        else if (!UNJUDGED.has(s.category)) open.push(s);
      }
      if (open.length === 0) return out;
      const row = await deps.models.activeRange();
      if (!row && !ebird?.configured) return out;
      const at = q.position ? { ...q.position, positionSource: 'profile' as const } : await positionOfSatellite(q.tenantId, q.satelliteId);
      if (!at) return out;
      if (!row) {
        // eBird lists birds only: the other categories stay unjudged.
        const reported = await ebird!.reportedNear(at.latitude, at.longitude);
        if (!reported) return out;
        const canon = (code: string) => (deps.catalog().byCode(code)?.code ?? code).toLowerCase();
        for (const s of open)
          if (s.category === 'bird')
            out.set(s.speciesCode, { outOfRange: !reported.has(canon(s.speciesCode)), source: 'ebird', score: null });
        return out;
      }
      const byCode = await scoresAt(row, at, birdnetWeek(q.at));
      for (const s of open) {
        const score = byCode.get(s.speciesCode.toLowerCase());
        if (score === undefined) continue;
        out.set(s.speciesCode, { outOfRange: score < q.settings.threshold, source: 'range_model', score });
      }
      return out;
    },

    /**
     * GET /satellites/:id/expected-species: the species the range model (else eBird's recent reports) expects at the satellite's
     * position in a week (default: this week by the hub's clock), at or above the team's threshold,
     * most likely first; the team's include list added, its exclude list taken out.
     */
    async expected(tenantId: string, satelliteId: string, week?: number) {
      const [p] = await deps.devices.positions([tenantId], satelliteId);
      if (!p) throw notFound('No such satellite');
      const w = week ?? birdnetWeek(deps.clock.now());
      const settings = await settingsOf(tenantId);
      const at = positionOf(p);
      const row = await deps.models.activeRange();
      const base = {
        satelliteId,
        week: w,
        threshold: settings.threshold,
        latitude: at?.latitude ?? null,
        longitude: at?.longitude ?? null,
        positionSource: at?.positionSource ?? null,
        model: row ? { id: row.id, name: row.name } : null,
        excluded: [...settings.exclude],
      };
      const catalog = deps.catalog();
      const named = (code: string, score: number | null, reason: 'range_model' | 'ebird' | 'include_list') => {
        const c = catalog.byCode(code);
        return { code: c?.code ?? code, commonName: c?.commonName ?? code, scientificName: c?.scientificName ?? '', score, reason };
      };
      const exclude = lower(settings.exclude);
      const listed = new Map<string, ReturnType<typeof named>>();
      let available = false;
      let reason: string | null = null;
      const source: 'range_model' | 'ebird' | null = row ? 'range_model' : ebird?.configured ? 'ebird' : null;
      if (!source) reason = 'no_range_model';
      else if (!at) reason = 'no_position';
      else if (source === 'ebird') {
        const reported = await ebird!.reportedNear(at.latitude, at.longitude);
        if (!reported) reason = 'ebird_unavailable';
        else {
          available = true;
          for (const code of reported) {
            if (exclude.has(code)) continue;
            const c = catalog.byCode(code);
            if (c && c.category !== 'bird') continue;
            listed.set(code, named(code, null, 'ebird'));
          }
        }
      } else if (row) {
        available = true;
        const loaded = await load(row);
        const byCode = await scoresAt(row, at, w);
        for (const [code, score] of byCode) {
          if (score < settings.threshold || exclude.has(code)) continue;
          const sp = loaded.byCode.get(code);
          if (sp && UNJUDGED.has(sp.category)) continue;
          listed.set(code, {
            ...named(sp?.speciesCode ?? code, score, 'range_model'),
            commonName: sp?.commonName ?? code,
            scientificName: sp?.scientificName ?? '',
          });
        }
      }
      for (const code of settings.include) {
        if (!listed.has(code.toLowerCase()) && !exclude.has(code.toLowerCase()))
          listed.set(code.toLowerCase(), named(code, null, 'include_list'));
      }
      const species = [...listed.values()].sort((a, b) => (b.score ?? 2) - (a.score ?? 2) || a.commonName.localeCompare(b.commonName));
      return { ...base, source, available, reason, species };
    },

    /** Whether the hub has a range model to judge with. */
    hasRangeModel: async () => (await deps.models.activeRange()) !== null,

    /** The range model's expected species codes at a position this week (the "expected species" statistics); null without a range model. */
    async expectedCodesAt(latitude: number, longitude: number, at: Date, threshold = DEFAULT_RANGE_THRESHOLD): Promise<Set<string> | null> {
      const row = await deps.models.activeRange();
      if (!row) return null;
      const byCode = await scoresAt(row, { latitude, longitude, positionSource: 'profile' }, birdnetWeek(at));
      return new Set([...byCode].filter(([, s]) => s >= threshold).map(([c]) => c));
    },

    async close(): Promise<void> {
      const all = [...sessions.values()];
      sessions.clear();
      scores.clear();
      await Promise.allSettled(all.map((s) => s.then((l) => l.model.close())));
    },
  };
}

/** The range settings of a team's settings read (defaults when unset). */
export function rangeSettingsOf(v: Record<string, unknown> | undefined | null): RangeSettings {
  const threshold = v?.range_filter_threshold;
  const list = (x: unknown) => (Array.isArray(x) ? x.filter((c): c is string => typeof c === 'string') : []);
  return {
    threshold: typeof threshold === 'number' && Number.isFinite(threshold) ? threshold : DEFAULT_RANGE_THRESHOLD,
    include: list(v?.range_include_species),
    exclude: list(v?.range_exclude_species),
  };
}

export type RangeService = ReturnType<typeof createRangeService>;
