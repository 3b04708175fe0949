// A model's ONNX Runtime session on a thread of its own (session.ts). Plain JavaScript: a worker
// thread starts without the TypeScript loader of the main thread.
//
// onnxruntime-node runs an inference synchronously on the thread that calls it: on the main
// thread, a 10–20 ms window of BirdNET's size would stall the event loop, so the next chunk's
// statements and the last chunk's rows could not move while the model runs. Here they can.
//
// Windows that wait together are run as one batch ([B, N]) when the model's first input
// dimension is free: a deep queue costs less per window (docs/model.md "Batching"). A model that
// refuses a batch, or answers one with outputs that are not one row per window, is run one
// window at a time from then on.
import { parentPort, workerData } from 'node:worker_threads';

const { bytes, options, maxBatch } = workerData;
let ort;
let session;
try {
  ort = await import('onnxruntime-node');
  session = await ort.InferenceSession.create(bytes, options);
} catch (err) {
  parentPort.postMessage({ kind: 'failed', message: String(err?.message ?? err) });
  process.exit(0);
}

const inputName = session.inputNames[0];
const meta = (session.inputMetadata ?? []).map((m) => ({ isTensor: m.isTensor, type: m.type, shape: m.isTensor ? [...m.shape] : [] }));
const first = meta[0]?.shape?.[0];
let batchable = maxBatch > 1 && meta.length === 1 && (typeof first === 'string' || first === -1);
parentPort.postMessage({ kind: 'ready', inputNames: [...session.inputNames], outputNames: [...session.outputNames], inputMetadata: meta });

/** @type {{ id: number, input: Float32Array }[]} */
const pending = [];
let draining = false;

parentPort.on('message', (m) => {
  if (m.kind === 'run') {
    pending.push(m);
    if (!draining) {
      draining = true;
      // After the messages already queued: they join this batch.
      setImmediate(drain);
    }
  } else if (m.kind === 'release') {
    void session.release().finally(() => process.exit(0));
  }
});

/** Runs of the session so far (a batch is one run): the replies say which run answered them. */
let runs = 0;

const plain = (t) => ({ type: t.type, dims: [...t.dims], size: t.size, data: t.data });

/** One row of a batched output, as if the window had been run alone. */
function rowOf(t, row, rows) {
  const per = t.size / rows;
  return { type: t.type, dims: [1, ...t.dims.slice(1)], size: per, data: t.data.slice(row * per, (row + 1) * per) };
}

async function runOne(req) {
  try {
    const out = await session.run({ [inputName]: new ort.Tensor('float32', req.input, [1, req.input.length]) });
    const outputs = Object.fromEntries(Object.entries(out).map(([k, t]) => [k, plain(t)]));
    parentPort.postMessage({ kind: 'result', id: req.id, outputs, run: ++runs });
  } catch (err) {
    parentPort.postMessage({ kind: 'result', id: req.id, error: String(err?.message ?? err) });
  }
}

async function runBatch(reqs) {
  const n = reqs[0].input.length;
  const input = new Float32Array(n * reqs.length);
  reqs.forEach((r, i) => input.set(r.input, i * n));
  let out;
  try {
    out = await session.run({ [inputName]: new ort.Tensor('float32', input, [reqs.length, n]) });
  } catch {
    out = null;
  }
  const tensors = out ? Object.values(out) : [];
  if (!out || tensors.some((t) => t.dims[0] !== reqs.length || t.size % reqs.length !== 0)) {
    // Not a batch model after all: one window at a time, now and from now on.
    batchable = false;
    for (const r of reqs) await runOne(r);
    return;
  }
  const run = ++runs;
  reqs.forEach((r, i) => {
    const outputs = Object.fromEntries(Object.entries(out).map(([k, t]) => [k, rowOf(t, i, reqs.length)]));
    parentPort.postMessage({ kind: 'result', id: r.id, outputs, run });
  });
}

/** Lets the messages that came during the last run join the next batch (they are read between runs). */
const yieldToMessages = () => new Promise((resolve) => setImmediate(resolve));

async function drain() {
  while (pending.length > 0) {
    if (batchable) await yieldToMessages();
    const n = pending[0].input.length;
    let take = 1;
    if (batchable) while (take < pending.length && take < maxBatch && pending[take].input.length === n) take++;
    const reqs = pending.splice(0, take);
    if (reqs.length === 1) await runOne(reqs[0]);
    else await runBatch(reqs);
  }
  draining = false;
}
