/**
 * Windows of a chunk (issue 31, src/inference/windows.ts): pure code, no hub. A window inside its
 * chunk is cut from it; a longer one runs on into the next chunks placed by their recording
 * times, waits while the next one is missing and is padded once the wait is over or a spanned
 * chunk's audio is gone. test/model-families.test.ts runs the same through a hub.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { windowStarts, windowsOf, type NeighbourChunk, type WindowsInput } from '../src/inference/windows.ts';

const T0 = new Date('2026-05-01T05:00:00.000Z');
const at = (ms: number) => new Date(T0.getTime() + ms);
/** `ms` of 48 kHz samples all equal to `value`. */
const flat = (ms: number, value: number) => new Int16Array(ms * 48).fill(value);

function input(over: Partial<WindowsInput> & { neighbours?: Array<NeighbourChunk & { samples: Int16Array | null }> } = {}): WindowsInput {
  const neighbours = over.neighbours ?? [];
  return {
    chunk: { id: 'c0', recordedAt: T0, durationMs: 3000, receivedAt: at(3000) },
    samples: flat(3000, 1000),
    windowMs: 5000,
    overlapMs: 0,
    now: at(3100),
    waitMs: 30_000,
    lastLook: false,
    source: {
      following: async (after, before) => neighbours.filter((n) => n.recordedAt > after && n.recordedAt < before),
      samplesOf: async (key) => neighbours.find((n) => n.storageKey === key)?.samples ?? null,
    },
    ...over,
  };
}
const neighbour = (id: string, startMs: number, value: number, durationMs = 3000) => ({
  id,
  recordedAt: at(startMs),
  durationMs,
  storageKey: `k-${id}`,
  audioGone: false,
  samples: flat(durationMs, value),
});

describe('windows of a chunk', () => {
  test('starts: every window - overlap while a whole window fits, at least one', () => {
    assert.deepEqual(windowStarts(3000, 0), [0]);
    assert.deepEqual(windowStarts(3000, 0, 1000), [0, 1000, 2000]);
    assert.deepEqual(windowStarts(3000, 500, 1000), [0, 500, 1000, 1500, 2000]);
    assert.deepEqual(windowStarts(3000, 0, 5000), [0]);
  });

  test('a 3 s window over a 2.7 s chunk is cut from the chunk alone, no neighbour asked for', async () => {
    const plan = await windowsOf(
      input({
        chunk: { id: 'c0', recordedAt: T0, durationMs: 2700, receivedAt: at(2700) },
        samples: flat(2700, 5),
        windowMs: 3000,
        source: { following: () => assert.fail('no neighbour is needed'), samplesOf: () => assert.fail('no audio is read') },
      }),
    );
    assert.ok(!plan.wait);
    assert.equal(plan.windows.length, 1);
    assert.deepEqual([plan.windows[0].spanChunkIds, plan.windows[0].padded, plan.windows[0].endMs], [['c0'], false, undefined]);
  });

  test('a 5 s window takes the next chunk of the satellite, placed by its recording time', async () => {
    const plan = await windowsOf(input({ neighbours: [neighbour('c1', 3000, 2000), neighbour('c2', 6000, 3000)] }));
    assert.ok(!plan.wait);
    const [w] = plan.windows;
    assert.deepEqual([w.startMs, w.endMs, w.spanChunkIds, w.padded], [0, 5000, ['c0', 'c1'], false]);
    assert.equal(w.samples.length, 240_000);
    assert.equal(w.samples[143_999], 1000 / 32768);
    assert.equal(w.samples[144_000], 2000 / 32768);
    assert.equal(w.samples[239_999], 2000 / 32768);
  });

  test('short chunks: two of 2.7 s cover 5 s; a small gap stays silent, an overlap takes the later chunk', async () => {
    const short = { id: 'c0', recordedAt: T0, durationMs: 2700, receivedAt: at(2700) };
    const gap = await windowsOf(input({ chunk: short, samples: flat(2700, 1000), neighbours: [neighbour('c1', 2900, 2000, 2700)] }));
    assert.ok(!gap.wait);
    const w = gap.windows[0];
    assert.deepEqual([w.spanChunkIds, w.padded], [['c0', 'c1'], false]);
    assert.equal(w.samples[2750 * 48], 0, 'the 200 ms between them is silence');
    assert.equal(w.samples[2900 * 48], 2000 / 32768);
    const overlap = await windowsOf(input({ neighbours: [neighbour('c1', 2800, 2000)] }));
    assert.ok(!overlap.wait);
    assert.equal(overlap.windows[0].samples[2850 * 48], 2000 / 32768);
  });

  test('a missing next chunk is waited for, until the wait is over or the last look: then padded', async () => {
    // The only later chunk starts 1 s after this one ends: the one in between has not come.
    const late = [neighbour('c2', 4000, 2000)];
    assert.deepEqual(await windowsOf(input({ neighbours: late })), { wait: true });
    assert.deepEqual(await windowsOf(input({ neighbours: late, now: at(32_999) })), { wait: true });
    for (const over of [{ now: at(33_000) }, { lastLook: true }]) {
      const plan = await windowsOf(input({ neighbours: late, ...over }));
      assert.ok(!plan.wait);
      const [w] = plan.windows;
      assert.deepEqual([w.spanChunkIds, w.padded, w.endMs], [['c0'], true, 5000]);
      assert.equal(w.samples[150_000], 0);
    }
  });

  test('a next chunk whose audio is gone is not waited for: its part is silence, the window padded', async () => {
    const gone = { ...neighbour('c1', 3000, 2000), audioGone: true };
    const missing = { ...neighbour('c1', 3000, 2000), samples: null };
    for (const n of [gone, missing]) {
      const plan = await windowsOf(input({ neighbours: [n] }));
      assert.ok(!plan.wait);
      assert.deepEqual([plan.windows[0].spanChunkIds, plan.windows[0].padded], [['c0', 'c1'], true]);
      assert.equal(plan.windows[0].samples[200_000], 0);
    }
  });
});
