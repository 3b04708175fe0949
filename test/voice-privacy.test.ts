/**
 * Issue 31, points 3 and 4: the built-in model does not call speech, pink noise or traffic a bird,
 * and the hub removes the audio of a chunk in which it hears a human voice, whatever the satellite
 * did. Real audio goes through the reference satellite's file source (a folder: recorded speech,
 * pink noise, the soundscape's traffic, then one blackbird so the test can tell a working pipeline
 * from a silent one) to a hub under test, which classifies it with its built-in model.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CHUNK_SAMPLES, makeWav } from '../src/protocol/wav.ts';
import { openSource } from '../src/satellite/sources.ts';
import type { Satellite } from '../src/satellite/client.ts';
import { referenceSatellite } from './helpers/reference-satellite.ts';
import { renderChunk } from '../src/satellite/soundscape.ts';
import { INFERENCE_QUEUE } from '../src/protocol/jobs.ts';
import { loadSoundClassifier } from '../src/inference/sound-classifier.ts';
import type { SoundClassifier } from '../src/satellite/sound-filter.ts';
import { startHub, type Hub } from './helpers/hub.ts';
import { factories, type TestTeam, type TestUser } from './helpers/factories.ts';
import { assertError, client } from './helpers/http.ts';
import { queueSettled, waitFor } from './helpers/wait.ts';

const SPEECH = path.join(import.meta.dirname, 'fixtures', 'audio', 'speech-espeak-ng.flac');
const dirs: string[] = [];
const tmp = () => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'chorus-voice-'));
  dirs.push(d);
  return d;
};

/** Pink noise (Paul Kellet's filter over white noise) at an RMS level, as 16-bit samples. */
function pinkNoise(samples: number, rms: number, seed: number): Int16Array {
  let s = seed >>> 0;
  const white = () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32 - 0.5;
  const b = [0, 0, 0, 0, 0, 0, 0];
  const x = new Float64Array(samples);
  for (let i = 0; i < samples; i++) {
    const w = white();
    b[0] = 0.99886 * b[0] + w * 0.0555179;
    b[1] = 0.99332 * b[1] + w * 0.0750759;
    b[2] = 0.969 * b[2] + w * 0.153852;
    b[3] = 0.8665 * b[3] + w * 0.3104856;
    b[4] = 0.55 * b[4] + w * 0.5329522;
    b[5] = -0.7616 * b[5] - w * 0.016898;
    x[i] = b[0] + b[1] + b[2] + b[3] + b[4] + b[5] + b[6] + w * 0.5362;
    b[6] = w * 0.115926;
  }
  const k = rms / Math.sqrt(x.reduce((a, v) => a + v * v, 0) / samples);
  return Int16Array.from(x, (v) => Math.max(-32768, Math.min(32767, Math.round(v * k * 32767))));
}

/** Chunks of the soundscape's traffic alone (a road near the microphone), end to end. */
function traffic(chunks: number, level: number): Int16Array {
  const out = new Int16Array(chunks * CHUNK_SAMPLES);
  for (let i = 0; i < chunks; i++) {
    out.set(
      renderChunk({
        species: [],
        seed: 700 + i,
        noiseRms: 0.002,
        background: { wind: 0, rain: 0, traffic: level, insects: 0, insectHz: 4800 },
      }),
      i * CHUNK_SAMPLES,
    );
  }
  return out;
}

interface StoredChunk {
  id: string;
  recordedAt: Date;
  storageKey: string;
  reason: string | null;
}

describe('speech, noise and traffic through the satellite', () => {
  let hub: Hub;
  let owner: TestUser;
  let team: TestTeam;
  const api = () => client(hub.url);

  before(async () => {
    hub = await startHub();
    const f = factories(hub);
    owner = await f.user();
    team = await f.team(owner);
  });
  after(async () => {
    await hub?.close();
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  /** Sends every file of `folder` through a satellite of `team`; answers its chunks once classified, oldest first. */
  async function record(
    folder: string,
    t: TestTeam,
    expectChunks: number,
    opts: { classifier?: SoundClassifier; excluded?: string[]; onSatellite?: (sat: Satellite) => void } = {},
  ): Promise<StoredChunk[]> {
    const sat = await referenceSatellite({
      hubUrl: hub.url,
      token: owner.token,
      tenantId: t.id,
      dir: tmp(),
      name: 'Garden',
      source: openSource(folder),
      // With a classifier, chunks are recorded by hand once the team's config push has arrived.
      chunkIntervalMs: opts.classifier ? 0 : 20,
      soundClassifier: opts.classifier,
    });
    opts.onSatellite?.(sat);
    try {
      await sat.start();
      if (opts.excluded) {
        const excluded = [...opts.excluded].sort().join(',');
        await waitFor('the team config pushed', () => [...sat.config.excludedClassifierCategories].sort().join(',') === excluded);
        // A file source decodes through ffmpeg: between its chunks it answers 'waiting'.
        for (let outcome = await sat.record(); outcome !== 'end'; outcome = await sat.record()) {
          if (outcome === 'waiting') await new Promise((r) => setTimeout(r, 10));
        }
      }
      await waitFor('every chunk acknowledged', () => sat.sourceEnded && sat.outbox.pending().length === 0, { timeoutMs: 60_000 });
    } finally {
      await sat.stop();
    }
    assert.equal(sat.ackedCount, expectChunks, 'the gates let these chunks through');
    if (opts.classifier) return [];
    await queueSettled(hub.infra.queue, INFERENCE_QUEUE, { finished: expectChunks, timeoutMs: 60_000 });
    await waitFor('every chunk classified', async () => {
      const [{ n }] = await hub.sql.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM chunks c WHERE c.satellite_id = $1
           AND (EXISTS (SELECT 1 FROM detections d WHERE d.chunk_id = c.id) OR c.audio_removed_reason IS NOT NULL)`,
        [sat.id],
      );
      return n === expectChunks;
    });
    return hub.sql.query<StoredChunk>(
      `SELECT id, recorded_at AS "recordedAt", storage_key AS "storageKey", audio_removed_reason AS reason
       FROM chunks WHERE satellite_id = $1 ORDER BY recorded_at`,
      [sat.id],
    );
  }

  const detectionsOf = (chunkId: string) =>
    hub.sql.query<{ code: string; category: string; confidence: number }>(
      'SELECT species_code AS code, category, confidence FROM detections WHERE chunk_id = $1 ORDER BY confidence DESC',
      [chunkId],
    );

  test('no bird in speech, pink noise or traffic; a voice chunk loses its audio (GET /audio 404 with a code), the others keep theirs', async () => {
    const folder = tmp();
    fs.copyFileSync(SPEECH, path.join(folder, '1-speech.flac')); // 9 s: 3 chunks
    fs.writeFileSync(path.join(folder, '2-pink.wav'), makeWav(pinkNoise(2 * CHUNK_SAMPLES, 0.03, 11))); // 2 chunks
    fs.writeFileSync(path.join(folder, '3-traffic.wav'), makeWav(traffic(2, 0.04))); // 2 chunks
    fs.writeFileSync(
      path.join(folder, '4-blackbird.wav'),
      makeWav(renderChunk({ species: ['Turdus merula_Eurasian Blackbird'], seed: 3 })),
    );
    const chunks = await record(folder, team, 8);

    const heard = await Promise.all(chunks.map((c) => detectionsOf(c.id)));
    const birds = heard.map((ds) => ds.filter((d) => d.category === 'bird'));
    assert.deepEqual(
      birds.slice(0, 7).map((b) => b.map((d) => `${d.code} ${d.confidence.toFixed(2)}`)),
      [[], [], [], [], [], [], []],
      'no bird detection in speech, pink noise or traffic',
    );
    assert.deepEqual(
      birds[7].map((d) => d.code),
      ['eurbla'],
      'the blackbird at the end is heard (the pipeline works)',
    );
    for (const k of [0, 1, 2])
      assert.ok(
        heard[k].some((d) => d.code === 'humvoc' && d.category === 'human_voice'),
        `chunk ${k}: a voice`,
      );

    // The voice chunks: object gone, row kept and marked, GET /audio says why.
    const viewer = owner;
    for (const c of chunks.slice(0, 3)) {
      assert.equal(c.reason, 'human_voice');
      assert.equal(await hub.infra.storage.get(c.storageKey), null, 'no playable trace left in storage');
      const res = await api().get(`/audio/${c.id}`, viewer);
      assertError(res, 404, 'AUDIO_REMOVED_HUMAN_VOICE');
    }
    // Noise, traffic and the bird keep their audio.
    for (const c of chunks.slice(3)) {
      assert.equal(c.reason, null);
      const res = await api().get(`/audio/${c.id}`, viewer);
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('content-type'), 'audio/wav');
    }
  });

  test('a team that keeps voices (remove_human_voice_audio off) keeps the audio and still hears the voice', async () => {
    const f = factories(hub);
    const other = await f.team(owner);
    const off = await api().put(`/settings/tenant?tenantId=${other.id}`, { remove_human_voice_audio: false }, owner);
    assert.equal(off.status, 200, off.text);
    const folder = tmp();
    fs.copyFileSync(SPEECH, path.join(folder, 'speech.flac'));
    const kept = await record(folder, other, 3);
    for (const c of kept) {
      assert.equal(c.reason, null);
      assert.ok(await hub.infra.storage.get(c.storageKey), 'the audio is still stored');
      assert.ok(
        (await detectionsOf(c.id)).some((d) => d.code === 'humvoc'),
        'the voice is still detected',
      );
    }
    assert.equal((await api().get(`/audio/${kept[0].id}`, owner)).status, 200);
  });
  test('a satellite that runs the built-in model drops voice chunks before upload, counted as voices; with the switch off, as birdless', async () => {
    const classifier = await loadSoundClassifier({ model: 'builtin' });
    try {
      const folder = tmp();
      fs.copyFileSync(SPEECH, path.join(folder, '1-speech.flac'));
      fs.writeFileSync(
        path.join(folder, '2-blackbird.wav'),
        makeWav(renderChunk({ species: ['Turdus merula_Eurasian Blackbird'], seed: 4 })),
      );
      const all = ['anthropogenic', 'human_voice', 'amphibian', 'insect', 'other_animal'];
      let sat!: Satellite;
      await record(folder, team, 1, { classifier, excluded: all, onSatellite: (s) => (sat = s) });
      assert.equal(sat.ackedCount, 1, 'only the blackbird went up');
      assert.equal(sat.filterStats.rejectedHumanVoice, 3);
      assert.equal(sat.filterStats.totalSent, 1);
      assert.equal(sat.filterStats.totalProcessed, 4);

      // The team turns the satellite-side voice drop off: the voices no longer count as such, but
      // hold no bird at the minimum bird probability, so they stay home all the same.
      const other = await factories(hub).team(owner);
      const off = await api().put(`/settings/tenant?tenantId=${other.id}`, { drop_human_voice_at_satellite: false }, owner);
      assert.equal(off.status, 200, off.text);
      let sat2!: Satellite;
      await record(folder, other, 1, { classifier, excluded: all.filter((c) => c !== 'human_voice'), onSatellite: (s) => (sat2 = s) });
      assert.equal(sat2.filterStats.rejectedHumanVoice, 0);
      assert.equal(sat2.filterStats.rejectedClassifier, 3);
    } finally {
      await classifier.close();
    }
  });
});
