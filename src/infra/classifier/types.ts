/**
 * The classifier port (DESIGN.md §2 "Classifier"): BirdNET's contract. The input is one float32
 * tensor [1, 144000] (3 s of 48 kHz mono, samples in [-1, 1]); the output is one score (logit) per
 * label, read as a confidence through a sigmoid with a sensitivity (confidence.ts). onnx.ts is the
 * adapter (ONNX Runtime on the CPU).
 */
export const MODEL_SAMPLE_RATE = 48_000;
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

/** What classifies a chunk: the best predictions of one 3 s window, most confident first. */
export interface Classifier {
  classify(samples: Samples, opts?: ClassifyOptions): Promise<Prediction[]>;
}
