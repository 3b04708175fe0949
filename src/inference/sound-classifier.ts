/**
 * The reference satellite's optional sound classifier (src/satellite/sound-filter.ts), made of
 * the hub's ONNX runner and species catalog: `chorus satellite --classifier builtin|MODEL.onnx`.
 * Every output's confidence, with the category its label has in the catalog (labels the catalog
 * does not know count as birds, so an unknown label never drops a chunk for privacy).
 */
import { loadBuiltinModel, loadModel } from '../infra/classifier/onnx.ts';
import { speciesCatalog } from '../modules/species/catalog.ts';
import { speciesOfLabel } from '../modules/species/label-species.ts';

export interface SoundClassifierSpec {
  /** 'builtin', or the path of an ONNX model in BirdNET's contract (docs/model.md). */
  model: string;
  /** The labels file of a model path (BirdNET's `Scientific_Common` lines). */
  labels?: string;
}

export async function loadSoundClassifier(spec: SoundClassifierSpec) {
  const model =
    spec.model === 'builtin'
      ? await loadBuiltinModel({ threads: 1 })
      : await loadModel({
          model: spec.model,
          labels: spec.labels ?? spec.model.replace(/\.onnx$/i, '_Labels.txt'),
          threads: 1,
        });
  const catalog = speciesCatalog();
  // As the hub maps labels (eBird codes included), except that a label the catalog does not know
  // counts as a bird here, not as another animal: an unknown label never drops a chunk for privacy.
  const categories = model.labels.map((l) => {
    const species = speciesOfLabel(catalog, l);
    return species.known ? species.category : 'bird';
  });
  return {
    description: spec.model === 'builtin' ? 'the built-in model' : model.name,
    async classify(samples: Int16Array) {
      const confidences = await model.confidences(samples);
      return model.labels.map((l, i) => ({ label: l.label, category: categories[i], confidence: confidences[i] }));
    },
    close: () => model.close(),
  };
}
