// The score adjustments of `sort_options`, applied together to the first stage's scores:
//
//   final = blend × weight factor × tag factor
//   blend = score                                              with no bias
//         = relevance + recency_bias × recency + bias × closeness   with recency_bias or location_bias
//
// where relevance is the score spread over [0, 1] across the candidates (best 1, worst 0), recency
// and closeness are in [0, 1] (recency.ts, location.ts), the weight factor is the chunk's weight
// when `use_weights` (weights.ts) and the tag factor the product of its tags' `tag_weights`
// (tagWeights.ts). A bias of 1 weighs recency (or closeness) as much as relevance; 3 lets it mostly
// decide. The factors assume scores of 0 or more, which every search type gives except semantic
// search with the dot metric on unnormalized vectors.
import type { Hit } from '../types.js';
import type { Candidate } from './candidates.js';
import { closenessOf } from './location.js';
import { normalized } from './order.js';
import type { RankingPlan } from './plan.js';
import { recencyOf } from './recency.js';
import { tagFactor } from './tagWeights.js';
import { weightFactor } from './weights.js';

/** Whether the plan changes any score. */
export function adjusts(plan: RankingPlan): boolean {
  return plan.useWeights || plan.tagWeights != null || plan.recencyBias > 0 || plan.location != null;
}

/** The hits rescored (same order; the caller sorts); every hit must have its candidate. */
export function adjustScores(hits: Hit[], candidates: Map<string, Candidate>, plan: RankingPlan): Hit[] {
  if (!adjusts(plan) || hits.length === 0) return hits;
  const rows = hits.map((h) => candidates.get(h.id)!);
  let blend = hits.map((h) => h.score);
  if (plan.recencyBias > 0 || plan.location) {
    const relevance = normalized(blend);
    const recency = plan.recencyBias > 0 ? recencyOf(rows) : null;
    const closeness = plan.location ? closenessOf(rows, plan.location) : null;
    blend = relevance.map((r, i) => r + (recency ? plan.recencyBias * recency[i] : 0) + (closeness ? plan.location!.bias * closeness[i] : 0));
  }
  return hits.map((hit, i) => {
    let score = blend[i];
    if (plan.useWeights) score *= weightFactor(rows[i]);
    if (plan.tagWeights) score *= tagFactor(rows[i], plan.tagWeights);
    return { id: hit.id, score };
  });
}
