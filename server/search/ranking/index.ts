// Ranking beyond retrieval: `sort_options` (and, for hybrid search on a dataset with a reranker, the
// dataset's cross-encoder) reorder a window of retrieved candidates before the page is cut from it.
//
// Window (plan.ts): the best `prefetch_amount` retrieval hits when `sort_by` gives it (capped at the
// dataset's MAX_LIMIT); else 1000 for a field sort or a search-type rerank (the reference's default)
// and 100 for the cross-encoder or for the adjustments alone. Never fewer than the page needs
// (offset + page_size), so later pages rank a larger window. `score_threshold` applies to the
// retrieval scores, before ranking.
//
// Stages, in this order:
//   1. Order, by `sort_by`:
//      field         the window sorted by num_value, time_stamp, created_at or weight (fieldSort.ts);
//                    the field's value is the score, and nothing else applies (another option that
//                    would change the order is refused, naming both)
//      search type   semantic, fulltext or bm25 scores for `rerank_query` (searchType.ts)
//      cross_encoder the dataset's reranker's scores (crossEncoder.ts); also hybrid search on a
//                    dataset with RERANKER_BASE_URL when `sort_by` says nothing
//      none          the retrieval scores
//   2. Adjustments (adjust.ts): with `sort_options` given, the chunk's weight (`use_weights`, on
//      unless false), `tag_weights`, `recency_bias` and `location_bias` combine into one score:
//      final = (relevance + recency_bias × recency + bias × closeness) × weight × tag weights, where
//      the blend is the plain score when neither bias is given.
//   3. `mmr` (mmr.ts): the adjusted scores diversified by maximal marginal relevance.
// The results are ordered by the last stage's score, best first (ties keep the earlier order), and
// that score is the one returned.
import type { DatasetRow } from '../../domain/datasets.js';
import type { Services } from '../../services.js';
import type { WeightedQuery } from '../query/index.js';
import type { SearchPayload } from '../request.js';
import type { Hit, SearchType } from '../types.js';
import { adjustScores, adjusts } from './adjust.js';
import { loadCandidates, loadUnitVectors } from './candidates.js';
import { rerankWithCrossEncoder } from './crossEncoder.js';
import { sortByField } from './fieldSort.js';
import { diversify } from './mmr.js';
import { byScore } from './order.js';
import { DEFAULT_RERANK_WINDOW, planRanking, windowOf } from './plan.js';
import { rerankBySearchType } from './searchType.js';

export { planRanking, windowOf, DEFAULT_RERANK_WINDOW, DEFAULT_SORT_PREFETCH, type RankingPlan } from './plan.js';

export interface RankingContext {
  dataset: DatasetRow;
  payload: SearchPayload;
  type: SearchType;
  queries: WeightedQuery[];
}

/**
 * How many candidates the ranking stage needs to serve hits up to `wanted` (offset + limit), or null
 * when the payload asks for no ranking beyond retrieval (the page is then retrieved directly).
 * Refuses bad or conflicting `sort_options` (400) before anything is retrieved.
 */
export function rankingWindow(payload: SearchPayload, wanted: number, dataset?: DatasetRow): number | null {
  const plan = planRanking(payload, dataset);
  if (plan) return windowOf(plan, wanted);
  // Not knowing the dataset, a hybrid search may still be reranked by its reranker (rankHits knows).
  // The window costs hybrid retrieval nothing: it fuses at least that many candidates anyway.
  return !dataset && payload.search_type === 'hybrid' ? Math.max(DEFAULT_RERANK_WINDOW, wanted) : null;
}

/** The candidates reordered (and rescored) as the payload asks, best first. */
export async function rankHits(services: Services, context: RankingContext, hits: Hit[]): Promise<Hit[]> {
  const { dataset, payload } = context;
  const plan = planRanking(payload, dataset);
  if (!plan || hits.length === 0) return hits;
  const { order } = plan;
  const needsRows = order.kind === 'field' || order.kind === 'cross_encoder' || adjusts(plan);
  const candidates = needsRows
    ? await loadCandidates(
        services,
        dataset.id,
        hits.map((h) => h.id),
        order.kind === 'cross_encoder',
      )
    : null;
  // Chunks deleted since retrieval would be left out of the page anyway; they take no part.
  let ranked = candidates ? hits.filter((h) => candidates.has(h.id)) : hits;

  const query = (given: string | null) => given ?? context.queries.map((q) => q.text).join(' ');
  switch (order.kind) {
    case 'field':
      return sortByField(ranked, candidates!, order.field, order.direction);
    case 'search_type':
      ranked = await rerankBySearchType(services, dataset, ranked, order.type, query(order.query));
      break;
    case 'cross_encoder':
      ranked = await rerankWithCrossEncoder(services, dataset, ranked, candidates!, query(order.query), order.implicit);
      break;
    case 'retrieval':
      break;
  }
  ranked = byScore(adjustScores(ranked, candidates ?? new Map(), plan));
  if (plan.mmrLambda != null)
    ranked = diversify(
      ranked,
      await loadUnitVectors(
        services,
        dataset.id,
        ranked.map((h) => h.id),
      ),
      plan.mmrLambda,
    );
  return ranked;
}
