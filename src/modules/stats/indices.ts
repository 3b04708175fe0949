/**
 * Diversity and overlap indices (issue 19, fixed there): pᵢ is species i's share of the counted
 * detections. Shannon H′ = −Σ pᵢ ln pᵢ, Gini–Simpson 1 − Σ pᵢ², Pielou evenness H′ / ln S (null
 * when S < 2); Jaccard |A ∩ B| / |A ∪ B| of two species sets (null when both are empty).
 */
export interface Diversity {
  speciesCount: number;
  detectionCount: number;
  shannon: number | null;
  simpson: number | null;
  evenness: number | null;
}

export function diversity(counts: readonly number[]): Diversity {
  const xs = counts.filter((n) => n > 0);
  const total = xs.reduce((a, b) => a + b, 0);
  if (total === 0) return { speciesCount: 0, detectionCount: 0, shannon: null, simpson: null, evenness: null };
  let h = 0;
  let sq = 0;
  for (const n of xs) {
    const p = n / total;
    h -= p * Math.log(p);
    sq += p * p;
  }
  // A single species: H′ is exactly zero (−1·ln 1), never −0.
  const shannon = h === 0 ? 0 : h;
  return {
    speciesCount: xs.length,
    detectionCount: total,
    shannon,
    simpson: 1 - sq,
    evenness: xs.length < 2 ? null : shannon / Math.log(xs.length),
  };
}

export function overlap(a: ReadonlySet<string>, b: ReadonlySet<string>) {
  let shared = 0;
  for (const x of a) if (b.has(x)) shared++;
  const union = a.size + b.size - shared;
  return { shared, onlyA: a.size - shared, onlyB: b.size - shared, jaccard: union === 0 ? null : shared / union };
}
