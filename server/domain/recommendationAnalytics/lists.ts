// The recommendation analytics reports that list recommendations, ten a page, and the one that
// shows a single recommendation.
import type { Knex } from 'knex';
import type * as T from '../../../sdk/src/generated/types.gen.js';
import { notFound } from '../../errors.js';
import { timestamp } from '../../format.js';
import type { RecommendationScope } from './scope.js';
import * as store from './store.js';

/** Pages are numbered from 1; page 0 is the first too. */
const pageOf = (page: number | null | undefined) => Math.max(page ?? 1, 1);

function recommendationRecord(row: store.RecommendationRow): T.RecommendationEvent {
  return {
    id: row.id,
    dataset_id: row.dataset_id,
    recommendation_type: row.recommendation_type,
    positive_ids: row.positive_ids,
    negative_ids: row.negative_ids,
    positive_tracking_ids: row.positive_tracking_ids,
    negative_tracking_ids: row.negative_tracking_ids,
    request_params: row.request_params,
    results: row.results,
    top_score: Number(row.top_score),
    user_id: row.user_id ?? '',
    metadata: row.metadata ?? null,
    created_at: timestamp(row.created_at),
  };
}

export async function lowConfidence(
  db: Knex,
  datasetId: string,
  scope: RecommendationScope,
  request: T.RecommendationAnalyticsLowConfidenceRecommendations,
): Promise<T.RecommendationsEventResponse> {
  const rows = await store.recommendationPage(db, datasetId, scope, {
    page: pageOf(request.page),
    sortBy: 'top_score',
    order: 'asc',
    ...(request.threshold != null && { scoreBelow: request.threshold }),
  });
  return { queries: rows.map(recommendationRecord) };
}

export async function recommendationQueries(
  db: Knex,
  datasetId: string,
  scope: RecommendationScope,
  request: T.RecommendationAnalyticsRecommendationQueries,
): Promise<T.RecommendationsEventResponse> {
  const rows = await store.recommendationPage(db, datasetId, scope, {
    page: pageOf(request.page),
    sortBy: request.sort_by ?? 'created_at',
    order: request.sort_order ?? 'desc',
    ...(request.has_clicks != null && { clicked: request.has_clicks }),
  });
  return { queries: rows.map(recommendationRecord) };
}

/** One recommendation of the dataset; 404 when the dataset has none of that id. */
export async function queryDetails(db: Knex, datasetId: string, id: string): Promise<T.RecommendationEvent> {
  const row = await store.recommendationById(db, datasetId, id);
  if (!row) throw notFound(`recommendation ${id} not found`);
  return recommendationRecord(row);
}
