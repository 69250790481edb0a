// `recency_bias`: how recent each candidate is, relative to the others: 1 for the newest, 0 for the
// oldest, linear in between. A chunk's date is its time_stamp, or when it has none, its created_at.
import type { Candidate } from './candidates.js';
import { normalized } from './order.js';

export function recencyOf(candidates: Candidate[]): number[] {
  return normalized(candidates.map((c) => c.time_stamp ?? c.created_at));
}
