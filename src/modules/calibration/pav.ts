/**
 * Isotonic regression by pool-adjacent-violators: the non-decreasing step function of raw
 * confidence that best fits verified outcomes (confirmed = 1, rejected = 0) in least squares.
 */

/** One step of the fitted curve: raw confidences in [minConfidence, maxConfidence] map to `calibrated`. */
export interface Bucket {
  minConfidence: number;
  maxConfidence: number;
  calibrated: number;
  samples: number;
}

/**
 * Fits the curve. Equal confidences are pooled first; adjacent blocks whose means are out of
 * order (or equal: the curve is the same either way, with fewer buckets) are pooled until the
 * means rise strictly.
 */
export function fitIsotonic(samples: Array<{ confidence: number; outcome: 0 | 1 }>): Bucket[] {
  const sorted = [...samples].sort((a, b) => a.confidence - b.confidence);
  const blocks: Array<{ min: number; max: number; sum: number; n: number }> = [];
  for (const s of sorted) {
    const lastBlock = blocks.at(-1);
    if (lastBlock && lastBlock.max === s.confidence) {
      lastBlock.sum += s.outcome;
      lastBlock.n += 1;
    } else blocks.push({ min: s.confidence, max: s.confidence, sum: s.outcome, n: 1 });
    // Pool backwards while the order is violated.
    while (blocks.length >= 2) {
      const b = blocks[blocks.length - 1];
      const a = blocks[blocks.length - 2];
      if (a.sum / a.n < b.sum / b.n) break;
      blocks.splice(blocks.length - 2, 2, { min: a.min, max: b.max, sum: a.sum + b.sum, n: a.n + b.n });
    }
  }
  return blocks.map((b) => ({ minConfidence: b.min, maxConfidence: b.max, calibrated: b.sum / b.n, samples: b.n }));
}

/**
 * Reads the curve: a bucket's value inside it, a straight line between the edges of two adjacent
 * buckets, the first or last bucket's value beyond the ends. Without buckets, the raw value.
 */
export function calibrate(buckets: readonly Bucket[], confidence: number): number {
  if (buckets.length === 0) return confidence;
  if (confidence <= buckets[0].minConfidence) return buckets[0].calibrated;
  for (let i = 0; i < buckets.length; i++) {
    const b = buckets[i];
    if (confidence <= b.maxConfidence) return b.calibrated;
    const next = buckets[i + 1];
    if (!next) return b.calibrated;
    if (confidence < next.minConfidence) {
      const t = (confidence - b.maxConfidence) / (next.minConfidence - b.maxConfidence);
      return b.calibrated + t * (next.calibrated - b.calibrated);
    }
  }
  return buckets[buckets.length - 1].calibrated;
}
