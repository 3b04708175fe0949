/**
 * The range model adapter (issue 35): BirdNET's species-range "meta model" as ONNX. One float32
 * input [1, 3] (latitude, longitude, week of BirdNET's 48-week year), one output with one score
 * per label of its labels file; scores are used as the model gives them (BirdNET's meta model ends
 * in a sigmoid: values in [0, 1], compared with a threshold of 0.03 by BirdNET-Analyzer).
 *
 * Loading checks the shape and runs it once (0°, 0°, week 1), so a model that loads has produced
 * one score per label; every failure is a ModelError saying what is wrong.
 */
import type * as OrtModule from 'onnxruntime-node';
import { ModelError } from './types.ts';
import { openSession, type ModelSession } from './session.ts';

type Ort = typeof OrtModule;
let ortPromise: Promise<Ort> | null = null;

function runtime(): Promise<Ort> {
  ortPromise ??= import('onnxruntime-node').catch((err: unknown) => {
    ortPromise = null;
    throw new ModelError(`ONNX Runtime (onnxruntime-node) cannot be loaded: ${(err as Error).message}`, { cause: err });
  });
  return ortPromise;
}

/**
 * BirdNET's week of a date: four weeks per month, days 29-31 in the month's fourth
 * ((month − 1) × 4 + min(⌊(day − 1) / 7⌋ + 1, 4)), so 1-48. The UTC date: a satellite's chunk
 * near midnight may fall in the neighbouring week, which the range model's coarse weeks absorb.
 */
export function birdnetWeek(at: Date): number {
  return at.getUTCMonth() * 4 + Math.min(Math.floor((at.getUTCDate() - 1) / 7) + 1, 4);
}

export class RangeModel {
  private constructor(
    private readonly session: ModelSession,
    readonly name: string,
    readonly labelCount: number,
    private readonly outputName: string,
  ) {}

  static async load(opts: { model: Uint8Array; labelCount: number; name: string }): Promise<RangeModel> {
    const { name, labelCount } = opts;
    if (opts.model.length === 0) throw new ModelError(`${name}: the model file is empty`);
    const ort = await runtime();
    let session: ModelSession;
    try {
      session = await openSession(ort, opts.model, {
        executionProviders: ['cpu'],
        intraOpNumThreads: 1,
        interOpNumThreads: 1,
        graphOptimizationLevel: 'all',
        logSeverityLevel: 3,
      });
    } catch (err) {
      throw new ModelError(
        `${name}: not a loadable ONNX model: ${String((err as Error)?.message ?? err)
          .split('\n')[0]
          .slice(0, 500)}`,
      );
    }
    try {
      if (session.inputNames.length !== 1)
        throw new ModelError(
          `${name}: a range model has one input [1, 3] (latitude, longitude, week); this one has ${session.inputNames.length}`,
        );
      const meta = session.inputMetadata[0];
      if (meta?.isTensor) {
        const dims = meta.shape;
        if (meta.type !== 'float32' || dims.length !== 2 || (typeof dims[1] === 'number' && dims[1] !== 3))
          throw new ModelError(
            `${name}: a range model's input is float32 [1, 3] (latitude, longitude, week); this one is ${meta.type} [${dims.join(', ')}]`,
          );
      }
      const model = new RangeModel(session, name, labelCount, '');
      const outputs = await model.raw(0, 0, 1);
      const match = session.outputNames.find((o) => outputs[o].type === 'float32' && outputs[o].size === labelCount);
      if (!match)
        throw new ModelError(
          `${name}: no output has one float32 score per label (${labelCount} labels); outputs: ` +
            session.outputNames.map((o) => `${o} [${outputs[o].dims.join(', ')}]`).join(', '),
        );
      return new RangeModel(session, name, labelCount, match);
    } catch (err) {
      await session.release().catch(() => undefined);
      throw err;
    }
  }

  private async raw(latitude: number, longitude: number, week: number) {
    try {
      return await this.session.run(Float32Array.of(latitude, longitude, week));
    } catch (err) {
      throw new ModelError(
        `${this.name}: inference failed: ${String((err as Error)?.message ?? err)
          .split('\n')[0]
          .slice(0, 500)}`,
      );
    }
  }

  /** One score per label at a position in a week (1-48). */
  async scores(latitude: number, longitude: number, week: number): Promise<Float32Array> {
    const out = (await this.raw(latitude, longitude, week))[this.outputName];
    return Float32Array.from(out.data as Float32Array);
  }

  close(): Promise<void> {
    return this.session.release();
  }
}
