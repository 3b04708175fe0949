/**
 * The model runner (src/infra/classifier/onnx.ts) and the built-in model (models/builtin, built by
 * scripts/build-builtin-model.ts): BirdNET's interface, the soundscape's five species found in
 * chunks of many seeds, nothing found in silence, the sigmoid with sensitivity, and clear
 * errors for broken models.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BUILTIN_LABELS_PATH, BUILTIN_MODEL_PATH, loadBuiltinModel, loadModel, type Model } from '../src/infra/classifier/onnx.ts';
import { ModelError, MODEL_INPUT_SAMPLES } from '../src/infra/classifier/types.ts';
import { confidenceOf, toModelInput } from '../src/infra/classifier/confidence.ts';
import { parseLabels } from '../src/infra/classifier/labels.ts';
import { renderChunk, soundscapeChunk, SPECIES, SPECIES_LABELS } from '../src/satellite/soundscape.ts';
import { measureConfidences } from '../bench/model-confidence.ts';
import { identityModel } from './helpers/onnx-models.ts';

describe('built-in model', () => {
  let model: Model;
  let tmp: string;

  before(async () => {
    model = await loadBuiltinModel();
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'chorus-model-'));
  });
  after(async () => {
    await model.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  test("has BirdNET's interface: [1, 144000] float32 in, one logit per label out", () => {
    assert.deepEqual(
      model.labels.map((l) => l.label),
      [...SPECIES_LABELS, 'Human vocal_Human vocal', 'Engine_Engine', 'Noise_Noise'],
    );
    assert.deepEqual(model.labels[0], {
      label: 'Cuculus canorus_Common Cuckoo',
      scientificName: 'Cuculus canorus',
      commonName: 'Common Cuckoo',
    });
    assert.equal(model.inputName, 'input');
    assert.equal(model.outputName, 'logits');
    const size = fs.statSync(BUILTIN_MODEL_PATH).size;
    assert.ok(size < 100_000, `model.onnx is ${size} bytes`);
  });

  test('on the soundscape, confidence follows how clearly a call is heard: near calls all found, faint ones missed, noise misheard low', async () => {
    // 10 soundscapes of 30 chunks; seeds spread apart (neighbouring seeds give lopsided species mixes).
    const t0 = performance.now();
    const s = await measureConfidences(model, { seeds: Array.from({ length: 10 }, (_, k) => (k + 1) * 7919), chunksPerSeed: 30 });
    const ms = performance.now() - t0;
    const [near, mid, , far, farthest] = s.byDistance;
    assert.ok(s.calls > 200, `only ${s.calls} calls`);
    // Near birds are all heard, and heard surely; the farthest mostly not at all.
    assert.equal(near.found, near.calls, 'every call within 30 m found');
    assert.ok(mid.found >= 0.95 * mid.calls, `30–80 m: ${mid.found} of ${mid.calls}`);
    assert.ok(farthest.found <= 0.1 * farthest.calls, `300–500 m: ${farthest.found} of ${farthest.calls} found`);
    assert.ok(far.found < far.calls && far.found > 0, `160–300 m: some found, some missed (${far.found} of ${far.calls})`);
    const medianOf = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    const medians = s.byDistance.slice(0, 4).map((b) => medianOf(b.confidences));
    for (let k = 1; k < medians.length; k++)
      assert.ok(medians[k] < medians[k - 1], `median confidence falls with distance: ${medians.map((m) => m.toFixed(2))}`);
    // Spread as a real model's: most detections between 0.3 and 0.95, none a flat 100 %.
    const all = [...s.hits, ...s.falseAlarms.map((f) => f.confidence)];
    const spread = all.filter((c) => c >= 0.3 && c <= 0.95).length / all.length;
    assert.ok(spread >= 0.8, `${(spread * 100).toFixed(1)} % between 0.3 and 0.95`);
    assert.ok(Math.max(...all) < 0.97, `max confidence ${Math.max(...all)}`);
    // Noise is misheard now and then, always at low confidence.
    assert.ok(s.falseAlarms.length / all.length < 0.1, `${s.falseAlarms.length} misheard of ${all.length} detections`);
    assert.ok(
      s.falseAlarms.every((f) => f.confidence < 0.6),
      JSON.stringify(s.falseAlarms),
    );
    console.log(
      `built-in model: ${s.chunks} chunks, ${s.hits.length} of ${s.calls} calls found, ${s.falseAlarms.length} misheard, ` +
        `${(spread * 100).toFixed(0)} % of confidences in 0.3–0.95, ${(ms / s.chunks).toFixed(1)} ms per chunk with rendering`,
    );
  });

  test('each species alone is found with confidence above 0.8, and the others stay below 0.2', async () => {
    for (const s of SPECIES) {
      for (let seed = 1; seed <= 8; seed++) {
        const conf = await model.confidences(renderChunk({ species: [s.label], seed: 90_000 + seed }));
        SPECIES.forEach((other, i) => {
          if (other === s) assert.ok(conf[i] > 0.8, `${s.label} seed ${seed}: ${conf[i]}`);
          else assert.ok(conf[i] < 0.2, `${other.label} in a ${s.label} chunk, seed ${seed}: ${conf[i]}`);
        });
      }
    }
  });

  test('silent chunks, louder noise and digital silence yield nothing', async () => {
    for (let seed = 1; seed <= 20; seed++) {
      assert.deepEqual(await model.classify(renderChunk({ species: [], seed })), [], `silent chunk, seed ${seed}`);
      assert.deepEqual(await model.classify(renderChunk({ species: [], seed, noiseRms: 0.02 })), [], `noise 0.02, seed ${seed}`);
    }
    let silent = 0;
    for (let index = 0; silent < 10; index++) {
      const chunk = soundscapeChunk(77, index);
      if (!chunk.silent) continue;
      silent++;
      assert.deepEqual(await model.classify(chunk.samples, { minConfidence: 0.1 }), []);
    }
    assert.deepEqual(await model.classify(new Int16Array(MODEL_INPUT_SAMPLES)), []);
  });

  test('a steady tone, whole or cut short by digital silence, is neither a voice nor noise', async () => {
    for (const ms of [3000, 2800, 1000]) {
      const tone = new Int16Array(MODEL_INPUT_SAMPLES);
      for (let i = 0; i < (ms * 48_000) / 1000; i++) tone[i] = Math.round(3000 * Math.sin((2 * Math.PI * 1000 * i) / 48_000));
      const heard = (await model.classify(tone)).map((p) => p.label);
      assert.deepEqual(heard, [], `a 1 kHz tone of ${ms} ms: ${heard.join(', ')}`);
    }
  });

  test('sensitivity is the slope of the sigmoid: confidence = 1 / (1 + exp(-sensitivity × logit))', async () => {
    const samples = renderChunk({ species: [SPECIES[1].label], seed: 4242 });
    const logits = await model.logits(samples);
    for (const sensitivity of [0.5, 0.75, 1, 1.25, 1.5]) {
      const conf = await model.confidences(samples, sensitivity);
      logits.forEach((l, i) => assert.ok(Math.abs(conf[i] - 1 / (1 + Math.exp(-sensitivity * l))) < 1e-6));
    }
    // Steeper is surer both ways: the caller's species rises, the others fall.
    const low = await model.confidences(samples, 0.5);
    const high = await model.confidences(samples, 1.5);
    assert.ok(high[1] > low[1]);
    assert.ok(high[0] < low[0]);
    assert.equal(confidenceOf(0, 1.3), 0.5);
    assert.ok(Math.abs(confidenceOf(2, 0.5) - 1 / (1 + Math.exp(-1))) < 1e-12);
    // The minimum confidence applies after the sensitivity.
    const atHalf = await model.classify(renderChunk({ species: [], seed: 5 }), { sensitivity: 0.5, minConfidence: 0 });
    assert.equal(atHalf.length, 8);
    assert.ok(atHalf.every((p) => Math.abs(p.confidence - 1 / (1 + Math.exp(-0.5 * p.logit))) < 1e-6));
    await assert.rejects(
      model.classify(samples, { sensitivity: 2 }),
      (e: unknown) => e instanceof ModelError && /sensitivity must be between 0.5 and 1.5/.test(e.message),
    );
    assert.throws(() => confidenceOf(1, 0.1), ModelError);
  });

  test('shorter input is zero-padded and longer input cut at 3 s', async () => {
    const chunk = renderChunk({ species: [SPECIES[3].label], seed: 31 });
    const longer = new Int16Array(MODEL_INPUT_SAMPLES + 48_000);
    longer.set(chunk);
    longer.fill(12_000, MODEL_INPUT_SAMPLES);
    assert.deepEqual(await model.logits(longer), await model.logits(chunk));
    const padded = toModelInput(new Int16Array([16384, -32768]));
    assert.equal(padded.length, MODEL_INPUT_SAMPLES);
    assert.deepEqual([padded[0], padded[1], padded[2]], [0.5, -1, 0]);
    assert.deepEqual(toModelInput(Float32Array.from([0.25])).slice(0, 2), Float32Array.from([0.25, 0]));
    const short = chunk.subarray(0, 96_000); // 2 s
    assert.equal(await model.logits(short).then((l) => l.length), 8);
  });

  test('a corrupt or missing model file fails with a clear error', async () => {
    const corrupt = path.join(tmp, 'corrupt.onnx');
    fs.writeFileSync(corrupt, Buffer.from('this is not an ONNX model at all, just some text'));
    await assert.rejects(
      loadModel({ model: corrupt, labels: BUILTIN_LABELS_PATH }),
      (e: unknown) => e instanceof ModelError && /not a loadable ONNX model/.test(e.message) && e.message.includes(corrupt),
    );

    const truncated = path.join(tmp, 'truncated.onnx');
    const bytes = fs.readFileSync(BUILTIN_MODEL_PATH);
    fs.writeFileSync(truncated, bytes.subarray(0, Math.floor(bytes.length / 2)));
    await assert.rejects(loadModel({ model: truncated, labels: BUILTIN_LABELS_PATH }), ModelError);

    await assert.rejects(loadModel({ model: path.join(tmp, 'missing.onnx'), labels: BUILTIN_LABELS_PATH }), /cannot read the model file/);
    await assert.rejects(loadModel({ model: BUILTIN_MODEL_PATH, labels: path.join(tmp, 'missing.txt') }), /cannot read the labels file/);
    await assert.rejects(loadModel({ model: new Uint8Array(0), labels: ['a_b'] }), /model file is empty/);
  });

  test('labels that do not match the outputs, or a wrong input shape, fail with a clear error', async () => {
    await assert.rejects(
      loadModel({ model: BUILTIN_MODEL_PATH, labels: SPECIES_LABELS.slice(0, 4) }),
      (e: unknown) =>
        e instanceof ModelError &&
        /no output has one float32 score per label \(4 labels\); outputs: logits float32 \[1, 8\]/.test(e.message),
    );
    await assert.rejects(
      loadModel({ model: identityModel(1000), labels: Array.from({ length: 1000 }, (_, i) => `L${i}_L${i}`), name: 'identity' }),
      // A length of no family (issue 31): the error names the families and what an upload would give.
      (e: unknown) =>
        e instanceof ModelError &&
        /identity: the input has 1000 samples, which is no known family: 144000 .* or 160000 .*sampleRate/.test(e.message),
    );
    assert.throws(() => parseLabels('a_b\n\nc_d\n'), /line 2 is empty/);
    assert.deepEqual(parseLabels('Dog_Dog\r\nNoise\n\n'), [
      { label: 'Dog_Dog', scientificName: 'Dog', commonName: 'Dog' },
      { label: 'Noise', scientificName: 'Noise', commonName: 'Noise' },
    ]);
    // Perch's class list as a one-column CSV: its first line names the column and labels no output.
    assert.deepEqual(
      parseLabels('ebird2021\r\nostric2\r\neurbla\r\n').map((l) => l.label),
      ['ostric2', 'eurbla'],
    );
    // A lone line is a label, whatever it says.
    assert.deepEqual(
      parseLabels('species\n').map((l) => l.label),
      ['species'],
    );
  });

  test('a model that passes the checks also runs with labels given as text, and refuses work after close', async () => {
    const m = await loadModel({
      model: fs.readFileSync(BUILTIN_MODEL_PATH),
      labels: { text: fs.readFileSync(BUILTIN_LABELS_PATH, 'utf8') },
    });
    const preds = await m.classify(renderChunk({ species: [SPECIES[4].label], seed: 8 }));
    assert.deepEqual(
      preds.map((p) => p.label),
      [SPECIES[4].label],
    );
    assert.equal(preds[0].index, 4);
    await m.close();
    await assert.rejects(m.logits(new Int16Array(10)), /closed/);
  });
});
