/**
 * A classifier model: an ONNX file plus a labels file in BirdNET's format (one
 * `Scientific name_Common name` per line, line i = output i), run with ONNX Runtime on the CPU.
 *
 * The contract is BirdNET's: the input is one float32 tensor [1, 144000] (3 s of 48 kHz mono,
 * samples in [-1, 1]); the output is one float32 score (logit) per label. A score becomes a
 * confidence through BirdNET's sigmoid with a sensitivity:
 *
 *     confidence = 1 / (1 + exp(-sensitivity × clip(logit, -20, 20)))
 *
 * Sensitivity is the slope, 0.5–1.5, default 1.0: the form BirdNET-Analyzer used before 2.0
 * (whose `--sensitivity` option was mapped to a slope of 2 − value, so there a higher value
 * flattened the curve); BirdNET-Analyzer 2.0 and later shift the curve instead. Here the number
 * is the slope itself: higher = steeper = surer both ways.
 *
 * Every failure — no runtime binary, unreadable or corrupt file, wrong input or output shape,
 * labels that do not match the outputs — is a ModelError with a message saying what is wrong;
 * nothing here exits the process. Loading runs one warm-up inference on silence, so a model
 * that loads has been seen to produce one score per label.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type * as OrtModule from 'onnxruntime-node';
import type { InferenceSession, Tensor } from 'onnxruntime-node';

export const MODEL_SAMPLE_RATE = 48_000;
export const MODEL_INPUT_SAMPLES = 144_000;
export const DEFAULT_SENSITIVITY = 1.0;
export const MIN_SENSITIVITY = 0.5;
export const MAX_SENSITIVITY = 1.5;
/** BirdNET-Analyzer's default minimum confidence. */
export const DEFAULT_MIN_CONFIDENCE = 0.25;

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const BUILTIN_MODEL_PATH = path.join(root, 'models', 'builtin', 'model.onnx');
export const BUILTIN_LABELS_PATH = path.join(root, 'models', 'builtin', 'labels.txt');

export class ModelError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ModelError';
  }
}

export interface ModelLabel {
  /** The line as written in the labels file. */
  readonly label: string;
  readonly scientificName: string;
  readonly commonName: string;
}

export interface Prediction extends ModelLabel {
  /** Output index. */
  readonly index: number;
  readonly logit: number;
  readonly confidence: number;
}

export interface ClassifyOptions {
  /** Slope of the sigmoid, 0.5–1.5; default 1.0. */
  sensitivity?: number;
  /** Predictions below this confidence are left out; default 0.25. */
  minConfidence?: number;
}

export interface LoadModelOptions {
  /** An ONNX file path, or its bytes. */
  model: string | Uint8Array;
  /** A labels file path, or the labels themselves (text, or one label per array item). */
  labels: string | readonly string[] | { text: string };
  /** Threads ONNX Runtime may use inside one inference; default 1 (one worker per core). */
  threads?: number;
  /** A name for error messages; default the model path. */
  name?: string;
}

/** BirdNET's sigmoid with sensitivity (see the file comment). */
export function confidenceOf(logit: number, sensitivity = DEFAULT_SENSITIVITY): number {
  checkSensitivity(sensitivity);
  const x = Math.max(-20, Math.min(20, logit));
  return 1 / (1 + Math.exp(-sensitivity * x));
}

function checkSensitivity(sensitivity: number): void {
  if (!Number.isFinite(sensitivity) || sensitivity < MIN_SENSITIVITY || sensitivity > MAX_SENSITIVITY) {
    throw new ModelError(`sensitivity must be between ${MIN_SENSITIVITY} and ${MAX_SENSITIVITY}, got ${sensitivity}`);
  }
}

/**
 * One chunk as the model's input: 16-bit samples are scaled to [-1, 1), float samples are
 * taken as they are; shorter input is zero-padded, longer input is cut at 3 s.
 */
export function toModelInput(samples: Int16Array | Float32Array | Float64Array): Float32Array {
  const out = new Float32Array(MODEL_INPUT_SAMPLES);
  const n = Math.min(samples.length, MODEL_INPUT_SAMPLES);
  if (samples instanceof Int16Array) {
    for (let i = 0; i < n; i++) out[i] = samples[i] / 32768;
  } else {
    for (let i = 0; i < n; i++) out[i] = samples[i];
  }
  return out;
}

/**
 * Parses a BirdNET labels file: one label per line, `Scientific name_Common name`, split at the
 * first `_`. A line without `_` is taken as both names (custom classifiers sometimes have such
 * labels). Trailing blank lines are ignored; a blank line in between is an error, since it
 * would shift every later label off its output.
 */
export function parseLabels(text: string): ModelLabel[] {
  const lines = text
    .replace(/^\uFEFF/, '')
    .split('\n')
    .map((l) => l.replace(/\r$/, '').trim());
  while (lines.length && lines[lines.length - 1] === '') lines.pop();
  return lines.map((line, i) => {
    if (line === '') throw new ModelError(`labels: line ${i + 1} is empty`);
    const cut = line.indexOf('_');
    return cut > 0
      ? { label: line, scientificName: line.slice(0, cut), commonName: line.slice(cut + 1) }
      : { label: line, scientificName: line, commonName: line };
  });
}

type Ort = typeof OrtModule;
let ortPromise: Promise<Ort> | null = null;

/** onnxruntime-node, loaded on first use so that importing this file never loads the native binary. */
function loadRuntime(): Promise<Ort> {
  ortPromise ??= import('onnxruntime-node').catch((err: unknown) => {
    ortPromise = null;
    throw new ModelError(`ONNX Runtime (onnxruntime-node) cannot be loaded: ${(err as Error).message}`, { cause: err });
  });
  return ortPromise;
}

const describeShape = (dims: readonly (number | string)[]) => `[${dims.join(', ')}]`;

export class Model {
  private closed = false;

  private constructor(
    private readonly ort: Ort,
    private readonly session: InferenceSession,
    readonly name: string,
    readonly labels: readonly ModelLabel[],
    readonly inputName: string,
    readonly outputName: string,
  ) {}

  /** Loads and checks a model (see LoadModelOptions). Rejects with a ModelError. */
  static async load(opts: LoadModelOptions): Promise<Model> {
    const name = opts.name ?? (typeof opts.model === 'string' ? opts.model : 'model');
    const labels = await readLabels(opts.labels, name);
    if (labels.length === 0) throw new ModelError(`${name}: the labels file is empty`);
    const ort = await loadRuntime();

    let bytes: Uint8Array;
    try {
      bytes = typeof opts.model === 'string' ? await fs.readFile(opts.model) : opts.model;
    } catch (err) {
      throw new ModelError(`${name}: cannot read the model file: ${(err as Error).message}`, { cause: err });
    }
    if (bytes.length === 0) throw new ModelError(`${name}: the model file is empty`);

    let session: InferenceSession;
    try {
      session = await ort.InferenceSession.create(bytes, {
        executionProviders: ['cpu'],
        intraOpNumThreads: opts.threads ?? 1,
        interOpNumThreads: 1,
        graphOptimizationLevel: 'all',
        logSeverityLevel: 3,
      });
    } catch (err) {
      throw new ModelError(`${name}: not a loadable ONNX model: ${firstLine(err)}`, { cause: err });
    }

    try {
      if (session.inputNames.length !== 1) {
        throw new ModelError(
          `${name}: the model has ${session.inputNames.length} inputs (${session.inputNames.join(', ')}); one [1, ${MODEL_INPUT_SAMPLES}] float32 input is needed`,
        );
      }
      const inputName = session.inputNames[0];
      const meta = session.inputMetadata?.[0];
      if (meta?.isTensor) {
        if (meta.type !== 'float32') throw new ModelError(`${name}: input "${inputName}" is ${meta.type}; float32 is needed`);
        const dims = meta.shape;
        const last = dims[dims.length - 1];
        if (
          dims.length !== 2 ||
          (typeof last === 'number' && last !== MODEL_INPUT_SAMPLES) ||
          (typeof dims[0] === 'number' && dims[0] !== 1 && dims[0] !== -1)
        ) {
          throw new ModelError(
            `${name}: input "${inputName}" has shape ${describeShape(dims)}; [1, ${MODEL_INPUT_SAMPLES}] (3 s at 48 kHz) is needed`,
          );
        }
      }
      // One warm-up run on silence checks the whole graph and tells which output has one score per label.
      const outputs = await runSession(ort, session, inputName, new Float32Array(MODEL_INPUT_SAMPLES), name);
      const sizes = session.outputNames.map((o) => ({
        o,
        dims: (outputs[o] as Tensor).dims,
        size: (outputs[o] as Tensor).size,
        type: (outputs[o] as Tensor).type,
      }));
      const match = sizes.find((s) => s.type === 'float32' && s.size === labels.length && s.dims[s.dims.length - 1] === labels.length);
      if (!match) {
        throw new ModelError(
          `${name}: no output has one float32 score per label (${labels.length} labels); outputs: ` +
            sizes.map((s) => `${s.o} ${s.type} ${describeShape(s.dims)}`).join(', '),
        );
      }
      return new Model(ort, session, name, labels, inputName, match.o);
    } catch (err) {
      await session.release().catch(() => undefined);
      throw err;
    }
  }

  /** The raw scores of one chunk, one per label. */
  async logits(samples: Int16Array | Float32Array | Float64Array): Promise<Float32Array> {
    if (this.closed) throw new ModelError(`${this.name}: the model is closed`);
    const outputs = await runSession(this.ort, this.session, this.inputName, toModelInput(samples), this.name);
    const data = (outputs[this.outputName] as Tensor).data as Float32Array;
    if (data.length !== this.labels.length) {
      throw new ModelError(`${this.name}: output "${this.outputName}" has ${data.length} scores for ${this.labels.length} labels`);
    }
    return data;
  }

  /** Confidence of every label for one chunk (in label order). */
  async confidences(samples: Int16Array | Float32Array | Float64Array, sensitivity = DEFAULT_SENSITIVITY): Promise<Float32Array> {
    checkSensitivity(sensitivity);
    const logits = await this.logits(samples);
    return logits.map((l) => confidenceOf(l, sensitivity));
  }

  /** The labels at or above the minimum confidence, most confident first. */
  async classify(samples: Int16Array | Float32Array | Float64Array, opts: ClassifyOptions = {}): Promise<Prediction[]> {
    const sensitivity = opts.sensitivity ?? DEFAULT_SENSITIVITY;
    const minConfidence = opts.minConfidence ?? DEFAULT_MIN_CONFIDENCE;
    checkSensitivity(sensitivity);
    if (!(minConfidence >= 0 && minConfidence <= 1)) throw new ModelError(`minConfidence must be between 0 and 1, got ${minConfidence}`);
    const logits = await this.logits(samples);
    const out: Prediction[] = [];
    for (let i = 0; i < logits.length; i++) {
      const confidence = confidenceOf(logits[i], sensitivity);
      if (confidence >= minConfidence) out.push({ ...this.labels[i], index: i, logit: logits[i], confidence });
    }
    return out.sort((a, b) => b.confidence - a.confidence || a.index - b.index);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.session.release();
  }
}

/** Loads a model; the same as Model.load. */
export function loadModel(opts: LoadModelOptions): Promise<Model> {
  return Model.load(opts);
}

/** The built-in demonstration model (models/builtin; see docs/model.md). */
export function loadBuiltinModel(opts: { threads?: number } = {}): Promise<Model> {
  return Model.load({ model: BUILTIN_MODEL_PATH, labels: BUILTIN_LABELS_PATH, threads: opts.threads, name: 'built-in model' });
}

async function readLabels(labels: LoadModelOptions['labels'], name: string): Promise<ModelLabel[]> {
  if (Array.isArray(labels)) return parseLabels(labels.join('\n'));
  if (typeof labels === 'object' && 'text' in labels) return parseLabels(labels.text);
  try {
    return parseLabels(await fs.readFile(labels as string, 'utf8'));
  } catch (err) {
    if (err instanceof ModelError) throw new ModelError(`${name}: ${err.message}`);
    throw new ModelError(`${name}: cannot read the labels file: ${(err as Error).message}`, { cause: err });
  }
}

async function runSession(
  ort: Ort,
  session: InferenceSession,
  inputName: string,
  input: Float32Array,
  name: string,
): Promise<InferenceSession.ReturnType> {
  try {
    return await session.run({ [inputName]: new ort.Tensor('float32', input, [1, MODEL_INPUT_SAMPLES]) });
  } catch (err) {
    throw new ModelError(`${name}: inference failed: ${firstLine(err)}`, { cause: err });
  }
}

function firstLine(err: unknown): string {
  const msg = err instanceof Error ? err.message : String(err);
  return msg.split('\n')[0].slice(0, 500);
}
