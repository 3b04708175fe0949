/**
 * `npm run bench -- model-confidence`: the built-in model on the synthetic soundscape, as a hub
 * would run it (sensitivity 1, minimum confidence 0.25). Prints the histogram of the confidences
 * of detections, the share of calls found by distance, and what noise is misheard as (docs/model.md
 * "How its confidences spread"). `measureConfidences` is also what test/inference-model.test.ts
 * checks, on fewer chunks.
 */
import { loadBuiltinModel, type Model } from '../src/infra/classifier/onnx.ts';
import { DEFAULT_MIN_CONFIDENCE } from '../src/infra/classifier/types.ts';
import { soundscapeChunk, SPECIES_LABELS } from '../src/satellite/soundscape.ts';

export const DISTANCE_BUCKETS = [
  { name: '15–30 m', max: 30 },
  { name: '30–80 m', max: 80 },
  { name: '80–160 m', max: 160 },
  { name: '160–300 m', max: 300 },
  { name: '300–500 m', max: Infinity },
];

export interface ConfidenceStats {
  chunks: number;
  calls: number;
  /** Confidence of every detection of a species that was calling (≥ the minimum). */
  hits: number[];
  /** Confidence of every detection of a species that was not calling. */
  falseAlarms: Array<{ confidence: number; label: string; background: string }>;
  /** Per distance bucket: calls, found, and the confidences found. */
  byDistance: Array<{ name: string; calls: number; found: number; confidences: number[] }>;
  /** Chunks without a bird that passed the gate (background only), and how many got a detection. */
  birdless: { chunks: number; withDetection: number };
}

export async function measureConfidences(model: Model, o: { seeds: number[]; chunksPerSeed: number }): Promise<ConfidenceStats> {
  const stats: ConfidenceStats = {
    chunks: 0,
    calls: 0,
    hits: [],
    falseAlarms: [],
    byDistance: DISTANCE_BUCKETS.map((b) => ({ name: b.name, calls: 0, found: 0, confidences: [] })),
    birdless: { chunks: 0, withDetection: 0 },
  };
  for (const seed of o.seeds) {
    for (let index = 0; index < o.chunksPerSeed; index++) {
      const chunk = soundscapeChunk(seed, index);
      // Still moments stop at the satellite's silence gate: the hub never sees them.
      if (chunk.silent) continue;
      stats.chunks++;
      const found = new Map(
        (await model.classify(chunk.samples, { minConfidence: DEFAULT_MIN_CONFIDENCE })).map((p) => [p.label, p.confidence]),
      );
      const bg = Object.entries(chunk.background)
        .filter(([k, v]) => k !== 'insectHz' && v > 0)
        .map(([k]) => k)
        .join('+');
      if (chunk.calls.length === 0) {
        stats.birdless.chunks++;
        if (found.size) stats.birdless.withDetection++;
      }
      for (const call of chunk.calls) {
        stats.calls++;
        const bucket = stats.byDistance[DISTANCE_BUCKETS.findIndex((b) => call.distanceM < b.max)];
        bucket.calls++;
        const c = found.get(call.label);
        if (c !== undefined) {
          bucket.found++;
          bucket.confidences.push(c);
          stats.hits.push(c);
        }
      }
      for (const label of SPECIES_LABELS) {
        const c = found.get(label);
        if (c !== undefined && !chunk.species.includes(label)) stats.falseAlarms.push({ confidence: c, label, background: bg || 'calm' });
      }
    }
  }
  return stats;
}

const pct = (n: number, of: number) => `${of ? ((100 * n) / of).toFixed(1) : '0.0'} %`;
const median = (xs: number[]) => (xs.length ? [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] : NaN);

function histogram(values: number[], from = 0.25, step = 0.05): string[] {
  const lines: string[] = [];
  const bins = Math.ceil((1 - from) / step - 1e-9);
  const counts = new Array(bins).fill(0);
  for (const v of values) counts[Math.min(bins - 1, Math.floor((v - from) / step + 1e-9))]++;
  const max = Math.max(1, ...counts);
  counts.forEach((n, i) => {
    const lo = from + i * step;
    lines.push(`  ${lo.toFixed(2)}–${(lo + step).toFixed(2)} ${String(n).padStart(5)} ${'█'.repeat(Math.round((40 * n) / max))}`);
  });
  return lines;
}

export async function run(): Promise<void> {
  const model = await loadBuiltinModel();
  const seeds = Array.from({ length: 20 }, (_, i) => (i + 1) * 7919);
  const t0 = performance.now();
  const s = await measureConfidences(model, { seeds, chunksPerSeed: 60 });
  await model.close();
  const all = [...s.hits, ...s.falseAlarms.map((f) => f.confidence)];
  const out: string[] = [];
  out.push(
    `built-in model on ${s.chunks} soundscape chunks past the silence gate (20 seeds × 60 chunks), sensitivity 1, minimum confidence 0.25:`,
  );
  out.push(`detections: ${all.length} (${s.hits.length} of calling species, ${s.falseAlarms.length} misheard)`);
  out.push('confidence histogram of all detections:');
  out.push(...histogram(all));
  const mid = all.filter((c) => c >= 0.3 && c <= 0.95).length;
  out.push(`between 0.3 and 0.95: ${pct(mid, all.length)}; median ${median(all).toFixed(3)}; max ${Math.max(...all).toFixed(3)}`);
  out.push(`calls found: ${s.hits.length} of ${s.calls} (${pct(s.hits.length, s.calls)})`);
  for (const b of s.byDistance)
    out.push(
      `  ${b.name.padEnd(10)} ${String(b.found).padStart(4)} of ${String(b.calls).padStart(4)} found (${pct(b.found, b.calls).padStart(7)}), median confidence ${median(b.confidences).toFixed(2)}`,
    );
  out.push(`chunks with no bird (background only): ${s.birdless.chunks}, ${s.birdless.withDetection} with a detection`);
  const byBg = new Map<string, number[]>();
  for (const f of s.falseAlarms)
    byBg.set(`${f.label.split('_')[1]} in ${f.background}`, [
      ...(byBg.get(`${f.label.split('_')[1]} in ${f.background}`) ?? []),
      f.confidence,
    ]);
  out.push(
    `misheard: ${s.falseAlarms.length}, median confidence ${median(s.falseAlarms.map((f) => f.confidence)).toFixed(2)}, max ${Math.max(0, ...s.falseAlarms.map((f) => f.confidence)).toFixed(2)}`,
  );
  for (const [k, v] of [...byBg].sort((a, b) => b[1].length - a[1].length).slice(0, 8))
    out.push(`  ${k.padEnd(48)} ${String(v.length).padStart(4)} × (median ${median(v).toFixed(2)})`);
  out.push(`${((performance.now() - t0) / s.chunks).toFixed(1)} ms per chunk (rendering and model)`);
  console.log(out.join('\n'));
}
