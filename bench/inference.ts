/**
 * `npm run bench -- inference`: chunks/s through WAV decode → built-in model, first on one
 * thread, then with one worker thread per core (each with its own ONNX Runtime session on one
 * intra-op thread, as the hub's workers run), and the share of time spent outside the model.
 * Writing detection rows is not part of this bench (the detections module does not exist yet).
 *
 * BENCH_SECONDS (default 10) is the measuring time of each phase; BENCH_WORKERS overrides the
 * worker count.
 */
import os from 'node:os';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { loadBuiltinModel } from '../src/inference/model.ts';
import { soundscapeChunk } from '../src/satellite/soundscape.ts';
import { decodeWav, encodeWav } from '../src/satellite/wav.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const DISTINCT_CHUNKS = 100;

interface Figures {
  chunks: number;
  wallMs: number;
  decodeMs: number;
  modelMs: number;
  detections: number;
}

/** Runs decode → classify over the WAV files in a loop for `seconds`. */
async function measure(wavs: Buffer[], seconds: number): Promise<Figures> {
  const model = await loadBuiltinModel({ threads: 1 });
  // Warm-up: first runs allocate ONNX Runtime's buffers.
  for (let i = 0; i < 10; i++) await model.classify(decodeWav(wavs[i % wavs.length]).samples);
  const f: Figures = { chunks: 0, wallMs: 0, decodeMs: 0, modelMs: 0, detections: 0 };
  const start = performance.now();
  const until = start + seconds * 1000;
  while (performance.now() < until) {
    const wav = wavs[f.chunks % wavs.length];
    const t0 = performance.now();
    const { samples } = decodeWav(wav, { expect48kMono: true });
    const t1 = performance.now();
    const predictions = await model.classify(samples);
    const t2 = performance.now();
    f.decodeMs += t1 - t0;
    f.modelMs += t2 - t1;
    f.detections += predictions.length;
    f.chunks++;
  }
  f.wallMs = performance.now() - start;
  await model.close();
  return f;
}

function report(title: string, f: Figures, threads: number): void {
  const rate = (1000 * f.chunks) / f.wallMs;
  const outside = 1 - f.modelMs / (f.wallMs * threads);
  console.log(
    `${title.padEnd(24)} ${rate.toFixed(0).padStart(6)} chunks/s (${(rate * 3).toFixed(0)}× real time) · ` +
      `decode ${(f.decodeMs / f.chunks).toFixed(3)} ms, model ${(f.modelMs / f.chunks).toFixed(3)} ms per chunk · ` +
      `${(100 * outside).toFixed(1)} % of thread time outside the model · ${f.chunks} chunks, ${f.detections} detections`,
  );
}

export async function run(): Promise<void> {
  const wavs = Array.from({ length: DISTINCT_CHUNKS }, (_, i) => encodeWav(soundscapeChunk(2024, i).samples));
  console.log(`inference bench: built-in model, ${DISTINCT_CHUNKS} distinct soundscape chunks (288,044-byte WAVs), ${SECONDS} s per phase`);

  report('1 thread', await measure(wavs, SECONDS), 1);

  const workers = Number(process.env.BENCH_WORKERS ?? os.availableParallelism());
  const results = await Promise.all(
    Array.from({ length: workers }, () => {
      // Node 20 does not apply tsx's hooks to a worker's .ts entry: register them, then import this file.
      const boot = `import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(import.meta.url)}); })`;
      const worker = new Worker(boot, { eval: true, workerData: { wavs, seconds: SECONDS } });
      return new Promise<Figures>((resolve, reject) => {
        worker.once('message', resolve);
        worker.once('error', reject);
      });
    }),
  );
  const total = results.reduce((a, r) => ({
    chunks: a.chunks + r.chunks,
    wallMs: Math.max(a.wallMs, r.wallMs),
    decodeMs: a.decodeMs + r.decodeMs,
    modelMs: a.modelMs + r.modelMs,
    detections: a.detections + r.detections,
  }));
  report(`${workers} workers (1/core)`, total, workers);
}

if (!isMainThread && workerData) {
  const data = workerData as { wavs: Uint8Array[]; seconds: number };
  const figures = await measure(data.wavs.map((w) => Buffer.from(w.buffer, w.byteOffset, w.byteLength)), data.seconds);
  parentPort!.postMessage(figures);
}
