/**
 * The synthetic soundscape as a field recording (issue 23 "A demo that behaves like the real
 * thing"): distance, overlapping calls, background scenes, and where each background lands.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { SCENE_CHUNKS, amplitudeAt, chunkPlan, renderChunk, scenePlan, soundscapeChunk } from '../src/satellite/soundscape.ts';
import { NO_BACKGROUND, describeBackground, type Background } from '../src/satellite/background.ts';
import { DEFAULT_CONFIG } from '../src/satellite/client.ts';
import { rms } from '../src/satellite/signal.ts';
import { bandShare } from './helpers/spectrum.ts';

describe('soundscape like a field recording', () => {
  test('birds at 15–500 m, overlapping calls, chunks with only background, and scenes of wind, rain, traffic and insects', () => {
    const plans = Array.from({ length: 600 }, (_, i) => chunkPlan(3, i));
    const calls = plans.flatMap((p) => p.calls);
    assert.ok(calls.every((c) => c.distanceM >= 15 && c.distanceM <= 500));
    assert.ok(calls.some((c) => c.distanceM < 30) && calls.some((c) => c.distanceM > 300), 'near and far birds');
    // Nearer is louder.
    const sorted = [...calls].sort((a, b) => a.distanceM - b.distanceM);
    assert.ok(sorted.every((c, i) => i === 0 || c.amplitude <= sorted[i - 1].amplitude));
    assert.ok(amplitudeAt(15) / amplitudeAt(480) > 100, 'over 40 dB between the nearest and the farthest');
    assert.ok(plans.some((p) => p.species.length === 3));
    const overlapping = plans.filter((p) => p.calls.length > 1 && Math.abs(p.calls[1].offsetMs - p.calls[0].offsetMs) <= 300);
    assert.ok(overlapping.length > 10, `${overlapping.length} chunks with overlapping calls`);
    const birdless = plans.filter((p) => !p.silent && p.calls.length === 0);
    assert.ok(birdless.length > 20, `${birdless.length} chunks with only background`);
    for (const kind of ['wind', 'rain', 'traffic', 'insects'] as const)
      assert.ok(
        plans.some((p) => !p.silent && p.background[kind] > 0),
        kind,
      );
    // A scene holds for SCENE_CHUNKS chunks; chunk i is still the same whatever came before it.
    assert.deepEqual(scenePlan(3, 1), scenePlan(3, SCENE_CHUNKS - 1));
    assert.notDeepEqual(scenePlan(3, 1), scenePlan(3, SCENE_CHUNKS));
    assert.deepEqual(soundscapeChunk(3, 45).samples, soundscapeChunk(3, 45).samples);
    // Every chunk that is not a still moment passes the default silence gate: the model, not the gate, hears the faint birds.
    for (let i = 0; i < 40; i++) {
      const c = soundscapeChunk(3, i);
      if (!c.silent) assert.ok(rms(c.samples) > DEFAULT_CONFIG.filterMinRms, `chunk ${i}: rms ${rms(c.samples)}`);
    }
    assert.match(
      describeBackground({ wind: 0.01, rain: 0, traffic: 0, insects: 0.002, insectHz: 4900 }),
      /^wind 0\.010, insects 0\.0020 @ 4\.9 kHz$/,
    );
  });

  test('the background lands where it does outdoors: wind and traffic low, insects in the great tit band, rain everywhere', () => {
    const render = (bg: Partial<Background>) =>
      renderChunk({ species: [], seed: 5, noiseRms: 0.0001, background: { ...NO_BACKGROUND, ...bg } });
    const windy = render({ wind: 0.01 });
    assert.ok(bandShare(windy, 0, 400) > 0.9, 'wind: most energy under 400 Hz');
    const road = render({ traffic: 0.01 });
    assert.ok(bandShare(road, 0, 2600) > 0.95);
    const crickets = render({ insects: 0.003, insectHz: 5000 });
    assert.ok(bandShare(crickets, 4800, 5200) > 0.8, 'a cricket on its carrier');
    const rainy = render({ rain: 0.01 });
    assert.ok(bandShare(rainy, 9600, 12000) > 0.05, 'rain reaches the noise floor band too');
  });
});
