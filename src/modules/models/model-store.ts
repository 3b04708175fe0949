/**
 * Which model a team's chunk runs through, and the loaded sessions (issue 5 "models").
 *
 * - A team picks a model with the team setting `inference_model`; null, an unknown id or a
 *   disabled model means the hub default (table `inference_models`, one row `is_default`).
 * - Sessions are cached by model id: an uploaded model's files never change under its id, so
 *   a session stays good until the model is deleted. A load that fails is forgotten, so the next
 *   job tries again (after the admin fixed whatever was wrong) and only that job fails.
 * - Labels map into the species catalog by exact label, else by scientific name. A label the
 *   catalog does not know keeps its own names, the catalog's derived code (`x-` + scientific
 *   name) and category `other_animal` (docs/model.md). The mapping is written to the species
 *   table (model_labels) the first time a model is uploaded or loaded, and read from there after.
 */
import type { ObjectStorage } from '../../infra/storage/index.ts';
import type { ModelRow, ModelsRepo } from './repo.ts';
import { loadBuiltinModel, Model } from '../../infra/classifier/onnx.ts';
import { ModelError, type Classifier, type ModelLabel } from '../../infra/classifier/types.ts';
import type { LabelSpecies } from '../species/label-species.ts';

export const BUILTIN_MODEL_ID = 'builtin';

export interface LoadedModel {
  id: string;
  classifier: Classifier;
  /** The species of each output, as the species table maps the model's labels. */
  species: readonly LabelSpecies[];
}

/** The species of a model's outputs (src/modules/species/catalog-sync.ts createLabelSpecies). */
export type LabelSpeciesReader = (modelId: string, labels: readonly ModelLabel[]) => Promise<LabelSpecies[]>;

export interface ModelStore {
  /** The model for a team's pick (null = hub default), loaded or from the cache. */
  forTeam(picked: string | null): Promise<LoadedModel>;
  /** Sessions currently held, by model id. */
  cached(): string[];
  /** Forgets and releases a model's session (after delete). */
  evict(id: string): Promise<void>;
  close(): Promise<void>;
}

export function createModelStore(deps: {
  repo: Pick<ModelsRepo, 'resolve'>;
  storage: Pick<ObjectStorage, 'get'>;
  labelSpecies: LabelSpeciesReader;
  threads?: number;
}): ModelStore {
  const sessions = new Map<string, Promise<Model>>();
  // The species of each model's outputs, read again when its labels_version moved (a remapped
  // label), so every worker process follows a remap on its next job.
  const mapped = new Map<string, { version: number; species: Promise<LabelSpecies[]> }>();

  async function load(row: ModelRow): Promise<Model> {
    // Off the thread: the worker's statements for the chunks before and after move while it runs.
    if (row.id === BUILTIN_MODEL_ID) return loadBuiltinModel({ threads: deps.threads ?? 1, offThread: true });
    if (!row.modelKey || !row.labelsKey) throw new ModelError(`model ${row.id} has no files`);
    const [bytes, labels] = await Promise.all([deps.storage.get(row.modelKey), deps.storage.get(row.labelsKey)]);
    if (!bytes) throw new ModelError(`the ONNX file of model ${row.id} is not in storage`);
    if (!labels) throw new ModelError(`the labels file of model ${row.id} is not in storage`);
    return Model.load({
      model: new Uint8Array(bytes),
      labels: { text: labels.toString('utf8') },
      threads: deps.threads ?? 1,
      offThread: true,
      name: `model "${row.name}"`,
      // As stored at upload: what a custom family's length alone would not say.
      window: { sampleRate: row.sampleRate, windowMs: row.windowMs },
    });
  }

  return {
    async forTeam(picked) {
      const row = await deps.repo.resolve(picked);
      if (!row) throw new ModelError('no model is available: the hub has no default model');
      let session = sessions.get(row.id);
      // A model whose thread died is loaded again.
      if (session && !(await session.then((m) => m.usable, () => true))) {
        if (sessions.get(row.id) === session) sessions.delete(row.id);
        session = undefined;
      }
      if (!session) {
        const made = load(row);
        sessions.set(row.id, made);
        made.catch(() => {
          if (sessions.get(row.id) === made) sessions.delete(row.id);
        });
        session = made;
      }
      const model = await session;
      let labels = mapped.get(row.id);
      if (!labels || labels.version !== row.labelsVersion) {
        const made = { version: row.labelsVersion, species: deps.labelSpecies(row.id, model.labels) };
        mapped.set(row.id, made);
        made.species.catch(() => {
          if (mapped.get(row.id) === made) mapped.delete(row.id);
        });
        labels = made;
      }
      return { id: row.id, classifier: model, species: await labels.species };
    },
    cached: () => [...sessions.keys()],
    async evict(id) {
      const s = sessions.get(id);
      sessions.delete(id);
      mapped.delete(id);
      await s?.then((m) => m.close()).catch(() => {});
    },
    async close() {
      const all = [...sessions.values()];
      sessions.clear();
      mapped.clear();
      await Promise.allSettled(all.map((s) => s.then((m) => m.close())));
    },
  };
}
