/**
 * A benchmark model with BirdNET v2.4's interface and cost, generated at bench time into
 * bench/.cache/ (git-ignored: 45 MB of random weights are no source). Not a classifier: its
 * weights are random (fixed seed), so its answers mean nothing; what it measures is how fast a
 * network of BirdNET's size runs in ONNX Runtime and how much the worker adds around it.
 *
 *   input      float32 [batch, 144000]                     3 s at 48 kHz
 *   frames     Conv1D, 192 fixed kernels of 512, stride 300 a DFT (96 bins × cos, sin) of
 *                                                          Hann-windowed frames: [192, 479]
 *   spectrum   square, 1×1 Conv summing cos² + sin² into 96 bins, log → image [1, 96, 479]
 *   backbone   EfficientNet-B0's layout (BirdNET 2.4's backbone is EfficientNet-like): Conv 3×3
 *              stem, 16 MBConv blocks (1×1 expand, depthwise k×k, squeeze-and-excitation,
 *              1×1 project, residual), BatchNorm folded into the convolutions, Swish, then a
 *              1×1 Conv to 1,024 channels and global average pooling
 *   embedding  [batch, 1024]
 *   logits     [batch, 6522]                               Gemm 1024 → 6522
 *
 * Its cost is counted as it is built: 2 × multiply-adds of Conv and Gemm (element-wise Swish,
 * sigmoid and additions are not counted, as FLOP figures of CNNs usually are not).
 *
 * The head is scaled after a first run on a few soundscape chunks so that about two labels per
 * window clear the default minimum confidence, as a real model's few detections per chunk: with
 * raw random logits thousands would, and the bench would measure SQL inserts instead.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import onnxProto from 'onnx-proto';

const { onnx } = onnxProto;
type Tensor = InstanceType<typeof onnx.TensorProto>;
type Attr = InstanceType<typeof onnx.AttributeProto>;

export const BIRDNET_GFLOPS = 0.826;
export const SAMPLES = 144_000;
export const EMBEDDING = 1024;
export const LABELS = 6522;
const FRAME = 512;
const HOP = 300;
const BINS = 96;
const SEED = 2024;
/** Bumped when the graph changes, so a cached file of an older layout is not reused. */
const VERSION = 1;

export const CACHE_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), '.cache');

/** EfficientNet-B0's stages: expansion, kernel, stride, output channels, repeats. */
const STAGES: readonly [number, number, number, number, number][] = [
  [1, 3, 1, 16, 1],
  [6, 3, 2, 24, 2],
  [6, 5, 2, 40, 2],
  [6, 3, 2, 80, 3],
  [6, 5, 1, 112, 3],
  [6, 5, 2, 192, 4],
  [6, 3, 1, 320, 1],
];
const STEM = 32;

/** mulberry32 and Box–Muller: the same weights on every machine, no dependency. */
function normals(seed: number) {
  let s = seed >>> 0;
  const uniform = () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return (n: number, std: number) => {
    const out = new Float32Array(n);
    for (let i = 0; i < n; i += 2) {
      const r = Math.sqrt(-2 * Math.log(1 - uniform()));
      const a = 2 * Math.PI * uniform();
      out[i] = std * r * Math.cos(a);
      if (i + 1 < n) out[i + 1] = std * r * Math.sin(a);
    }
    return out;
  };
}

const floatTensor = (name: string, dims: number[], data: Float32Array): Tensor =>
  onnx.TensorProto.create({ name, dims, dataType: onnx.TensorProto.DataType.FLOAT, rawData: new Uint8Array(data.buffer) });

const int64Tensor = (name: string, values: number[]): Tensor =>
  onnx.TensorProto.create({
    name,
    dims: [values.length],
    dataType: onnx.TensorProto.DataType.INT64,
    rawData: new Uint8Array(BigInt64Array.from(values.map(BigInt)).buffer),
  });

/** build-builtin-model.ts's node() takes int attributes only; convolutions need lists. */
function attr(name: string, v: number | number[]): Attr {
  const { INT, INTS } = onnx.AttributeProto.AttributeType;
  return Array.isArray(v)
    ? onnx.AttributeProto.create({ name, ints: v, type: INTS })
    : onnx.AttributeProto.create({ name, i: v, type: INT });
}

function valueInfo(name: string, dims: (number | string)[]) {
  return onnx.ValueInfoProto.create({
    name,
    type: onnx.TypeProto.create({
      tensorType: onnx.TypeProto.Tensor.create({
        elemType: onnx.TensorProto.DataType.FLOAT,
        shape: onnx.TensorShapeProto.create({
          dim: dims.map((d) => onnx.TensorShapeProto.Dimension.create(typeof d === 'number' ? { dimValue: d } : { dimParam: d })),
        }),
      }),
    }),
  });
}

export interface BuiltModel {
  bytes: Uint8Array;
  /** 2 × multiply-adds per window. */
  flops: number;
  params: number;
}

/** Head scaling found by calibration (logit = a × raw + b). */
export interface HeadScale {
  a: number;
  b: number;
}

/**
 * The graph. `batch`: a fixed first dimension, or null for a symbolic one ("batch").
 * Without `head` the head is unscaled (the calibration run).
 */
export function buildModel(batch: number | null, head: HeadScale = { a: 1, b: 0 }): BuiltModel {
  const randn = normals(SEED);
  const nodes: InstanceType<typeof onnx.NodeProto>[] = [];
  const init: Tensor[] = [];
  let flops = 0;
  let params = 0;
  let n = 0;
  const op = (opType: string, inputs: string[], attrs: Record<string, number | number[]> = {}, out = `t${n++}`) => {
    nodes.push(
      onnx.NodeProto.create({
        opType,
        input: inputs,
        output: [out],
        name: out,
        attribute: Object.entries(attrs).map(([k, v]) => attr(k, v)),
      }),
    );
    return out;
  };
  const weight = (dims: number[], data: Float32Array) => {
    const name = `w${init.length}`;
    init.push(floatTensor(name, dims, data));
    params += data.length;
    return name;
  };

  // Front end. The DFT kernels are fixed (Hann-windowed cos and sin of 96 bins up to 24 kHz).
  const dft = new Float32Array(2 * BINS * FRAME);
  for (let k = 0; k < BINS; k++) {
    const f = ((k + 0.5) * (FRAME / 2)) / BINS;
    for (let i = 0; i < FRAME; i++) {
      const w = 0.5 - 0.5 * Math.cos((2 * Math.PI * i) / FRAME);
      dft[k * FRAME + i] = w * Math.cos((2 * Math.PI * f * i) / FRAME);
      dft[(BINS + k) * FRAME + i] = w * Math.sin((2 * Math.PI * f * i) / FRAME);
    }
  }
  const pairSum = new Float32Array(BINS * 2 * BINS);
  for (let k = 0; k < BINS; k++) pairSum[k * 2 * BINS + k] = pairSum[k * 2 * BINS + BINS + k] = 1;
  const frames = Math.floor((SAMPLES - FRAME) / HOP) + 1;
  const wave = op('Unsqueeze', ['input', 'axes1']);
  init.push(int64Tensor('axes1', [1]));
  const spec = op('Conv', [wave, weight([2 * BINS, 1, FRAME], dft)], { kernel_shape: [FRAME], strides: [HOP] });
  flops += 2 * 2 * BINS * frames * FRAME;
  const power = op('Conv', [op('Mul', [spec, spec]), weight([BINS, 2 * BINS, 1], pairSum)], { kernel_shape: [1] });
  flops += 2 * BINS * frames * 2 * BINS;
  init.push(floatTensor('eps', [], Float32Array.of(1e-6)), floatTensor('tenth', [], Float32Array.of(0.1)));
  const image = op('Unsqueeze', [op('Mul', [op('Log', [op('Add', [power, 'eps'])]), 'tenth']), 'axes1']);

  // Backbone. He-initialised weights keep activations from vanishing (denormals would slow the
  // runtime and measure the wrong thing) or exploding through sixteen blocks.
  let h = BINS;
  let w = frames;
  const conv = (x: string, cin: number, cout: number, k: number, stride: number, group = 1) => {
    const fanIn = (cin / group) * k * k;
    const out = op(
      'Conv',
      [x, weight([cout, cin / group, k, k], randn(cout * fanIn, Math.sqrt(2 / fanIn))), weight([cout], randn(cout, 0.01))],
      {
        kernel_shape: [k, k],
        strides: [stride, stride],
        pads: [k >> 1, k >> 1, k >> 1, k >> 1],
        group,
      },
    );
    if (stride > 1) {
      h = Math.floor((h - 1) / stride) + 1;
      w = Math.floor((w - 1) / stride) + 1;
    }
    flops += 2 * cout * h * w * fanIn;
    return out;
  };
  const swish = (x: string) => op('Mul', [x, op('Sigmoid', [x])]);

  let x = swish(conv(image, 1, STEM, 3, 2));
  let c = STEM;
  for (const [expand, k, stride, cout, repeats] of STAGES) {
    for (let r = 0; r < repeats; r++) {
      const s = r === 0 ? stride : 1;
      const mid = c * expand;
      const inp = x;
      let y = expand === 1 ? x : swish(conv(x, c, mid, 1, 1));
      y = swish(conv(y, mid, mid, k, s, mid));
      // Squeeze-and-excitation on the pooled channels (its cost is per window, not per pixel).
      const squeezed = Math.max(1, c >> 2);
      const [hh, ww] = [h, w];
      [h, w] = [1, 1];
      const gate = op('Sigmoid', [conv(swish(conv(op('GlobalAveragePool', [y]), mid, squeezed, 1, 1)), squeezed, mid, 1, 1)]);
      [h, w] = [hh, ww];
      y = conv(op('Mul', [y, gate]), mid, cout, 1, 1);
      x = s === 1 && c === cout ? op('Add', [inp, y]) : y;
      c = cout;
    }
  }
  x = swish(conv(x, c, EMBEDDING, 1, 1));
  const embedding = op('Flatten', [op('GlobalAveragePool', [x])], { axis: 1 }, 'embedding');
  const headW = randn(EMBEDDING * LABELS, 1 / Math.sqrt(EMBEDDING)).map((v) => v * head.a);
  const headB = new Float32Array(LABELS).fill(head.b);
  op('Gemm', [embedding, weight([EMBEDDING, LABELS], headW), weight([LABELS], headB)], {}, 'logits');
  flops += 2 * EMBEDDING * LABELS;

  const b = batch ?? 'batch';
  const graph = onnx.GraphProto.create({
    name: 'chorus_bench_birdnet_size',
    docString: 'Random weights at BirdNET v2.4 size and interface, for benchmarks only (bench/birdnet-size-model.ts).',
    node: nodes,
    initializer: init,
    input: [valueInfo('input', [b, SAMPLES])],
    output: [valueInfo('logits', [b, LABELS]), valueInfo('embedding', [b, EMBEDDING])],
  });
  const model = onnx.ModelProto.create({
    irVersion: 7,
    opsetImport: [onnx.OperatorSetIdProto.create({ domain: '', version: 13 })],
    producerName: 'chorus bench/birdnet-size-model.ts',
    graph,
  });
  return { bytes: onnx.ModelProto.encode(model).finish(), flops, params };
}

/** logit(0.25): the default minimum confidence. */
const MIN_LOGIT = Math.log(0.25 / 0.75);

/**
 * Chooses the head's scale so that logits spread with a standard deviation of 2 and about
 * `perWindow` labels per window clear the minimum confidence on the given windows.
 */
export function headScale(raw: Float32Array[], perWindow = 2): HeadScale {
  const all = raw.flatMap((r) => Array.from(r));
  const mean = all.reduce((s, v) => s + v, 0) / all.length;
  const std = Math.sqrt(all.reduce((s, v) => s + (v - mean) ** 2, 0) / all.length) || 1;
  const a = 2 / std;
  const sorted = all.map((v) => a * v).sort((p, q) => q - p);
  const cut = sorted[Math.min(sorted.length - 1, Math.round(perWindow * raw.length))];
  return { a, b: MIN_LOGIT - cut };
}

export interface BenchModelFiles {
  /** [1, 144000]: BirdNET 2.4's exact interface, for the runner and the worker. */
  single: string;
  /** [batch, 144000]: for batch 1/4/8 through ONNX Runtime directly. */
  batched: string;
  labels: string;
  labelsSource: string;
  flops: number;
  params: number;
}

const REAL_LABELS = '/work/shared/data/species/birdnet_v2.4/labels/BirdNET_GLOBAL_6K_V2.4_Labels.txt';

/**
 * Writes (or reuses) the two model files and a labels file in bench/.cache/. `calibrate` runs the
 * unscaled model on some windows and returns their raw logits.
 */
export async function ensureBenchModel(calibrate: (bytes: Uint8Array) => Promise<Float32Array[]>): Promise<BenchModelFiles> {
  fs.mkdirSync(CACHE_DIR, { recursive: true });
  const file = (name: string) => path.join(CACHE_DIR, `birdnet-size-v${VERSION}-seed${SEED}-${name}`);
  const single = file('b1.onnx');
  const batched = file('bN.onnx');
  const labels = file('labels.txt');
  const scaleFile = file('head.json');
  const labelsSource = fs.existsSync(REAL_LABELS) ? REAL_LABELS : 'the species catalog';
  if (!fs.existsSync(labels)) {
    // BirdNET 2.4's own labels when this machine has them, else the catalog (the same 6,522 in the same order).
    let lines: string[];
    if (fs.existsSync(REAL_LABELS)) lines = fs.readFileSync(REAL_LABELS, 'utf8').split(/\r?\n/).filter(Boolean);
    else {
      const { speciesCatalog } = await import('../src/modules/species/catalog.ts');
      lines = speciesCatalog()
        .all()
        .map((s) => `${s.scientificName}_${s.commonName}`);
    }
    if (lines.length !== LABELS) throw new Error(`labels: ${lines.length} lines, ${LABELS} needed`);
    fs.writeFileSync(labels, lines.join('\n') + '\n');
  }
  let head: HeadScale;
  if (fs.existsSync(scaleFile)) head = JSON.parse(fs.readFileSync(scaleFile, 'utf8')) as HeadScale;
  else {
    head = headScale(await calibrate(buildModel(1).bytes));
    fs.writeFileSync(scaleFile, JSON.stringify(head));
  }
  let built: BuiltModel | null = null;
  for (const [target, batch] of [
    [single, 1],
    [batched, null],
  ] as const) {
    if (fs.existsSync(target)) continue;
    built = buildModel(batch, head);
    fs.writeFileSync(target, built.bytes);
  }
  const { flops, params } = built ?? buildModel(1, head);
  return { single, batched, labels, labelsSource, flops, params };
}
