/**
 * The classifier adapter: an ONNX file plus a labels file (one label per line, line i = output i:
 * BirdNET's `Scientific name_Common name`, or an eBird code as Perch writes them), run with ONNX
 * Runtime on the CPU. The contract (input tensor, one logit per label) is the port's (types.ts);
 * the family, read from the input's length, is family.ts's; confidences come from confidence.ts.
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
import {
  DEFAULT_MIN_CONFIDENCE,
  DEFAULT_SENSITIVITY,
  MODEL_SAMPLE_RATE,
  ModelError,
  type Classifier,
  type ClassifyOptions,
  type ModelLabel,
  type ModelWindow,
  type Prediction,
  type Samples,
  type WindowResult,
} from './types.ts';
import { checkSensitivity, confidenceOf, toModelInput } from './confidence.ts';
import { parseLabels } from './labels.ts';
import { resolveWindow, type WindowHint } from './family.ts';
import { resample } from './resample.ts';
import { openSession, openSessionThread, type ModelSession, type OutputTensor, type SessionOptions } from './session.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
export const BUILTIN_MODEL_PATH = path.join(root, 'models', 'builtin', 'model.onnx');
export const BUILTIN_LABELS_PATH = path.join(root, 'models', 'builtin', 'labels.txt');

export interface LoadModelOptions {
  /** An ONNX file path, or its bytes. */
  model: string | Uint8Array;
  /** A labels file path, or the labels themselves (text, or one label per array item). */
  labels: string | readonly string[] | { text: string };
  /** Threads ONNX Runtime may use inside one inference; default 1 (one worker per core). */
  threads?: number;
  /** A name for error messages; default the model path. */
  name?: string;
  /** The rate and/or window the upload gave (family.ts); needed when the input's length is no known family. */
  window?: WindowHint;
  /**
   * Runs the model on a thread of its own (session.ts), so the caller's event loop moves while a
   * window is computed; windows that wait together then run as one batch of up to `maxBatch`
   * (default 4: half the worker's jobs in flight, so the other half is read and recorded while a
   * batch runs) when the model allows it. Default false: on the calling thread.
   */
  offThread?: boolean;
  maxBatch?: number;
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

export class Model implements Classifier {
  private closed = false;

  private constructor(
    private readonly session: ModelSession,
    readonly name: string,
    readonly labels: readonly ModelLabel[],
    readonly inputName: string,
    readonly outputName: string,
    readonly window: ModelWindow,
    /** The output kept as the window's embedding (null: none), and its number of values. */
    readonly embeddingOutput: string | null,
    readonly embeddingSize: number,
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

    let session: ModelSession;
    const options: SessionOptions = {
      executionProviders: ['cpu'],
      intraOpNumThreads: opts.threads ?? 1,
      interOpNumThreads: 1,
      graphOptimizationLevel: 'all',
      logSeverityLevel: 3,
    };
    try {
      session = opts.offThread ? await openSessionThread(bytes, options, opts.maxBatch ?? 4) : await openSession(ort, bytes, options);
    } catch (err) {
      throw new ModelError(`${name}: not a loadable ONNX model: ${firstLine(err)}`, { cause: err });
    }

    try {
      if (session.inputNames.length !== 1) {
        throw new ModelError(
          `${name}: the model has ${session.inputNames.length} inputs (${session.inputNames.join(', ')}); one float32 input [1, samples] is needed`,
        );
      }
      const inputName = session.inputNames[0];
      const meta = session.inputMetadata?.[0];
      let inputSamples: number | null = null;
      if (meta?.isTensor) {
        if (meta.type !== 'float32') throw new ModelError(`${name}: input "${inputName}" is ${meta.type}; float32 is needed`);
        const dims = meta.shape;
        const last = dims[dims.length - 1];
        if (dims.length !== 2 || (typeof dims[0] === 'number' && dims[0] !== 1 && dims[0] !== -1)) {
          throw new ModelError(
            `${name}: input "${inputName}" has shape ${describeShape(dims)}; [1, samples] is needed (e.g. [1, 144000]: 3 s at 48 kHz)`,
          );
        }
        inputSamples = typeof last === 'number' && last > 0 ? last : null;
      }
      // The family: from the input's length, or what the upload gave (a ModelError says what to give).
      const window = resolveWindow(inputSamples, opts.window ?? {}, name);
      // One warm-up run on silence checks the whole graph and tells which output has one score per label.
      const outputs = await runSession(session, new Float32Array(window.inputSamples), name);
      const sizes = session.outputNames.map((o) => ({ o, dims: outputs[o].dims, size: outputs[o].size, type: outputs[o].type }));
      const match = sizes.find((s) => s.type === 'float32' && s.size === labels.length && s.dims[s.dims.length - 1] === labels.length);
      if (!match) {
        throw new ModelError(
          `${name}: no output has one float32 score per label (${labels.length} labels); outputs: ` +
            sizes.map((s) => `${s.o} ${s.type} ${describeShape(s.dims)}`).join(', '),
        );
      }
      // The embedding: among the other outputs, a flat float32 vector per window ([1, D] or [D]);
      // one whose name says "embed" first (Perch 2 also has spatial and spectrogram outputs).
      const vectors = sizes.filter((s) => s.o !== match.o && s.type === 'float32' && s.size > 1 && s.size === s.dims[s.dims.length - 1]);
      const embedding = vectors.find((s) => /embed/i.test(s.o)) ?? vectors[0] ?? null;
      return new Model(session, name, labels, inputName, match.o, window, embedding?.o ?? null, embedding?.size ?? 0);
    } catch (err) {
      await session.release().catch(() => undefined);
      throw err;
    }
  }

  /**
   * One window (at 48 kHz, as long as the model's window) as the model's input: resampled to the
   * model's rate when it differs (resample.ts), padded with silence or cut to the input's length.
   */
  private input(samples: Samples): Float32Array {
    if (this.window.sampleRate === MODEL_SAMPLE_RATE) return toModelInput(samples, this.window.inputSamples);
    const at48k = toModelInput(samples, Math.round((this.window.windowMs * MODEL_SAMPLE_RATE) / 1000));
    return toModelInput(resample(at48k, MODEL_SAMPLE_RATE, this.window.sampleRate), this.window.inputSamples);
  }

  private async run(samples: Samples): Promise<{ logits: Float32Array; embedding: Float32Array | null }> {
    if (this.closed) throw new ModelError(`${this.name}: the model is closed`);
    const outputs = await runSession(this.session, this.input(samples), this.name);
    const data = outputs[this.outputName].data as Float32Array;
    if (data.length !== this.labels.length) {
      throw new ModelError(`${this.name}: output "${this.outputName}" has ${data.length} scores for ${this.labels.length} labels`);
    }
    const emb = this.embeddingOutput ? (outputs[this.embeddingOutput] as OutputTensor | undefined) : undefined;
    // A copy: the runtime may reuse the output's buffer on the next run.
    const embedding = emb && emb.type === 'float32' && emb.size === this.embeddingSize ? Float32Array.from(emb.data as Float32Array) : null;
    return { logits: data, embedding };
  }

  /** The raw scores of one window, one per label. */
  async logits(samples: Samples): Promise<Float32Array> {
    return (await this.run(samples)).logits;
  }

  /** Confidence of every label for one chunk (in label order). */
  async confidences(samples: Samples, sensitivity = DEFAULT_SENSITIVITY): Promise<Float32Array> {
    checkSensitivity(sensitivity);
    const logits = await this.logits(samples);
    return logits.map((l) => confidenceOf(l, sensitivity));
  }

  /** The labels at or above the minimum confidence, most confident first. */
  async classify(samples: Samples, opts: ClassifyOptions = {}): Promise<Prediction[]> {
    return (await this.analyze(samples, opts)).predictions;
  }

  /** classify, with the window's embedding (null when the model has no embedding output). */
  async analyze(samples: Samples, opts: ClassifyOptions = {}): Promise<WindowResult> {
    const sensitivity = opts.sensitivity ?? DEFAULT_SENSITIVITY;
    const minConfidence = opts.minConfidence ?? DEFAULT_MIN_CONFIDENCE;
    checkSensitivity(sensitivity);
    if (!(minConfidence >= 0 && minConfidence <= 1)) throw new ModelError(`minConfidence must be between 0 and 1, got ${minConfidence}`);
    const { logits, embedding } = await this.run(samples);
    const out: Prediction[] = [];
    for (let i = 0; i < logits.length; i++) {
      const confidence = confidenceOf(logits[i], sensitivity);
      if (confidence >= minConfidence) out.push({ ...this.labels[i], index: i, logit: logits[i], confidence });
    }
    return { predictions: out.sort((a, b) => b.confidence - a.confidence || a.index - b.index), embedding };
  }

  /** Windows run since the model loaded (its warm-up included), and runs of the session: fewer runs means batches. */
  runStats(): { windows: number; runs: number } {
    return this.session.stats();
  }

  /** False once an off-thread session's thread has died (load the model again). */
  get usable(): boolean {
    return !this.closed && this.session.usable;
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
export function loadBuiltinModel(opts: Pick<LoadModelOptions, 'threads' | 'offThread' | 'maxBatch'> = {}): Promise<Model> {
  return Model.load({ ...opts, model: BUILTIN_MODEL_PATH, labels: BUILTIN_LABELS_PATH, name: 'built-in model' });
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

async function runSession(session: ModelSession, input: Float32Array, name: string): Promise<Record<string, OutputTensor>> {
  try {
    return await session.run(input);
  } catch (err) {
    throw new ModelError(`${name}: inference failed: ${firstLine(err)}`, { cause: err });
  }
}

function firstLine(err: unknown): string {
  const msg = err instanceof Error ? err.message : String(err);
  return msg.split('\n')[0].slice(0, 500);
}
