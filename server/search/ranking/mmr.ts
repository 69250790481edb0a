// `mmr`: maximal marginal relevance, to diversify the results. The candidates are picked one at a
// time; each pick is the candidate with the best
//
//   mmr = (1 − λ) × relevance − λ × (highest cosine similarity to a candidate already picked)
//
// where relevance is the score spread over [0, 1] across the candidates, and similarities come from
// the chunks' dense vectors (below 0 counts as 0: being unlike is enough, being opposite earns
// nothing more). λ (`mmr_lambda`, default 0.5) is the weight of diversity, as the reference
// documents it: near 0 keeps the relevance order, near 1 prefers chunks unlike those above them. The
// score of each result is its mmr when picked, which never rises from one pick to the next.
//
// Each pick compares the picked vector with every candidate left, so picking all n candidates costs
// n² vector products. The first MMR_PICKS (100) results are picked so; the candidates left after
// them follow by their mmr against those picks (still never above the last pick's score).
import type { Hit } from '../types.js';
import { normalized } from './order.js';

export const MMR_PICKS = 100;

export function diversify(hits: Hit[], vectors: Map<string, Float64Array>, lambda: number, picks = MMR_PICKS): Hit[] {
  const n = hits.length;
  if (n === 0) return hits;
  const relevance = normalized(hits.map((h) => h.score));
  const vectorOf = hits.map((h) => vectors.get(h.id) ?? null);
  // Highest similarity of each candidate to the picked ones (0 before any pick).
  const similarity = new Float64Array(n);
  const picked = new Uint8Array(n);
  const mmr = (i: number) => (1 - lambda) * relevance[i] - lambda * similarity[i];
  const result: Hit[] = [];
  for (let round = 0; round < Math.min(n, picks); round++) {
    let best = -1;
    let bestScore = -Infinity;
    for (let i = 0; i < n; i++) {
      if (picked[i]) continue;
      const score = mmr(i);
      // Strictly better only: ties go to the earlier (more relevant) candidate.
      if (score > bestScore) [best, bestScore] = [i, score];
    }
    picked[best] = 1;
    result.push({ id: hits[best].id, score: bestScore });
    const chosen = vectorOf[best];
    if (chosen) for (let i = 0; i < n; i++) if (!picked[i]) similarity[i] = Math.max(similarity[i], cosine(chosen, vectorOf[i]));
  }
  const rest = hits.flatMap((hit, i) => (picked[i] ? [] : [{ id: hit.id, score: mmr(i) }]));
  // Stable: equal values keep the relevance order.
  return [...result, ...rest.sort((a, b) => b.score - a.score)];
}

/** Of unit vectors; 0 when one is missing or they differ in length. */
function cosine(a: Float64Array, b: Float64Array | null): number {
  if (!b || b.length !== a.length) return 0;
  let dot = 0;
  for (let k = 0; k < a.length; k++) dot += a[k] * b[k];
  return dot;
}
