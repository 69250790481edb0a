// Several weighted queries, for full-text, BM25 and hybrid search: each query's ranked list (its own
// retrieval, best first, its best `window` chunks) fused by weighted reciprocal rank:
//
//   score(chunk) = Σ weightᵢ / (60 + rankᵢ)   over the queries whose list holds the chunk
//
// Ranks, not scores, are fused: ts_rank_cd, Typesense's text_match, BM25 and hybrid's own fused
// scores are not on one scale, and ranks fuse the same whatever the engine. A chunk is a candidate
// when a positive-weight query found it; a negative weight only lowers the chunks its query finds,
// and chunks it pushes to a score of 0 or below are left out. `score_threshold` applies to each
// query's own scores, before fusion.
import { RRF_K } from '../retrieval/hybrid.js';
import type { Hit } from '../types.js';

export interface WeightedList {
  hits: Hit[];
  weight: number;
}

/** The fused list, best first, ties by id. */
export function fuseWeightedLists(lists: WeightedList[], k = RRF_K): Hit[] {
  const candidates = new Set<string>();
  for (const { hits, weight } of lists) if (weight > 0) for (const hit of hits) candidates.add(hit.id);
  const scores = new Map<string, number>();
  for (const { hits, weight } of lists) {
    hits.forEach((hit, i) => {
      if (candidates.has(hit.id)) scores.set(hit.id, (scores.get(hit.id) ?? 0) + weight / (k + i + 1));
    });
  }
  return [...scores]
    .filter(([, score]) => score > 0)
    .map(([id, score]) => ({ id, score }))
    .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}
