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

/**
 * The indices from sums the database formed: S species, N detections, Σ n ln n and Σ n² over
 * the species' counts n (H′ = −Σ pᵢ ln pᵢ = ln N − Σ n ln n / N; Σ pᵢ² = Σ n² / N²).
 */
export function diversityFromTerms(t: { species: number; detections: number; nLnN: number; nSquared: number } | undefined): Diversity {
  if (!t || t.detections <= 0) return { speciesCount: 0, detectionCount: 0, shannon: null, simpson: null, evenness: null };
  const n = t.detections;
  // Rounding can leave a hair below zero where H′ is exactly zero (one species).
  const h = t.species < 2 ? 0 : Math.max(0, Math.log(n) - t.nLnN / n);
  return {
    speciesCount: t.species,
    detectionCount: n,
    shannon: h,
    simpson: t.species < 2 ? 0 : 1 - t.nSquared / (n * n),
    evenness: t.species < 2 ? null : h / Math.log(t.species),
  };
}

export function overlap(a: ReadonlySet<string>, b: ReadonlySet<string>) {
  let shared = 0;
  for (const x of a) if (b.has(x)) shared++;
  const union = a.size + b.size - shared;
  return { shared, onlyA: a.size - shared, onlyB: b.size - shared, jaccard: union === 0 ? null : shared / union };
}
