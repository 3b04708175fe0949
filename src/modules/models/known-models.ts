/**
 * The model families birders run (issue 31, "install in a minute"): what each one is, under
 * which licence, what it asks to be credited with, and where its publisher puts it. Chorus ships
 * no weights; this is the list the install page and `chorus models install` start from. A model
 * names one of these as its `knownFamily`; its input `family` (3s-48k, 5s-32k) is another thing,
 * read from the file by the classifier.
 *
 * Every fact here was read from the publisher's pages or the conversion's model card (what was
 * checked, and where, is in docs/decisions.md, "Installing models (issue 31)"). What could not be
 * checked is null, never guessed: a size in bytes or a SHA-256 we could not read ourselves stays
 * null, and the dashboard asks the admin for the publisher's checksum instead.
 */
import { Type, type Static } from 'typebox';
import { Nullable, OneOf } from '../../core/schemas.ts';
import { badRequest } from '../../core/errors.ts';
import { KNOWN_FAMILIES } from '../../infra/classifier/family.ts';

const Link = Type.Object({ label: Type.String(), url: Type.String() });

/** One downloadable file set of a family (a precision, a conversion). */
export const KnownVariant = Type.Object({
  id: Type.String(),
  name: Type.String(),
  /** The ONNX file, where its address is documented; null when the publisher offers no ONNX file. */
  modelUrl: Nullable(Type.String()),
  /** A labels file the hub reads as it is (one `Scientific name_Common name` per line), if one is published. */
  labelsUrl: Nullable(Type.String()),
  /** Who serves these files, when not the family's publisher (a conversion). */
  servedBy: Nullable(Type.String()),
  /** Exact size in bytes, only when read from a source that states it to the byte. */
  sizeBytes: Nullable(Type.Integer()),
  /** The size as the model card rounds it ("about 62 MB"), when that is all that is known. */
  approxSize: Nullable(Type.String()),
  /** SHA-256 of the ONNX file, only when read from its publisher. */
  sha256: Nullable(Type.String()),
});

export const KnownFamily = Type.Object({
  /** Stored with an installed model (`family`), so its detections carry the family's attribution. */
  id: Type.String(),
  name: Type.String(),
  version: Type.String(),
  publisher: Type.String(),
  input: Type.Object({ seconds: Type.Number(), sampleRate: Type.Integer(), samples: Type.Integer() }),
  /** The input family the hub reads from such a file (src/infra/classifier/family.ts): what the model's `family` will say. */
  inputFamily: OneOf(['3s-48k', '5s-32k', 'custom'] as const),
  classes: Nullable(Type.Integer()),
  licence: Type.Object({
    name: Type.String(),
    url: Type.String(),
    /** false: non-commercial only; null: the publisher's terms decide (read them). */
    commercialUse: Nullable(Type.Boolean()),
    attributionRequired: Type.Boolean(),
  }),
  /** The line shown beside the family's detections. */
  attribution: Type.String(),
  /** Where the publisher releases the model (release pages, not file addresses). */
  pages: Type.Array(Link),
  /** The hub writes the labels itself when none is given (BirdNET v2.4: its species catalog holds them in output order). */
  labelsFromCatalog: Type.Boolean(),
  notes: Type.String(),
  variants: Type.Array(KnownVariant),
});
export type KnownFamily = Static<typeof KnownFamily>;

const BIRDNET_ATTRIBUTION = 'Powered by BirdNET (birdnet.cornell.edu)';
const BIRDNET_PUBLISHER =
  'BirdNET team: K. Lisa Yang Center for Conservation Bioacoustics (Cornell Lab of Ornithology) and Chemnitz University of Technology';
const TPHAKALA = 'https://huggingface.co/tphakala/BirdNET-v2.4';

const FAMILIES: ReadonlyArray<Omit<KnownFamily, 'inputFamily'>> = [
  {
    id: 'birdnet-v2.4',
    name: 'BirdNET v2.4 (GLOBAL 6K)',
    version: '2.4',
    publisher: BIRDNET_PUBLISHER,
    input: { seconds: 3, sampleRate: 48_000, samples: 144_000 },
    classes: 6522,
    licence: { name: 'CC BY-NC-SA 4.0', url: 'https://creativecommons.org/licenses/by-nc-sa/4.0/', commercialUse: false, attributionRequired: true },
    attribution: BIRDNET_ATTRIBUTION,
    pages: [
      { label: 'BirdNET-Analyzer (model licence)', url: 'https://github.com/birdnet-team/BirdNET-Analyzer' },
      { label: 'Zenodo record 15050749 (TFLite and SavedModel)', url: 'https://zenodo.org/records/15050749' },
      { label: 'ONNX conversions (BirdNET-Go)', url: TPHAKALA },
    ],
    labelsFromCatalog: true,
    notes:
      'The BirdNET team publishes TFLite and TensorFlow files; the ONNX files are conversions by the BirdNET-Go author with the same ' +
      'input [batch, 144000] and 6,522 logits. Non-commercial use only; keep the attribution.',
    variants: [
      {
        id: 'birdnet-v2.4-fp32',
        name: 'FP32',
        modelUrl: `${TPHAKALA}/resolve/main/BirdNET_v2.4_fp32.onnx`,
        labelsUrl: `${TPHAKALA}/resolve/main/labels.txt`,
        servedBy: 'tphakala/BirdNET-v2.4 on Hugging Face (conversion)',
        sizeBytes: null,
        approxSize: 'about 62 MB, as its model card says',
        sha256: null,
      },
      {
        id: 'birdnet-v2.4-int8',
        name: 'INT8 classification head, FP32 backbone',
        modelUrl: `${TPHAKALA}/resolve/main/BirdNET_v2.4_int8_arm.onnx`,
        labelsUrl: `${TPHAKALA}/resolve/main/labels.txt`,
        servedBy: 'tphakala/BirdNET-v2.4 on Hugging Face (conversion)',
        sizeBytes: null,
        approxSize: 'about 47 MB, as its model card says',
        sha256: null,
      },
    ],
  },
  {
    id: 'birdnet-v3.0',
    name: 'BirdNET+ V3.0 (developer preview)',
    version: '3.0-preview3.1',
    publisher: BIRDNET_PUBLISHER,
    input: { seconds: 5, sampleRate: 32_000, samples: 160_000 },
    classes: null,
    licence: { name: 'CC BY-SA 4.0 and the BirdNET+ terms of use', url: 'https://creativecommons.org/licenses/by-sa/4.0/', commercialUse: null, attributionRequired: true },
    attribution: BIRDNET_ATTRIBUTION,
    pages: [
      { label: 'birdnet-V3.0-dev (licence, terms of use)', url: 'https://github.com/birdnet-team/birdnet-V3.0-dev' },
      { label: 'Zenodo record 20703646 (preview 3.1)', url: 'https://zenodo.org/records/20703646' },
    ],
    labelsFromCatalog: false,
    notes:
      'A developer preview: models and labels change between previews. It takes variable-length audio at 32 kHz (5 s windows as ' +
      'BirdNET-Go runs it) and about 11,000 classes (11,560 in preview 3). Its labels come as a CSV file, which needs turning into one ' +
      'label per line. The FP16 file was 259 MB before pruning in preview 3 (a hub accepts up to 512 MiB); the pruned size is ' +
      'not stated. Read the terms of use before any commercial use.',
    variants: [
      {
        id: 'birdnet-v3.0-preview3.1-fp16',
        name: 'Global 11K, FP16 pruned (ONNX)',
        modelUrl: 'https://zenodo.org/records/20703646/files/BirdNET+_V3.0-preview3.1_Global_11K_FP16_pruned.onnx?download=1',
        labelsUrl: null,
        servedBy: null,
        sizeBytes: null,
        approxSize: null,
        sha256: null,
      },
    ],
  },
  {
    id: 'perch-v2',
    name: 'Perch 2.0 (bird-vocalization-classifier)',
    version: '2',
    publisher: 'Google DeepMind',
    input: { seconds: 5, sampleRate: 32_000, samples: 160_000 },
    classes: 14_795,
    licence: { name: 'Apache 2.0', url: 'https://www.apache.org/licenses/LICENSE-2.0', commercialUse: true, attributionRequired: false },
    attribution: 'Perch 2.0 by Google DeepMind (Apache 2.0)',
    pages: [
      { label: 'Kaggle: google/bird-vocalization-classifier', url: 'https://www.kaggle.com/models/google/bird-vocalization-classifier' },
      { label: 'Perch 2.0 paper (arXiv 2508.04665)', url: 'https://arxiv.org/abs/2508.04665' },
    ],
    labelsFromCatalog: false,
    notes:
      'Google publishes a TensorFlow SavedModel on Kaggle, not ONNX; an ONNX conversion by a third party exists (about 409 MB as float32), ' +
      'within the 512 MiB a hub accepts; a worker holding it needs about 1 GB of memory. Its logits are meant for a softmax, not per-class sigmoids.',
    variants: [
      { id: 'perch-v2-savedmodel', name: 'TensorFlow SavedModel (Kaggle)', modelUrl: null, labelsUrl: null, servedBy: null, sizeBytes: null, approxSize: null, sha256: null },
    ],
  },
];

/** The catalog, each family with the input family the classifier reads from its input's length. */
export function knownFamilies(): KnownFamily[] {
  return FAMILIES.map((f) => ({ ...f, inputFamily: KNOWN_FAMILIES.find((k) => k.inputSamples === f.input.samples)?.family ?? 'custom' }));
}

export function knownFamily(id: string | null | undefined): KnownFamily | null {
  return id ? (knownFamilies().find((f) => f.id === id) ?? null) : null;
}

/** A family named at upload or install must be one of the catalog's (it decides the attribution shown). */
export function refuseUnknownFamily(id: string | null | undefined): void {
  if (id && !knownFamily(id)) {
    throw badRequest(`Unknown model family "${id}"; known: ${FAMILIES.map((f) => f.id).join(', ')}`, 'UNKNOWN_FAMILY');
  }
}
