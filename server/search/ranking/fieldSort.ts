// `sort_by: {field, direction}`: the candidates ordered by a field of the chunk instead of relevance.
// The score becomes the field's value (dates in seconds since 1970), the value that ordered them.
// Chunks without the field (no num_value or time_stamp) follow the others, with score 0. Equal
// values keep the retrieval order, so the better match comes first among equals.
import type { Hit } from '../types.js';
import type { Candidate } from './candidates.js';
import type { SortField } from './plan.js';

export function sortByField(hits: Hit[], candidates: Map<string, Candidate>, field: SortField, direction: 'asc' | 'desc'): Hit[] {
  const valued: Hit[] = [];
  const without: Hit[] = [];
  for (const hit of hits) {
    const value = candidates.get(hit.id)?.[field];
    if (value == null) without.push({ id: hit.id, score: 0 });
    else valued.push({ id: hit.id, score: value });
  }
  const sign = direction === 'asc' ? 1 : -1;
  // Array.prototype.sort is stable: ties keep the retrieval order.
  valued.sort((a, b) => sign * (a.score - b.score));
  return [...valued, ...without];
}
