/**
 * A model's ONNX Runtime session, where the Model (onnx.ts) runs it: on the calling thread, or on
 * a thread of its own (session-thread.mjs) so that the event loop keeps moving while a window is
 * computed. The inference worker runs its models off the thread: the database statements and
 * storage reads of the chunks before and after run while the model does (docs/model.md
 * "At BirdNET's size"). Uploads' checks, the satellite and the tests run them in-thread.
 *
 * Off the thread, windows that wait together run as one batch when the model allows it.
 */
import { Worker } from 'node:worker_threads';
import type * as OrtModule from 'onnxruntime-node';
import type { InferenceSession } from 'onnxruntime-node';
import { ModelError } from './types.ts';

/** One output of a run: for a batched run, this window's row (first dimension 1). */
export interface OutputTensor {
  type: string;
  dims: readonly number[];
  size: number;
  data: unknown;
}

export interface InputInfo {
  isTensor: boolean;
  type?: string;
  shape: readonly (number | string)[];
}

export interface ModelSession {
  readonly inputNames: readonly string[];
  readonly outputNames: readonly string[];
  readonly inputMetadata: readonly InputInfo[];
  /** Runs one window ([1, N] of the first input). */
  run(input: Float32Array): Promise<Record<string, OutputTensor>>;
  /** False once the session's thread has died: the model must be loaded again. */
  readonly usable: boolean;
  /** Windows answered and runs of the session that answered them (fewer runs than windows: batches). */
  stats(): { windows: number; runs: number };
  release(): Promise<void>;
}

export type SessionOptions = InferenceSession.SessionOptions;

type Ort = typeof OrtModule;

/** The session on the calling thread. */
export async function openSession(ort: Ort, bytes: Uint8Array, options: SessionOptions): Promise<ModelSession> {
  const session = await ort.InferenceSession.create(bytes, options);
  const inputMetadata: InputInfo[] = (session.inputMetadata ?? []).map((m) => ({
    isTensor: m.isTensor,
    type: m.isTensor ? m.type : undefined,
    shape: m.isTensor ? m.shape : [],
  }));
  let windows = 0;
  return {
    inputNames: session.inputNames,
    outputNames: session.outputNames,
    inputMetadata,
    usable: true,
    stats: () => ({ windows, runs: windows }),
    run: async (input) => {
      const out = await session.run({ [session.inputNames[0]]: new ort.Tensor('float32', input, [1, input.length]) });
      windows++;
      return out as Record<string, OutputTensor>;
    },
    release: () => session.release(),
  };
}

interface Ready {
  kind: 'ready';
  inputNames: string[];
  outputNames: string[];
  inputMetadata: InputInfo[];
}
type Reply =
  | Ready
  | { kind: 'failed'; message: string }
  | { kind: 'result'; id: number; outputs?: Record<string, OutputTensor>; run?: number; error?: string };

/**
 * The session on a thread of its own. `maxBatch` > 1 lets windows that wait together run as one
 * batch when the model's first input dimension is free. Rejects with the runtime's message when
 * the file does not load.
 */
export function openSessionThread(bytes: Uint8Array, options: SessionOptions, maxBatch: number): Promise<ModelSession> {
  const worker = new Worker(new URL('./session-thread.mjs', import.meta.url), { workerData: { bytes, options, maxBatch } });
  const pending = new Map<number, { resolve: (o: Record<string, OutputTensor>) => void; reject: (e: Error) => void }>();
  let nextId = 1;
  let dead: Error | null = null;
  let released = false;
  const counted = { windows: 0, runs: 0 };

  return new Promise<ModelSession>((resolve, reject) => {
    const fail = (err: Error) => {
      dead ??= err;
      for (const p of pending.values()) p.reject(dead);
      pending.clear();
      reject(dead);
    };
    worker.on('error', (err) => fail(new ModelError(`the model's thread failed: ${err.message}`, { cause: err })));
    worker.on('exit', (code) => fail(new ModelError(released ? 'the model is closed' : `the model's thread stopped (${code})`)));
    worker.on('message', (m: Reply) => {
      if (m.kind === 'failed') return fail(new Error(m.message));
      if (m.kind === 'ready') {
        // Idle between jobs: the thread does not keep the process alive.
        worker.unref();
        return resolve(session(m));
      }
      const p = pending.get(m.id);
      if (!p) return;
      pending.delete(m.id);
      if (pending.size === 0) worker.unref();
      if (m.error !== undefined) return p.reject(new Error(m.error));
      counted.windows++;
      counted.runs = Math.max(counted.runs, m.run ?? 0);
      p.resolve(m.outputs!);
    });
  });

  function session(ready: Ready): ModelSession {
    return {
      inputNames: ready.inputNames,
      outputNames: ready.outputNames,
      inputMetadata: ready.inputMetadata,
      get usable() {
        return dead === null;
      },
      stats: () => ({ ...counted }),
      run(input) {
        if (dead) return Promise.reject(dead);
        const id = nextId++;
        worker.ref();
        return new Promise((resolve, reject) => {
          pending.set(id, { resolve, reject });
          // The input is the Model's own copy (toModelInput): moved, not cloned.
          worker.postMessage({ kind: 'run', id, input }, [input.buffer as ArrayBuffer]);
        });
      },
      async release() {
        if (released || dead) return;
        released = true;
        const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
        worker.postMessage({ kind: 'release' });
        // A thread busy in a long run is not waited for past a second.
        const timer = setTimeout(() => void worker.terminate(), 1000);
        await exited;
        clearTimeout(timer);
      },
    };
  }
}
