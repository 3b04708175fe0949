/**
 * `npm run bench -- inference-birdnet`: the inference bench with a model of BirdNET v2.4's size
 * (issue 31, "measured at BirdNET's size"). The model is generated into bench/.cache/ on the first
 * run (birdnet-size-model.ts: random weights, BirdNET's interface, ~0.81 GFLOPs per window) and
 * reused after. Phases, each BENCH_SECONDS (default 10):
 *
 *   floor      ONNX Runtime alone (session.run, one intra-op thread), one thread, then one per core
 *   runner     decode → Model.analyze (the runner's input conversion, sigmoid, embedding copy)
 *   whole path WAV → decode → model → detection rows through createInferenceHandler, as the hub's
 *              worker runs it (INFERENCE_JOBS_IN_FLIGHT jobs side by side, the model on its own
 *              thread), one worker, then one per core; then the same with a batch-capable model
 *              (windows waiting together run as one batch); then one job at a time with the model
 *              on the worker's thread (before stop 43), with the time of each handler dependency
 *              (the profile). BENCH_PROFILE_SQL=1 adds each statement's time to the profile.
 *   batching   ONNX Runtime alone at batch 1, 4 and 8 on one thread (what batching can gain at most)
 *
 * and a summary: chunks/s per core, satellites served in real time per core (one 3 s chunk every
 * 3 s each: chunks/s × 3) and the whole path as a share of the floor.
 */
import os from 'node:os';
import fs from 'node:fs';
import { BIRDNET_GFLOPS, ensureBenchModel } from './birdnet-size-model.ts';
import { inThreads, measureModelOnly, measureSession, prepare, report, rowsIn, sum, type Figures, type RunAs } from './inference.ts';
import { DEFAULT_JOBS_IN_FLIGHT } from '../src/inference/worker.ts';
import { soundscapeChunk } from '../src/satellite/soundscape.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const BATCHES = [1, 4, 8];

/** Raw logits of the unscaled model on a few soundscape windows (to scale its head). */
async function rawLogits(bytes: Uint8Array): Promise<Float32Array[]> {
  const ort = await import('onnxruntime-node');
  const session = await ort.InferenceSession.create(bytes, { intraOpNumThreads: os.availableParallelism(), logSeverityLevel: 3 });
  const out: Float32Array[] = [];
  for (let i = 0; i < 12; i++) {
    const input = Float32Array.from(soundscapeChunk(99, i).samples, (v) => v / 32768);
    const r = await session.run({ input: new ort.Tensor('float32', input, [1, input.length]) });
    out.push(Float32Array.from(r.logits.data as Float32Array));
  }
  await session.release();
  if (out.some((l) => l.some((v) => !Number.isFinite(v)))) throw new Error('the generated model gives non-finite logits');
  return out;
}

const perChunk = (f: Figures, threads = 1) => (f.wallMs * threads) / f.chunks;
const rate = (f: Figures) => (1000 * f.chunks) / f.wallMs;

export async function run(): Promise<void> {
  const t0 = performance.now();
  const files = await ensureBenchModel(rawLogits);
  const gflops = files.flops / 1e9;
  const cores = os.availableParallelism();
  const workers = Number(process.env.BENCH_WORKERS ?? cores);
  console.log(
    `model: ${gflops.toFixed(3)} GFLOPs per window (BirdNET 2.4: ${BIRDNET_GFLOPS}, ${(100 * (gflops / BIRDNET_GFLOPS - 1)).toFixed(1)} %), ` +
      `${(files.params / 1e6).toFixed(2)} M weights, ${(fs.statSync(files.single).size / 1e6).toFixed(1)} MB, ` +
      `labels from ${files.labelsSource} (ready in ${((performance.now() - t0) / 1000).toFixed(1)} s; bench/.cache/)`,
  );
  const { wavs, setup, cleanup } = await prepare();
  setup.model = { path: files.single, labels: files.labels };
  console.log(`inference bench at BirdNET's size: rows in ${rowsIn(setup)}, ${SECONDS} s per phase, ${cores} cores, ${workers} workers`);
  const session = (n: number, model: string, batch: number) => inThreads<Figures>(n, { mode: 'session', model, batch, seconds: SECONDS });
  try {
    const floor1 = await measureSession(files.single, 1, SECONDS);
    report('floor: ONNX Runtime alone, 1 thread', floor1, 1);
    const floorN = sum(await session(workers, files.single, 1));
    report(`floor: ONNX Runtime alone, ${workers} threads`, floorN, workers);
    const runner = await measureModelOnly(wavs, SECONDS, setup);
    report('decode → runner (Model.analyze)', runner, 1, `, decode ${(runner.decodeMs / runner.chunks).toFixed(3)} ms`);
    const handler = (n: number, as: RunAs) => inThreads<Figures>(n, { mode: 'handler', setup, seconds: SECONDS, as });
    // As the hub's worker runs: jobs side by side, the model on its own thread; first a model
    // that takes one window per run, then one whose batch dimension is free (BirdNET's ONNX builds).
    const hub: RunAs = { inFlight: DEFAULT_JOBS_IN_FLIGHT, offThread: true };
    const whole1 = (await handler(1, hub))[0];
    report(`WAV → model → rows, 1 worker`, whole1, 1);
    const wholeN = sum(await handler(workers, hub));
    report(`WAV → model → rows, ${workers} workers`, wholeN, workers);
    const batched: RunAs = { ...hub, modelPath: files.batched };
    const batch1 = (await handler(1, batched))[0];
    report('… batch-capable model, 1 worker', batch1, 1);
    const batchN = sum(await handler(workers, batched));
    report(`… batch-capable model, ${workers} workers`, batchN, workers);
    // Before: one job at a time, the model on the worker's own thread.
    const serial1 = (await handler(1, { inFlight: 1 }))[0];
    report('… one job at a time, model in-thread', serial1, 1);

    // Where a chunk's time goes outside the model, one job at a time (ms per chunk). The settings
    // read overlaps the chunk's row and the audio read, so the parts add up to more than the wait.
    const parts = Object.entries(serial1.parts ?? {}).map(([k, ms]) => `${k} ${(ms / serial1.chunks).toFixed(2)}`);
    console.log(
      `profile, one job at a time, ms per chunk: whole ${perChunk(serial1).toFixed(2)} · model (analyze) ${(serial1.modelMs / serial1.chunks).toFixed(2)} · ` +
        `outside ${(perChunk(serial1) - serial1.modelMs / serial1.chunks).toFixed(2)}, of which ${parts.join(' · ')}`,
    );

    const batches: Figures[] = [];
    for (const b of BATCHES) {
      batches.push(await measureSession(files.batched, b, SECONDS));
      const f = batches[batches.length - 1];
      report(`batch ${b}: ONNX Runtime alone, 1 thread`, f, 1, `, ${(perChunk(f) * b).toFixed(1)} ms per run`);
    }

    const msFloor = perChunk(floor1);
    const gflopsPerS = (gflops * 1000) / msFloor;
    console.log('\nsummary (per core; each satellite sends one 3 s chunk every 3 s):');
    const line = (what: string, chunksPerCore: number, floorPerCore: number) =>
      console.log(
        `  ${what.padEnd(36)} ${chunksPerCore.toFixed(1).padStart(6)} chunks/s per core → ${(chunksPerCore * 3).toFixed(0).padStart(4)} satellites per core in real time` +
          (floorPerCore ? ` · ${((100 * chunksPerCore) / floorPerCore).toFixed(1)} % of the floor` : ''),
      );
    line('floor, 1 thread', rate(floor1), 0);
    line(`floor, ${workers} threads`, rate(floorN) / workers, 0);
    line('whole path, 1 worker', rate(whole1), rate(floor1));
    line(`whole path, ${workers} workers`, rate(wholeN) / workers, rate(floorN) / workers);
    line('… batch-capable model, 1 worker', rate(batch1), rate(floor1));
    line(`… batch-capable model, ${workers} workers`, rate(batchN) / workers, rate(floorN) / workers);
    line('… one job at a time, model in-thread', rate(serial1), rate(floor1));
    console.log(
      `  floor: ${msFloor.toFixed(1)} ms per window on one thread = ${gflopsPerS.toFixed(1)} GFLOP/s; outside the model, one job at a time: ` +
        `${(perChunk(serial1) - serial1.modelMs / serial1.chunks).toFixed(2)} ms per chunk (${(100 * (1 - serial1.modelMs / serial1.wallMs)).toFixed(1)} %)`,
    );
    const b1 = rate(batches[0]);
    console.log(
      `  batching: ${BATCHES.map((b, i) => `batch ${b} ${((100 * rate(batches[i])) / b1).toFixed(0)} %`).join(' · ')} of batch 1's windows/s`,
    );
  } finally {
    await cleanup();
  }
}
