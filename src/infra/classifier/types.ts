/**
 * The classifier port (DESIGN.md §2 "Classifier"). The input is one float32 tensor [1, N] of mono
 * audio in [-1, 1]; its length says the model's family (family.ts): BirdNET 2.4's 3 s at 48 kHz
 * (N = 144000), 5 s at 32 kHz (N = 160000: BirdNET 3.0, Perch 2), or a rate and window the upload
 * names. The output is one score (logit) per label, read as a confidence through a sigmoid with a
 * sensitivity (confidence.ts); a model may also have an embedding output. Samples handed to a
 * classifier are at the chunks' 48 kHz; a model at another rate resamples them (resample.ts).
 * onnx.ts is the adapter (ONNX Runtime on the CPU).
 */
/** The rate of the chunks' audio, which every classifier is handed (protocol/wav.ts SAMPLE_RATE). */
export const MODEL_SAMPLE_RATE = 48_000;
/** BirdNET 2.4's input: 3 s at 48 kHz. */
export const MODEL_INPUT_SAMPLES = 144_000;
export const DEFAULT_SENSITIVITY = 1.0;
export const MIN_SENSITIVITY = 0.5;
export const MAX_SENSITIVITY = 1.5;
/** BirdNET-Analyzer's default minimum confidence. */
export const DEFAULT_MIN_CONFIDENCE = 0.25;

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

/** One chunk of audio: 16-bit samples, or floats in [-1, 1]. */
export type Samples = Int16Array | Float32Array | Float64Array;

/**
 * What a model listens to (family.ts): `3s-48k` (BirdNET 2.4), `5s-32k` (BirdNET 3.0, Perch 2),
 * or `custom` (a rate and window given at upload).
 */
export type ModelFamily = '3s-48k' | '5s-32k' | 'custom';

export interface ModelWindow {
  family: ModelFamily;
  /** The rate the model's input is sampled at, in Hz. */
  sampleRate: number;
  /** The window one inference covers, in ms. */
  windowMs: number;
  /** The input tensor's length: sampleRate × windowMs / 1000. */
  inputSamples: number;
}

/** BirdNET 2.4's window: what a classifier without a `window` takes. */
export const BIRDNET_WINDOW: ModelWindow = Object.freeze({
  family: '3s-48k',
  sampleRate: MODEL_SAMPLE_RATE,
  windowMs: 3000,
  inputSamples: MODEL_INPUT_SAMPLES,
});

/** One window's answer: the predictions at or above the minimum confidence, and its embedding. */
export interface WindowResult {
  predictions: Prediction[];
  /** The embedding output's values for this window; null when the model has none. */
  embedding: Float32Array | null;
}

/**
 * What classifies a window: the best predictions, most confident first. Samples are at 48 kHz,
 * as long as the window (`window.windowMs`; shorter is padded with silence, longer is cut).
 */
export interface Classifier {
  /** The model's window and rate; absent: BirdNET 2.4's (3 s at 48 kHz). */
  readonly window?: ModelWindow;
  classify(samples: Samples, opts?: ClassifyOptions): Promise<Prediction[]>;
  /** classify, with the window's embedding (models with an embedding output). */
  analyze?(samples: Samples, opts?: ClassifyOptions): Promise<WindowResult>;
}
