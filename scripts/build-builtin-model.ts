/**
 * Generates the built-in demonstration model: models/builtin/model.onnx and labels.txt.
 *
 *   npm run build:model
 *
 * The graph has BirdNET's interface (input float32 [1, 144000] = 3 s at 48 kHz in [-1, 1];
 * output float32 [1, 8] logits, one per label). It recognises the five synthetic species of the
 * reference satellite's soundscape (src/satellite/soundscape.ts) by the energy in their frequency
 * bands, and three of BirdNET's non-bird classes (Human vocal, Engine, Noise) from the same
 * spectrum, so that speech, traffic and broadband noise are not called birds. docs/model.md says
 * what it can and cannot do. The graph:
 *
 *   frames  = Reshape(input, [300, 480])                  10 ms frames, no overlap
 *   W       = [hann·cos(ωk·n) | hann·sin(ωk·n)]           DFT basis of the bins used, 100 Hz
 *                                                          apart (ONNX Runtime folds it into a
 *                                                          constant at load)
 *   power   = (frames × W)²                               [300, 2K]
 *   region  = power × regionMean                          [300, 12]: energy per bin of each
 *                                                          species' band, the noise floor
 *                                                          (9.6–12 kHz) and six gaps between
 *                                                          the bands where no synthetic bird sings
 *   level   = log(mean over frames of region)             [1, 12]
 *   r       = level(band) − max(level(floor), level(gap on either side of the band))
 *
 * A call fills its band and not the gaps beside it, so r is large; noise, traffic and speech
 * fill the gaps as much as the band, so r stays near 0 whatever the level. The non-bird classes
 * read three more features: the level of the quietest voice gap (100–300 Hz, 1.1–1.3 kHz,
 * 2.7–2.8 kHz) over the floor, how much their level swings from frame to frame (speech comes in syllables),
 * and how far the quietest gap stands over the floor (broadband sound lifts them all). A chunk that reads as a voice
 * pushes the bird logits down too: a person talking is not a bird.
 *
 * Calibration: the graph is first built to output its raw features and run on near clear calls
 * and plain noise at five levels (many seeds). Each band's bias centres its logit on noise; the
 * build stops if noise comes near the minimum confidence or a near call does not clear it by a
 * margin, and if a non-bird class fires on the synthetic calls or on plain noise.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import onnxProto from 'onnx-proto';
import { renderChunk, SPECIES } from '../src/satellite/soundscape.ts';
import { loadModel } from '../src/infra/classifier/onnx.ts';
import { MODEL_INPUT_SAMPLES, MODEL_SAMPLE_RATE } from '../src/infra/classifier/types.ts';

const { onnx } = onnxProto;

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const outDir = path.join(root, 'models', 'builtin');

const FRAME = 480; // 10 ms; 144000 = 300 × 480
const FRAMES = MODEL_INPUT_SAMPLES / FRAME;
const BIN_HZ = MODEL_SAMPLE_RATE / FRAME; // 100 Hz
/** A band takes the bins whose centre lies within this distance outside the species' band (the window's main lobe). */
const BAND_PAD_HZ = 100;
const EPS = 1e-10;
const OPSET = 13;

/** BirdNET's labels of the non-bird classes the model gives, in output order after the species. */
export const NON_BIRD_LABELS = ['Human vocal_Human vocal', 'Engine_Engine', 'Noise_Noise'] as const;
export const LABELS = [...SPECIES.map((s) => s.label), ...NON_BIRD_LABELS];

type Tensor = InstanceType<typeof onnx.TensorProto>;

function floatTensor(name: string, dims: number[], values: ArrayLike<number>): Tensor {
  const data = Float32Array.from(values);
  if (data.length !== dims.reduce((a, b) => a * b, 1)) throw new Error(`${name}: ${data.length} values for dims ${dims}`);
  return onnx.TensorProto.create({ name, dims, dataType: onnx.TensorProto.DataType.FLOAT, rawData: new Uint8Array(data.buffer) });
}

function int64Tensor(name: string, values: number[]): Tensor {
  const data = BigInt64Array.from(values.map((v) => BigInt(v)));
  return onnx.TensorProto.create({
    name,
    dims: [values.length],
    dataType: onnx.TensorProto.DataType.INT64,
    rawData: new Uint8Array(data.buffer),
  });
}

function node(opType: string, inputs: string[], output: string, attrs: Record<string, number> = {}) {
  return onnx.NodeProto.create({
    opType,
    input: inputs,
    output: [output],
    name: output,
    attribute: Object.entries(attrs).map(([name, i]) =>
      onnx.AttributeProto.create({ name, i, type: onnx.AttributeProto.AttributeType.INT }),
    ),
  });
}

function valueInfo(name: string, dims: number[]) {
  return onnx.ValueInfoProto.create({
    name,
    type: onnx.TypeProto.create({
      tensorType: onnx.TypeProto.Tensor.create({
        elemType: onnx.TensorProto.DataType.FLOAT,
        shape: onnx.TensorShapeProto.create({ dim: dims.map((d) => onnx.TensorShapeProto.Dimension.create({ dimValue: d })) }),
      }),
    }),
  });
}

const bins = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

/**
 * The regions (lists of 100 Hz bins) the model measures: the five bands (0–4), the noise floor
 * (5) and six gaps (6–11). Each gap keeps at least two bins (beyond the Hann window's main lobe)
 * from the nearest pitch a synthetic call reaches, so a clear call does not fill it.
 */
function regions() {
  const bands = SPECIES.map((s) => bins(Math.ceil((s.bandHz[0] - BAND_PAD_HZ) / BIN_HZ), Math.floor((s.bandHz[1] + BAND_PAD_HZ) / BIN_HZ)));
  const floor = bins(96, 120); // 9.6–12 kHz: above every call
  const gaps = [
    bins(1, 3), // 100–300 Hz: a voice's fundamental, engines, wind
    bins(11, 13), // 1.1–1.3 kHz: cuckoo | blackbird
    bins(27, 28), // 2.7–2.8 kHz: blackbird | chaffinch
    bins(45, 46), // 4.5–4.6 kHz: chaffinch | great tit
    bins(64, 65), // 6.4–6.5 kHz: great tit | robin
    bins(90, 95), // 9.0–9.5 kHz: robin | floor
  ];
  const list = [...bands, floor, ...gaps];
  const all = list.flat();
  if (new Set(all).size !== all.length) throw new Error('the regions overlap');
  return { list, all: [...all].sort((a, b) => a - b) };
}
const FLOOR = 5;
const GAP = (g: number) => 6 + g;
/** The gaps each band is compared with. The cuckoo's left is wind's range (under 300 Hz), so it uses its right gap only. */
const LEFT_GAP = [1, 1, 2, 3, 4].map(GAP);
const RIGHT_GAP = [1, 2, 3, 4, 5].map(GAP);
const VOICE_GAPS = [0, 1, 2].map(GAP);
/** Broadband sound lifts all of these over the floor; a call leaks into one or two at most. */
const BROAD_GAPS = [1, 2, 3, 4].map(GAP);

/** The features the logits are made of, in the order of the measuring graph's output. */
export const FEATURES = ['r0', 'r1', 'r2', 'r3', 'r4', 'voiceLevel', 'voiceSwing', 'lowLevel', 'broad'] as const;

/** One non-bird class: the minimum of linear terms `slope × (feature − at)`, each a condition that must hold. */
type Terms = readonly { feature: 'voiceLevel' | 'voiceSwing' | 'lowLevel' | 'broad'; slope: number; at: number }[];

export interface ModelParams {
  /** Per band: logit = scale × r + bias, then the soft ceiling. */
  scale: number[];
  bias: number[];
  cap: number;
  voice: Terms;
  engine: Terms;
  noise: Terms;
  /** How much of a positive voice logit is taken off every bird logit. */
  voiceMutesBirds: number;
}

/** The graph: its raw features [1, 9] (for calibration) without params, the logits [1, 8] with. */
export function buildGraph(params: ModelParams | null): Uint8Array {
  const { list, all } = regions();
  const K = all.length;
  const R = list.length;
  const B = SPECIES.length;
  const column = new Map(all.map((k, i) => [k, i]));
  // Energy per bin of each region: cos² and sin² of its bins, averaged.
  const regionMean = new Float32Array(2 * K * R);
  list.forEach((regionBins, r) => {
    for (const k of regionBins) for (const half of [0, K]) regionMean[(half + column.get(k)!) * R + r] = 1 / regionBins.length;
  });
  const voiceSum = new Float32Array(R);
  for (const g of VOICE_GAPS) voiceSum[g] = 1;

  const n = bins(0, FRAME - 1);
  const hann = n.map((i) => 0.5 - 0.5 * Math.cos((2 * Math.PI * i) / FRAME)); // periodic Hann
  const omega = all.map((k) => (2 * Math.PI * k) / FRAME);

  const initializer = [
    int64Tensor('frame_shape', [FRAMES, FRAME]),
    floatTensor('n', [FRAME, 1], n),
    floatTensor('hann', [FRAME, 1], hann),
    floatTensor('omega', [1, K], omega),
    floatTensor('region_mean', [2 * K, R], regionMean),
    floatTensor('voice_sum', [R, 1], voiceSum),
    floatTensor('frame_mean', [1, FRAMES], new Array(FRAMES).fill(1 / FRAMES)),
    floatTensor('eps', [], [EPS]),
    int64Tensor('i_bands', bins(0, B - 1)),
    int64Tensor('i_floor', [FLOOR]),
    int64Tensor('i_left', LEFT_GAP),
    int64Tensor('i_right', RIGHT_GAP),
    int64Tensor('i_low', [GAP(0)]),
    ...[...new Set([...VOICE_GAPS, ...BROAD_GAPS])].map((g) => int64Tensor(`i_gap${g}`, [g])),
  ];
  const gather = (from: string, index: string, out: string) => node('Gather', [from, index], out, { axis: 1 });
  const nodes = [
    node('Mul', ['n', 'omega'], 'angle'),
    node('Cos', ['angle'], 'cos'),
    node('Sin', ['angle'], 'sin'),
    node('Mul', ['cos', 'hann'], 'basis_cos'),
    node('Mul', ['sin', 'hann'], 'basis_sin'),
    node('Concat', ['basis_cos', 'basis_sin'], 'basis', { axis: 1 }),
    node('Reshape', ['input', 'frame_shape'], 'frames'),
    node('MatMul', ['frames', 'basis'], 'spectrum'),
    node('Mul', ['spectrum', 'spectrum'], 'power'),
    node('MatMul', ['power', 'region_mean'], 'region_frames'),
    node('MatMul', ['frame_mean', 'region_frames'], 'region'),
    node('Add', ['region', 'eps'], 'region_eps'),
    node('Log', ['region_eps'], 'level'),
    // Birds: each band over the loudest of the floor and its neighbouring gaps.
    gather('level', 'i_bands', 'level_band'),
    gather('level', 'i_floor', 'level_floor'),
    gather('level', 'i_left', 'level_left'),
    gather('level', 'i_right', 'level_right'),
    node('Max', ['level_floor', 'level_left', 'level_right'], 'level_ref'),
    node('Sub', ['level_band', 'level_ref'], 'r'),
    // The voice gaps frame by frame: their level over the floor and the spread of their log level
    // over the frames (the floor's mean is added so that digital silence between words stays finite).
    node('MatMul', ['region_frames', 'voice_sum'], 'voice_frames'),
    gather('region', 'i_floor', 'floor_energy'),
    node('Add', ['voice_frames', 'floor_energy'], 'voice_frames_f'),
    node('Add', ['voice_frames_f', 'eps'], 'voice_frames_e'),
    node('Log', ['voice_frames_e'], 'voice_log'),
    node('MatMul', ['frame_mean', 'voice_log'], 'voice_log_mean'),
    node('Mul', ['voice_log', 'voice_log'], 'voice_log_sq'),
    node('MatMul', ['frame_mean', 'voice_log_sq'], 'voice_log_sq_mean'),
    node('Mul', ['voice_log_mean', 'voice_log_mean'], 'voice_log_mean_sq'),
    node('Sub', ['voice_log_sq_mean', 'voice_log_mean_sq'], 'voice_var'),
    node('Relu', ['voice_var'], 'voice_var_pos'),
    node('Sqrt', ['voice_var_pos'], 'voiceSwing'),
    // The quietest voice gap over the floor: a voice's harmonics fill all three, a tone one at most.
    ...VOICE_GAPS.map((g) => gather('level', `i_gap${g}`, `level_gap${g}`)),
    node(
      'Min',
      VOICE_GAPS.map((g) => `level_gap${g}`),
      'level_quietest_voice_gap',
    ),
    node('Sub', ['level_quietest_voice_gap', 'level_floor'], 'voiceLevel'),
    gather('level', 'i_low', 'level_low'),
    node('Sub', ['level_low', 'level_floor'], 'lowLevel'),
    // How far the quietest of the gaps stands over the floor.
    ...BROAD_GAPS.filter((g) => !VOICE_GAPS.includes(g)).map((g) => gather('level', `i_gap${g}`, `level_gap${g}`)),
    node(
      'Min',
      BROAD_GAPS.map((g) => `level_gap${g}`),
      'level_quietest_gap',
    ),
    node('Sub', ['level_quietest_gap', 'level_floor'], 'broad'),
  ];
  if (!params) {
    nodes.push(node('Concat', ['r', 'voiceLevel', 'voiceSwing', 'lowLevel', 'broad'], 'features', { axis: 1 }));
  } else {
    initializer.push(
      floatTensor('scale', [B], params.scale),
      floatTensor('bias', [B], params.bias),
      floatTensor('cap', [], [params.cap]),
      floatTensor('one', [], [1]),
      floatTensor('voice_mutes', [], [params.voiceMutesBirds]),
    );
    const nonBird = (name: string, terms: Terms) => {
      const outs = terms.map((t, i) => {
        const out = `${name}_${i}`;
        initializer.push(floatTensor(`${out}_slope`, [], [t.slope]), floatTensor(`${out}_at`, [], [t.at]));
        nodes.push(node('Sub', [t.feature, `${out}_at`], `${out}_x`), node('Mul', [`${out}_x`, `${out}_slope`], out));
        return out;
      });
      nodes.push(node('Min', outs, name));
    };
    nonBird('voice', params.voice);
    nonBird('engine', params.engine);
    nonBird('noise', params.noise);
    nodes.push(
      node('Mul', ['r', 'scale'], 'scaled'),
      node('Add', ['scaled', 'bias'], 'raw'),
      // A soft ceiling on the positive side: x / (1 + x / cap) for x > 0, x itself below 0.
      // Clear calls still rank by clarity (0.8 … 0.95) and no call reads a flat 100 %.
      node('Relu', ['raw'], 'pos'),
      node('Sub', ['raw', 'pos'], 'neg'),
      node('Div', ['pos', 'cap'], 'pos_share'),
      node('Add', ['pos_share', 'one'], 'squash'),
      node('Div', ['pos', 'squash'], 'pos_soft'),
      node('Add', ['neg', 'pos_soft'], 'birds_heard'),
      // A voice mutes the birds: it fills the bands a formant crosses.
      node('Relu', ['voice'], 'voice_pos'),
      node('Mul', ['voice_pos', 'voice_mutes'], 'muted_by'),
      node('Sub', ['birds_heard', 'muted_by'], 'birds'),
      node('Concat', ['birds', 'voice', 'engine', 'noise'], 'logits', { axis: 1 }),
    );
  }
  const outName = params ? 'logits' : 'features';
  const graph = onnx.GraphProto.create({
    name: 'chorus_builtin',
    docString:
      'Chorus built-in demonstration model: band energy over its surroundings for the five synthetic species of the reference satellite, and three non-bird classes. Not BirdNET. See docs/model.md.',
    node: nodes,
    initializer,
    input: [valueInfo('input', [1, MODEL_INPUT_SAMPLES])],
    output: [valueInfo(outName, [1, params ? LABELS.length : FEATURES.length])],
  });
  const model = onnx.ModelProto.create({
    irVersion: 7,
    opsetImport: [onnx.OperatorSetIdProto.create({ domain: '', version: OPSET })],
    producerName: 'chorus scripts/build-builtin-model.ts',
    producerVersion: '2',
    docString:
      'Recognises only the synthetic calls of src/satellite/soundscape.ts. Real deployments install BirdNET or Perch (docs/model.md).',
    graph,
    metadataProps: [
      onnx.StringStringEntryProto.create({ key: 'labels', value: LABELS.join('\n') }),
      onnx.StringStringEntryProto.create({ key: 'sample_rate', value: String(MODEL_SAMPLE_RATE) }),
    ],
  });
  return onnx.ModelProto.encode(model).finish();
}

/**
 * How confidence follows clarity. The measured log-ratio r (band energy over its surroundings,
 * ~0 for noise alone) becomes the logit SLOPE × (r − MIDPOINT − r₀), r₀ being the band's r on
 * plain noise: a call whose band holds e^MIDPOINT ≈ 16× the energy of its surroundings reads 0.5,
 * one at e^1.9 ≈ 7× reads 0.25 (BirdNET's default minimum), noise alone about 0.06. CAP is the
 * logit a call approaches as it gets ever clearer (sigmoid(4.5) = 0.989); the nearest birds of the
 * soundscape read about 0.95.
 */
const SLOPE = 1.0;
const MIDPOINT = 2.8;
const CAP = 4.5;

/**
 * The non-bird classes, set by hand from the features of speech (espeak-ng voices), pink noise,
 * the soundscape's traffic, wind, rain and insects, and the synthetic calls (docs/model.md has the
 * table). Speech swings by 4–9 (log units) from syllable to pause in the voice gaps; nothing
 * else measured swings by more than 1.1. Traffic and engines hold their level in 100–300 Hz and
 * reach the gaps above it; wind stays under 300 Hz. Pink noise lifts every gap over the floor.
 */
const VOICE: Terms = [
  { feature: 'voiceSwing', slope: 2, at: 2.5 },
  { feature: 'voiceLevel', slope: 1, at: 4 },
];
const ENGINE: Terms = [
  { feature: 'lowLevel', slope: 2, at: 5.5 },
  { feature: 'broad', slope: 4, at: 0.4 },
  { feature: 'voiceSwing', slope: -2, at: 2 },
];
const NOISE: Terms = [
  { feature: 'broad', slope: 6, at: 0.38 },
  { feature: 'voiceSwing', slope: -2, at: 2 },
  { feature: 'lowLevel', slope: -2, at: 6 },
];
const VOICE_MUTES_BIRDS = 3;
/** logit(0.25): a non-bird class must stay under it on the synthetic calls and on plain noise. */
const MIN_CONFIDENCE_LOGIT = Math.log(0.25 / 0.75);

/** Plain white-noise chunks at each level, and near clear calls per species, measured at build. */
const NOISE_LEVELS = [0.0006, 0.002, 0.0035, 0.005, 0.05];
const NOISE_SEEDS = 12;
const CALL_SEEDS = 12;

interface Sample {
  species: readonly string[];
  noiseRms: number;
  features: Float32Array;
}

async function measure(bytes: Uint8Array): Promise<Sample[]> {
  const model = await loadModel({ model: bytes, labels: FEATURES.map((f) => `${f}_${f}`), name: 'built-in model features' });
  const recipes: { species: string[]; seed: number; noiseRms: number }[] = [];
  for (let seed = 1; seed <= NOISE_SEEDS; seed++)
    for (const noiseRms of NOISE_LEVELS) recipes.push({ species: [], seed: seed * 1000 + Math.round(noiseRms * 1e4), noiseRms });
  for (let seed = 1; seed <= CALL_SEEDS; seed++)
    for (const s of SPECIES) recipes.push({ species: [s.label], seed: seed * 1000 + recipes.length, noiseRms: 0.002 });
  const out: Sample[] = [];
  for (const r of recipes)
    out.push({ species: r.species, noiseRms: r.noiseRms, features: Float32Array.from(await model.logits(renderChunk(r))) });
  await model.close();
  return out;
}

/** A non-bird class's logit for one sample's features (as the graph computes it). */
function nonBirdLogit(terms: Terms, features: Float32Array): number {
  return Math.min(...terms.map((t) => t.slope * (features[FEATURES.indexOf(t.feature)] - t.at)));
}

const fmt = (x: number) => x.toFixed(3);
const median = (xs: number[]) => [...xs].sort((p, q) => p - q)[Math.floor(xs.length / 2)];

/** Measures the raw features and sets each band's bias; throws when the model would not do its job. */
export async function calibrate(): Promise<{ params: ModelParams; report: string[] }> {
  const samples = await measure(buildGraph(null));
  const scale: number[] = [];
  const bias: number[] = [];
  const report: string[] = [];
  SPECIES.forEach((s, b) => {
    const noise = samples.filter((x) => x.species.length === 0).map((x) => x.features[b]);
    const near = samples.filter((x) => x.species.includes(s.label)).map((x) => x.features[b]);
    const r0 = median(noise);
    const maxNoise = Math.max(...noise);
    const minNear = Math.min(...near);
    if (!(maxNoise - r0 < MIDPOINT - 1.5))
      throw new Error(`${s.label}: plain noise reaches r ${fmt(maxNoise)} (median ${fmt(r0)}): the band no longer ignores noise`);
    if (!(minNear - r0 > MIDPOINT + 2))
      throw new Error(`${s.label}: a near call reaches only r ${fmt(minNear)}: the band no longer hears its species`);
    scale.push(SLOPE);
    bias.push(Number((-SLOPE * (MIDPOINT + r0)).toPrecision(4)));
    report.push(
      `${s.label.padEnd(36)} r of plain noise: median ${fmt(r0)} max ${fmt(maxNoise)} (n=${noise.length}); ` +
        `near call: min ${fmt(minNear)} median ${fmt(median(near))} (n=${near.length}) → scale ${scale[b]}, bias ${bias[b]}`,
    );
  });
  for (const [label, terms] of [
    [NON_BIRD_LABELS[0], VOICE],
    [NON_BIRD_LABELS[1], ENGINE],
    [NON_BIRD_LABELS[2], NOISE],
  ] as const) {
    const highest = Math.max(...samples.map((x) => nonBirdLogit(terms, x.features)));
    if (!(highest < MIN_CONFIDENCE_LOGIT - 0.5))
      throw new Error(`${label}: reaches logit ${fmt(highest)} on the synthetic calls or plain noise: it would call them ${label}`);
    report.push(`${label.padEnd(36)} highest logit on synthetic calls and plain noise: ${fmt(highest)}`);
  }
  return {
    params: { scale, bias, cap: CAP, voice: VOICE, engine: ENGINE, noise: NOISE, voiceMutesBirds: VOICE_MUTES_BIRDS },
    report,
  };
}

async function main() {
  const { params, report } = await calibrate();
  console.log(report.join('\n'));
  const bytes = buildGraph(params);
  fs.mkdirSync(outDir, { recursive: true });
  fs.writeFileSync(path.join(outDir, 'model.onnx'), bytes);
  fs.writeFileSync(path.join(outDir, 'labels.txt'), LABELS.join('\n') + '\n');
  console.log(`wrote models/builtin/model.onnx (${bytes.length} bytes) and labels.txt (${LABELS.length} labels)`);
  console.log('npm run bench -- model-confidence prints the confidences it gives the soundscape');
}

// Imported (the bench measuring the model's confidences builds the uncalibrated graph), it builds nothing.
if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) await main();
