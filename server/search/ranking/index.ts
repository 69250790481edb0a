// Ranking beyond retrieval: the options of `sort_options` and `scoring_options` reorder a window of
// retrieved candidates before the page is cut from it.
import type { DatasetRow } from '../../domain/datasets.js';
import { badRequest } from '../../errors.js';
import type { Services } from '../../services.js';
import type { WeightedQuery } from '../query/index.js';
import type { SearchPayload } from '../request.js';
import type { Hit, SearchType } from '../types.js';

export interface RankingContext {
  dataset: DatasetRow;
  payload: SearchPayload;
  type: SearchType;
  queries: WeightedQuery[];
}

/**
 * How many candidates the ranking stage needs to serve hits up to `wanted` (offset + limit), or null
 * when the payload asks for no ranking beyond retrieval (the page is then retrieved directly).
 */
export function rankingWindow(payload: SearchPayload, _wanted: number): number | null {
  refuseUnsupported(payload);
  return null;
}

/** The candidates reordered (and rescored) as the payload asks, best first. */
export async function rankHits(_services: Services, _context: RankingContext, hits: Hit[]): Promise<Hit[]> {
  return hits;
}

/** Refuses options that would change the results if they were honoured, until they are. */
function refuseUnsupported(payload: SearchPayload): void {
  const sort = payload.sort_options;
  const active = (value: unknown) => value !== null && value !== undefined && value !== false;
  const unsupported: string[] = [];
  if (sort) {
    for (const field of ['sort_by', 'location_bias', 'recency_bias', 'tag_weights', 'use_weights'] as const) if (active(sort[field])) unsupported.push(`sort_options.${field}`);
    if (sort.mmr?.use_mmr) unsupported.push('sort_options.mmr');
  }
  if (payload.scoring_options?.fulltext_boost || payload.scoring_options?.semantic_boost) unsupported.push('scoring_options');
  if (unsupported.length) throw badRequest(`${unsupported.join(', ')}: not supported by this version of the service yet`);
}
