/**
 * Classifier models (issue 5): hub admins upload an ONNX file and a labels file, list, edit,
 * delete and choose the hub default; teams pick one through the `inference_model` setting.
 *
 * An upload is checked before anything is stored: ONNX Runtime must load the file with one
 * float32 [1, samples] input whose length names a family (or whose rate and window the upload
 * gives: sampleRate, windowSeconds; src/infra/classifier/family.ts) and produce one score per
 * label on silence (onnx.ts), and the labels file must parse. The family, the rate, the window and
 * the embedding output are stored with the model. Labels the species catalog does not know (by
 * BirdNET label, eBird code or scientific name) are accepted and listed (`unknownLabels`); their
 * detections keep the label's names (docs/model.md).
 */
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import type { Db } from '../../infra/db/index.ts';
import type { Clock } from '../../core/clock.ts';
import type { Actor } from '../../core/actor.ts';
import type { AuditWriter } from '../audit/writer.ts';
import type { ObjectStorage } from '../../infra/storage/index.ts';
import { newId } from '../../core/crypto.ts';
import { badRequest, conflict, notFound } from '../../core/errors.ts';
import { BUILTIN_LABELS_PATH, Model } from '../../infra/classifier/onnx.ts';
import { RangeModel } from '../../infra/classifier/range.ts';
import { ModelError } from '../../infra/classifier/types.ts';
import { parseLabels } from '../../infra/classifier/labels.ts';
import { BUILTIN_MODEL_ID } from './model-store.ts';
import { speciesOfLabel } from '../species/label-species.ts';
import { speciesCatalog } from '../species/catalog.ts';
import { ensureModelMapped, mapModelLabels } from '../species/catalog-sync.ts';
import type { SettingReleases } from '../settings/releases.ts';
import type { LabelRow, SpeciesService } from '../species/service.ts';
import { createModelsRepo, type ModelRow } from './repo.ts';
import { knownFamily, refuseUnknownFamily } from './known-models.ts';

/**
 * Largest ONNX file accepted: BirdNET v2.4 exports are about 50-80 MB, BirdNET+ V3.0's FP16 file
 * 259 MB before pruning, Perch 2.0's ONNX conversion about 409 MB.
 */
export const MAX_MODEL_BYTES = 512 * 1024 * 1024;
export const MAX_LABELS_BYTES = 4 * 1024 * 1024;
/** How many unknown labels a model record lists (the count is always complete). */
const UNKNOWN_LISTED = 50;

export interface ModelUpload {
  name: string;
  version?: string | null;
  description?: string | null;
  /** A known family of the catalog (known-models.ts): its attribution goes with the model's detections. */
  knownFamily?: string | null;
  /** The attribution the model's licence asks for, when not the family's. */
  attribution?: string | null;
  /** Where the file came from, for an install from a URL. */
  sourceUrl?: string | null;
  model: Buffer;
  labels: Buffer;
  /** The model's input rate in Hz, when its input's length names no known family. */
  sampleRate?: number;
  /** The model's window in ms (the upload's windowSeconds × 1000). */
  windowMs?: number;
  /** `range`: a species-range model (position and week → one score per label), not a classifier. Default classifier. */
  kind?: 'classifier' | 'range';
}

/** The line a model's detections credit: its own attribution, else its family's, else none. */
export const modelAttribution = (m: { knownFamily: string | null; attribution: string | null }): string | null =>
  m.attribution ?? knownFamily(m.knownFamily)?.attribution ?? null;

export function presentModel(m: ModelRow) {
  return {
    id: m.id,
    name: m.name,
    version: m.version,
    description: m.description,
    enabled: m.enabled,
    isDefault: m.isDefault,
    builtin: m.id === BUILTIN_MODEL_ID,
    kind: m.kind,
    labelCount: m.labelCount,
    unknownLabelCount: m.unknownLabels.length,
    unknownLabels: m.unknownLabels.slice(0, UNKNOWN_LISTED),
    modelBytes: m.modelBytes,
    sha256: m.modelSha256,
    knownFamily: m.knownFamily,
    attribution: modelAttribution(m),
    sourceUrl: m.sourceUrl,
    uploadedBy: m.uploadedBy,
    createdAt: new Date(m.createdAt).toISOString(),
    updatedAt: new Date(m.updatedAt).toISOString(),
    family: m.family,
    sampleRate: m.sampleRate,
    windowSeconds: m.windowMs / 1000,
    inputSamples: m.inputSamples,
    embeddingOutput: m.embeddingOutput,
    embeddingSize: m.embeddingSize,
  };
}

/** One output of a model as the admin API shows it; `own`: a species only this model's labels brought. */
export const presentLabel = (l: LabelRow) => ({
  index: l.index,
  label: l.label,
  speciesCode: l.speciesCode,
  scientificName: l.scientificName,
  commonName: l.commonName,
  category: l.category,
  own: l.source === 'model',
});

export function createModelsService(deps: {
  db: Db;
  clock: Clock;
  audit: AuditWriter;
  storage: ObjectStorage;
  /** The species table each model's outputs map into. */
  species: Pick<SpeciesService, 'find' | 'labelsPage' | 'label' | 'setLabelSpecies'>;
  /** The settings module's release of team values naming a deleted model. */
  settingReleases: SettingReleases;
}) {
  const { db, clock, audit, storage, species } = deps;
  const repo = createModelsRepo(db);

  /** Maps a model whose labels are not in the species table yet, from its labels file. */
  async function ensureMapped(m: ModelRow): Promise<void> {
    await ensureModelMapped(db, speciesCatalog(), m.id, m.labelCount, async () => {
      const text = m.id === BUILTIN_MODEL_ID ? await fs.readFile(BUILTIN_LABELS_PATH, 'utf8') : (await storage.get(m.labelsKey ?? ''))?.toString('utf8');
      if (text === undefined) throw conflict(`The labels file of model ${m.id} is not in storage`, 'MODEL_FILES_MISSING');
      return parseLabels(text);
    }, clock.now());
  }

  async function require(id: string, tx: Db = db): Promise<ModelRow> {
    const m = await repo.find(id, tx);
    if (!m) throw notFound('No such model');
    return m;
  }

  return {
    list: async () => ({ models: (await repo.list()).map(presentModel) }),

    /** The model a team's pick runs: the pick when enabled, else the hub default (the worker's model store). */
    resolve: repo.resolve,

    /** The range model the hub judges with (the newest enabled one), null when none (src/modules/range). */
    activeRange: repo.activeRange,

    get: async (id: string) => presentModel(await require(id)),

    /** The settings writer's check of `inference_model` values: the model must exist and be enabled. */
    async refuseModelRef(id: string): Promise<string | null> {
      const m = await repo.find(id);
      if (!m) return `names no model (${id})`;
      if (m.kind !== 'classifier') return `names a range model (${id}), not a classifier`;
      return m.enabled ? null : `names a disabled model (${id})`;
    },

    /** What a detection made by model `id` credits (detection detail); null for an unknown or deleted model. */
    async attributionOf(id: string): Promise<string | null> {
      const m = await repo.credit(id);
      return m ? modelAttribution(m) : null;
    },

    async upload(actor: Actor, input: ModelUpload) {
      refuseUnknownFamily(input.knownFamily);
      let labels;
      try {
        labels = parseLabels(input.labels.toString('utf8'));
      } catch (err) {
        throw badRequest(`The labels file is refused: ${(err as Error).message}`, 'INVALID_LABELS');
      }
      if (labels.length === 0) throw badRequest('The labels file is empty', 'INVALID_LABELS');
      const kind = input.kind ?? 'classifier';
      let loaded: Pick<Model, 'window' | 'embeddingOutput' | 'embeddingSize'>;
      try {
        if (kind === 'range') {
          const range = await RangeModel.load({ model: new Uint8Array(input.model), labelCount: labels.length, name: 'the uploaded range model' });
          await range.close();
          // A range model hears no audio: its window columns keep placeholders (migration 0033).
          loaded = { window: { family: 'custom', sampleRate: 0, windowMs: 0, inputSamples: 3 }, embeddingOutput: null, embeddingSize: 0 };
        } else {
          const model = await Model.load({
            model: new Uint8Array(input.model),
            labels: labels.map((l) => l.label),
            name: 'the uploaded model',
            threads: 1,
            window: { sampleRate: input.sampleRate, windowMs: input.windowMs },
          });
          loaded = model;
          await model.close();
        }
      } catch (err) {
        if (err instanceof ModelError) throw badRequest(err.message, 'INVALID_MODEL');
        throw err;
      }
      const catalog = speciesCatalog();
      const unknownLabels = labels.filter((l) => !speciesOfLabel(catalog, l).known).map((l) => l.label);

      const id = newId();
      const modelKey = `models/${id}/model.onnx`;
      const labelsKey = `models/${id}/labels.txt`;
      await storage.put(modelKey, input.model, 'application/octet-stream');
      await storage.put(labelsKey, input.labels, 'text/plain; charset=utf-8');
      try {
        await db.tx(async (tx) => {
          await repo.insert(tx, {
            id, name: input.name, version: input.version ?? null, description: input.description ?? null,
            modelKey, labelsKey, modelBytes: input.model.length, modelSha256: crypto.createHash('sha256').update(input.model).digest('hex'),
            labelCount: labels.length, unknownLabels, uploadedBy: actor.userId, createdAt: clock.now(),
            family: loaded.window.family, sampleRate: loaded.window.sampleRate, windowMs: loaded.window.windowMs,
            inputSamples: loaded.window.inputSamples, embeddingOutput: loaded.embeddingOutput, embeddingSize: loaded.embeddingSize,
            knownFamily: input.knownFamily ?? null, attribution: input.attribution ?? null, sourceUrl: input.sourceUrl ?? null, kind,
          });
          // Its labels map into the species table now, so its detections' codes are fixed from the start.
          await mapModelLabels(tx, catalog, id, labels, clock.now());
          await audit.write(tx, actor, {
            action: 'admin.birdnet_model_uploaded', targetType: 'model', targetId: id,
            details: {
              name: input.name, version: input.version ?? null, labelCount: labels.length, unknownLabelCount: unknownLabels.length, modelBytes: input.model.length,
              family: loaded.window.family, sampleRate: loaded.window.sampleRate, windowMs: loaded.window.windowMs,
              knownFamily: input.knownFamily ?? null, sourceUrl: input.sourceUrl ?? null, kind,
            },
          });
        });
      } catch (err) {
        await storage.deleteMany([modelKey, labelsKey]).catch(() => {});
        throw err;
      }
      return presentModel(await require(id));
    },

    async update(actor: Actor, id: string, patch: { name?: string; description?: string | null; enabled?: boolean; version?: string | null }) {
      await db.tx(async (tx) => {
        const m = await require(id, tx);
        if (patch.enabled === false && m.isDefault) throw conflict('The default model cannot be disabled: choose another default first', 'MODEL_IS_DEFAULT');
        await repo.update(tx, id, patch, clock.now());
        await audit.write(tx, actor, { action: 'admin.birdnet_model_updated', targetType: 'model', targetId: id, details: { ...patch } });
      });
      return presentModel(await require(id));
    },

    async setDefault(actor: Actor, id: string) {
      await db.tx(async (tx) => {
        const m = await require(id, tx);
        if (!m.enabled) throw conflict('A disabled model cannot be the default: enable it first', 'MODEL_DISABLED');
        if (m.kind !== 'classifier') throw conflict('A range model cannot be the default classifier', 'MODEL_IS_RANGE');
        const previous = await repo.setDefault(tx, id, clock.now());
        await audit.write(tx, actor, { action: 'admin.birdnet_model_set_default', targetType: 'model', targetId: id, details: { previous } });
      });
      return presentModel(await require(id));
    },

    /** GET /admin/models/:id/labels: the model's outputs in order and the species each maps into. */
    async labels(id: string, q: { search?: string; own?: boolean; limit: number; offset: number }) {
      await ensureMapped(await require(id));
      const page = await species.labelsPage(id, q);
      return { labels: page.rows.map(presentLabel), total: page.total };
    },

    /**
     * PUT /admin/models/:id/labels/:index: maps one output into another species of the table (a
     * mislabelled class, or a model's own species that the catalog has after all). Detections
     * stored earlier keep their species; workers follow on their next job (the model's labels_version moves).
     */
    async remapLabel(actor: Actor, id: string, index: number, speciesCode: string) {
      await ensureMapped(await require(id));
      return db.tx(async (tx) => {
        const label = await species.label(tx, id, index);
        if (!label) throw notFound('No such label: the model has fewer outputs');
        const target = await species.find(speciesCode, tx);
        if (!target) throw badRequest(`No species ${JSON.stringify(speciesCode)} in the species table`, 'UNKNOWN_SPECIES');
        if (target.code === label.speciesCode) return presentLabel(label);
        await species.setLabelSpecies(tx, id, index, target.code);
        await repo.labelsChanged(tx, id, clock.now());
        await audit.write(tx, actor, {
          action: 'admin.birdnet_model_updated', targetType: 'model', targetId: id,
          details: { labelIndex: index, label: label.label, from: label.speciesCode, to: target.code },
        });
        return presentLabel((await species.label(tx, id, index))!);
      });
    },

    async remove(actor: Actor, id: string) {
      const removed = await db.tx(async (tx) => {
        const m = await require(id, tx);
        if (m.id === BUILTIN_MODEL_ID) throw conflict('The built-in model cannot be deleted', 'MODEL_BUILTIN');
        if (m.isDefault) throw conflict('The default model cannot be deleted: choose another default first', 'MODEL_IS_DEFAULT');
        await repo.remove(tx, id);
        // Teams that picked this model follow the hub default again, in the same transaction.
        const teamsReleased = await deps.settingReleases.releaseTeamValue(tx, 'inference_model', id);
        await audit.write(tx, actor, { action: 'admin.birdnet_model_deleted', targetType: 'model', targetId: id, details: { name: m.name, teamsReleased } });
        return m;
      });
      // Files go after the commit: a failed delete leaves orphan objects, never a row without files.
      // Workers holding its session keep it until they restart; no job resolves to it any more.
      await storage.deleteMany([removed.modelKey, removed.labelsKey].filter((k): k is string => !!k)).catch(() => {});
    },
  };
}

export type ModelsService = ReturnType<typeof createModelsService>;
