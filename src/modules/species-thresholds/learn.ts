/**
 * The learned threshold of one species (docs/model.md "Per-species thresholds"): the lowest raw
 * confidence t such that the team's verified detections at or above t are confirmed often enough,
 * judged by the Wilson score lower bound so that a handful of lucky votes does not set it.
 */

/** Verified detections a species needs before a threshold is learned... */
export const MIN_VOTES = 20;
/** ...with at least this many of each outcome (one-sided evidence says nothing about where errors start). */
export const MIN_EACH = 5;
/**
 * z of the one-sided 90 % Wilson lower bound. With the minimum 20 votes at most 15 are confirmed;
 * 15 of 15 at or above t give a bound of 0.901, so the minimum can clear the default 90 % target.
 * A 95 % bound (z 1.645) would need 25 unanimous detections above t, more than the minimum holds.
 */
export const WILSON_Z = 1.2816;

export interface Sample {
  confidence: number;
  confirmed: boolean;
}

export type Reason = 'learned' | 'too_few_votes' | 'target_not_reached';

export interface Learned {
  /** null: too few votes. 1 when no confidence reaches the target (every new detection waits). */
  threshold: number | null;
  votes: number;
  confirmed: number;
  rejected: number;
  /** Observed precision at or above the threshold (of every verified detection when the target is not reached; null: too few votes). */
  precision: number | null;
  /** Its Wilson lower bound. */
  lowerBound: number | null;
  reason: Reason;
}

/** Wilson score lower bound of k successes in n trials. */
export function wilsonLower(k: number, n: number, z = WILSON_Z): number {
  if (n === 0) return 0;
  const p = k / n;
  const z2 = z * z;
  return (p + z2 / (2 * n) - z * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n))) / (1 + z2 / n);
}

export function learnThreshold(samples: readonly Sample[], target: number): Learned {
  const confirmed = samples.filter((s) => s.confirmed).length;
  const votes = samples.length;
  const base = { votes, confirmed, rejected: votes - confirmed };
  if (votes < MIN_VOTES || confirmed < MIN_EACH || votes - confirmed < MIN_EACH) {
    return { ...base, threshold: null, precision: null, lowerBound: null, reason: 'too_few_votes' };
  }
  // Walk down from the most confident: after each distinct confidence, the set at or above it.
  const sorted = [...samples].sort((a, b) => b.confidence - a.confidence);
  let best: { t: number; k: number; n: number } | null = null;
  let k = 0;
  for (let i = 0; i < sorted.length; i++) {
    if (sorted[i].confirmed) k++;
    // Equal confidences go together: a threshold cannot split them.
    if (i + 1 < sorted.length && sorted[i + 1].confidence === sorted[i].confidence) continue;
    const n = i + 1;
    if (wilsonLower(k, n) >= target) best = { t: sorted[i].confidence, k, n };
  }
  // No confidence keeps the target: nothing the model says of the species is trusted yet, and the
  // figures shown are those of every verified detection.
  if (!best) {
    return { ...base, threshold: 1, precision: confirmed / votes, lowerBound: wilsonLower(confirmed, votes), reason: 'target_not_reached' };
  }
  return { ...base, threshold: best.t, precision: best.k / best.n, lowerBound: wilsonLower(best.k, best.n), reason: 'learned' };
}
