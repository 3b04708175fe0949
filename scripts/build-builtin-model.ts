/**
 * Generates the built-in demonstration model: models/builtin/model.onnx and labels.txt.
 *
 *   npm run build:model
 *
 * The graph has BirdNET's interface (input float32 [1, 144000] = 3 s at 48 kHz in [-1, 1];
 * output float32 [1, 5] logits, one per label) and recognises the five synthetic species of
 * the reference satellite's soundscape (src/satellite/soundscape.ts) by the energy in their
 * frequency bands. docs/model.md says what it can and cannot do. The graph:
 *
 *   frames  = Reshape(input, [300, 480])                  10 ms frames, no overlap
 *   W       = [hann·cos(ωk·n) | hann·sin(ωk·n)]           DFT basis of the bins used, 100 Hz
 *                                                          apart; computed in the graph from
 *                                                          n, ωk and the window (ONNX Runtime
 *                                                          folds it into a constant at load)
 *   power   = (frames × W)²                               [300, 2K]: cos² and sin² per bin
 *   band    = mean over frames of (power × bandSum)       [1, 5]: energy in each species' band
 *   floor   = mean over frames of (power × floorSum)      [1, 5]: the noise floor, measured at
 *                                                          9.6–12 kHz (above every call) and
 *                                                          scaled to each band's width
 *   snr     = log(band + ε) − log(floor + ε)              ~0 for noise of any level, large
 *                                                          when a call fills the band
 *   logits  = snr × scale + bias                          per band, calibrated below
 *
 * Calibration: the graph is first built with scale 1 and bias 0 and run on chunks rendered by
 * the soundscape generator (every species alone and in pairs, noise-only chunks at the
 * silent and the normal noise level, many seeds). For each band the threshold sits one third
 * of the way from the highest snr of chunks without the species to the lowest snr of chunks
 * with it (nearer the noise side, so a call in louder noise than the soundscape's is still
 * found), and the slope makes both of those extremes land MARGIN logits from the threshold.
 * The build stops if the two groups overlap in any band.
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
/** A band sums the bins whose centre lies within this distance outside the species' band (the window's main lobe). */
const BAND_PAD_HZ = 100;
const FLOOR_HZ: [number, number] = [9600, 12000];
const EPS = 1e-10;

const OPSET = 13;

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

/** Bin indices (100 Hz apart) of each species' band and of the noise floor. */
function layout() {
  const bandBins = SPECIES.map((s) => {
    const bins: number[] = [];
    for (let k = Math.ceil((s.bandHz[0] - BAND_PAD_HZ) / BIN_HZ); k * BIN_HZ <= s.bandHz[1] + BAND_PAD_HZ; k++) bins.push(k);
    return bins;
  });
  const floorBins: number[] = [];
  for (let k = Math.ceil(FLOOR_HZ[0] / BIN_HZ); k * BIN_HZ <= FLOOR_HZ[1]; k++) floorBins.push(k);
  const all = [...new Set([...bandBins.flat(), ...floorBins])].sort((a, b) => a - b);
  if (all.length !== bandBins.flat().length + floorBins.length) throw new Error('species bands overlap each other or the noise floor');
  return { bandBins, floorBins, all };
}

/** `cap`: the soft ceiling of the logits (null: none, for measuring). */
export function buildGraph(scale: number[], bias: number[], cap: number | null = null): Uint8Array {
  const { bandBins, floorBins, all } = layout();
  const K = all.length;
  const B = SPECIES.length;
  const column = new Map(all.map((k, i) => [k, i]));

  const bandSum = new Float32Array(2 * K * B);
  const floorSum = new Float32Array(2 * K * B);
  bandBins.forEach((bins, b) => {
    for (const k of bins) for (const half of [0, K]) bandSum[(half + column.get(k)!) * B + b] = 1;
    // The floor is a mean per bin, scaled to this band's number of bins.
    for (const k of floorBins) for (const half of [0, K]) floorSum[(half + column.get(k)!) * B + b] = bins.length / floorBins.length;
  });

  const n = Array.from({ length: FRAME }, (_, i) => i);
  const hann = n.map((i) => 0.5 - 0.5 * Math.cos((2 * Math.PI * i) / FRAME)); // periodic Hann
  const omega = all.map((k) => (2 * Math.PI * k) / FRAME);

  const initializer = [
    int64Tensor('frame_shape', [FRAMES, FRAME]),
    floatTensor('n', [FRAME, 1], n),
    floatTensor('hann', [FRAME, 1], hann),
    floatTensor('omega', [1, K], omega),
    floatTensor('band_sum', [2 * K, B], bandSum),
    floatTensor('floor_sum', [2 * K, B], floorSum),
    floatTensor('frame_mean', [1, FRAMES], new Array(FRAMES).fill(1 / FRAMES)),
    floatTensor('eps', [], [EPS]),
    floatTensor('scale', [B], scale),
    floatTensor('bias', [B], bias),
    ...(cap === null ? [] : [floatTensor('cap', [], [cap]), floatTensor('one', [], [1])]),
  ];
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
    node('MatMul', ['power', 'band_sum'], 'band_frames'),
    node('MatMul', ['power', 'floor_sum'], 'floor_frames'),
    node('MatMul', ['frame_mean', 'band_frames'], 'band'),
    node('MatMul', ['frame_mean', 'floor_frames'], 'floor'),
    node('Add', ['band', 'eps'], 'band_eps'),
    node('Add', ['floor', 'eps'], 'floor_eps'),
    node('Log', ['band_eps'], 'log_band'),
    node('Log', ['floor_eps'], 'log_floor'),
    node('Sub', ['log_band', 'log_floor'], 'snr'),
    node('Mul', ['snr', 'scale'], 'scaled'),
    ...(cap === null
      ? [node('Add', ['scaled', 'bias'], 'logits')]
      : [
          // A soft ceiling on the positive side: x / (1 + x / cap) for x > 0, x itself below 0.
          // Clear calls still rank by clarity (0.8 … 0.95) and no call reads a flat 100 %.
          node('Add', ['scaled', 'bias'], 'raw'),
          node('Relu', ['raw'], 'pos'),
          node('Sub', ['raw', 'pos'], 'neg'),
          node('Div', ['pos', 'cap'], 'pos_share'),
          node('Add', ['pos_share', 'one'], 'squash'),
          node('Div', ['pos', 'squash'], 'pos_soft'),
          node('Add', ['neg', 'pos_soft'], 'logits'),
        ]),
  ];
  const graph = onnx.GraphProto.create({
    name: 'chorus_builtin',
    docString:
      'Chorus built-in demonstration model: band energy over noise floor for the five synthetic species of the reference satellite. Not BirdNET. See docs/model.md.',
    node: nodes,
    initializer,
    input: [valueInfo('input', [1, MODEL_INPUT_SAMPLES])],
    output: [valueInfo('logits', [1, B])],
  });
  const model = onnx.ModelProto.create({
    irVersion: 7,
    opsetImport: [onnx.OperatorSetIdProto.create({ domain: '', version: OPSET })],
    producerName: 'chorus scripts/build-builtin-model.ts',
    producerVersion: '1',
    docString: 'Recognises only the synthetic calls of src/satellite/soundscape.ts. Real deployments upload a BirdNET ONNX export.',
    graph,
    metadataProps: [
      onnx.StringStringEntryProto.create({ key: 'labels', value: SPECIES.map((s) => s.label).join('\n') }),
      onnx.StringStringEntryProto.create({ key: 'sample_rate', value: String(MODEL_SAMPLE_RATE) }),
    ],
  });
  return onnx.ModelProto.encode(model).finish();
}

/**
 * How confidence follows clarity. The measured log-ratio r (band energy over the noise floor,
 * ~0 for noise alone) becomes the logit SLOPE × (r − MIDPOINT − r₀), r₀ being the band's r on
 * plain noise: a call whose band holds e^MIDPOINT ≈ 16× the energy of noise alone reads 0.5, one
 * at e^1.9 ≈ 7× reads 0.25 (BirdNET's default minimum), noise alone about 0.06. CAP is the
 * logit a call approaches as it gets ever clearer (sigmoid(4.5) = 0.989); the nearest birds of the
 * soundscape read about 0.95.
 */
const SLOPE = 1.0;
const MIDPOINT = 2.8;
const CAP = 4.5;
/** Plain white-noise chunks at each level, and near clear calls per species, measured at build. */
const NOISE_LEVELS = [0.0006, 0.002, 0.0035, 0.005, 0.05];
const NOISE_SEEDS = 12;
const CALL_SEEDS = 12;

interface Sample {
  species: readonly string[];
  noiseRms: number;
  snr: Float32Array;
}

async function measure(bytes: Uint8Array): Promise<Sample[]> {
  const model = await loadModel({ model: bytes, labels: SPECIES.map((s) => s.label), name: 'uncalibrated built-in model' });
  const recipes: { species: string[]; seed: number; noiseRms: number }[] = [];
  for (let seed = 1; seed <= NOISE_SEEDS; seed++)
    for (const noiseRms of NOISE_LEVELS) recipes.push({ species: [], seed: seed * 1000 + Math.round(noiseRms * 1e4), noiseRms });
  for (let seed = 1; seed <= CALL_SEEDS; seed++)
    for (const s of SPECIES) recipes.push({ species: [s.label], seed: seed * 1000 + recipes.length, noiseRms: 0.002 });
  const out: Sample[] = [];
  for (const r of recipes)
    out.push({ species: r.species, noiseRms: r.noiseRms, snr: Float32Array.from(await model.logits(renderChunk(r))) });
  await model.close();
  return out;
}

const fmt = (x: number) => x.toFixed(3);
const median = (xs: number[]) => [...xs].sort((p, q) => p - q)[Math.floor(xs.length / 2)];

async function main() {
  const B = SPECIES.length;
  const raw = buildGraph(new Array(B).fill(1), new Array(B).fill(0));
  const samples = await measure(raw);
  const scale: number[] = [];
  const bias: number[] = [];
  const report: string[] = [];
  SPECIES.forEach((s, b) => {
    const noise = samples.filter((x) => x.species.length === 0).map((x) => x.snr[b]);
    const near = samples.filter((x) => x.species.includes(s.label)).map((x) => x.snr[b]);
    const r0 = median(noise);
    const maxNoise = Math.max(...noise);
    const minNear = Math.min(...near);
    // What the demonstration needs of every band: noise of any level far under the minimum
    // confidence, a near clear call far over it.
    if (!(maxNoise - r0 < MIDPOINT - 1.5))
      throw new Error(`${s.label}: plain noise reaches snr ${fmt(maxNoise)} (median ${fmt(r0)}): the band no longer ignores noise`);
    if (!(minNear - r0 > MIDPOINT + 2))
      throw new Error(`${s.label}: a near call reaches only snr ${fmt(minNear)}: the band no longer hears its species`);
    scale.push(SLOPE);
    bias.push(Number((-SLOPE * (MIDPOINT + r0)).toPrecision(4)));
    report.push(
      `${s.label.padEnd(36)} snr of plain noise: median ${fmt(r0)} max ${fmt(maxNoise)} (n=${noise.length}); ` +
        `near call: min ${fmt(minNear)} median ${fmt(median(near))} (n=${near.length}) → scale ${scale[b]}, bias ${bias[b]}`,
    );
  });
  console.log(report.join('\n'));

  const bytes = buildGraph(scale, bias, CAP);
  fs.mkdirSync(outDir, { recursive: true });
  fs.writeFileSync(path.join(outDir, 'model.onnx'), bytes);
  fs.writeFileSync(path.join(outDir, 'labels.txt'), SPECIES.map((s) => s.label).join('\n') + '\n');
  console.log(`wrote models/builtin/model.onnx (${bytes.length} bytes) and labels.txt (${SPECIES.length} labels)`);
  console.log('npm run bench -- model-confidence prints the confidences it gives the soundscape');
}

// Imported (the bench measuring the model's confidences builds the uncalibrated graph), it builds nothing.
if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) await main();
