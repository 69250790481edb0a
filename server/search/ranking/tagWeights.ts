// `tag_weights`: a chunk's score is multiplied by the weight of each listed tag it carries (by the
// product, when it carries several); tags not listed count as 1.
import type { Candidate } from './candidates.js';

export function tagFactor(candidate: Candidate, weights: Map<string, number>): number {
  let factor = 1;
  for (const tag of new Set(candidate.tag_set)) factor *= weights.get(tag) ?? 1;
  return factor;
}
