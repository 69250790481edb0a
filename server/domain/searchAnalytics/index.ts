// Search analytics (POST /api/analytics/search): the report a request's `type` names, over the
// dataset's searches that its filter keeps; and the rating of a search (PUT /api/analytics/search).
import type { Knex } from 'knex';
import type * as T from '../../../sdk/src/generated/types.gen.js';
import { rateRecord } from '../ratings.js';
import { granularityOf } from './buckets.js';
import * as figures from './figures.js';
import * as graphs from './graphs.js';
import * as lists from './lists.js';
import { scopeOf } from './scope.js';

export interface AnalyticsStore {
  db: Knex;
  /** Writes the searches still queued for recording (store/deferred.ts). */
  pending(): Promise<void>;
}

export async function searchAnalytics(at: AnalyticsStore, datasetId: string, request: T.SearchAnalytics): Promise<T.SearchAnalyticsResponse> {
  const { db } = at;
  // Searches and events are recorded just after their answers: those made a moment ago count too.
  await at.pending();
  if (request.type === 'query_details') return lists.queryDetails(db, datasetId, request.request_id);
  const scope = scopeOf(datasetId, request.filter);
  switch (request.type) {
    case 'latency_graph':
      return graphs.latencyGraph(db, scope, granularityOf(request.granularity));
    case 'search_usage_graph':
      return graphs.searchUsageGraph(db, scope, granularityOf(request.granularity));
    case 'searches_per_user':
      return graphs.searchesPerUser(db, scope, granularityOf(request.granularity));
    case 'search_average_rating':
      return graphs.searchAverageRating(db, scope, granularityOf(request.granularity));
    case 'ctr_metrics_over_time':
      return graphs.ctrMetricsOverTime(db, scope, granularityOf(request.granularity));
    case 'search_conversion_rate':
      return graphs.searchConversionRate(db, scope, granularityOf(request.granularity));
    case 'search_revenue':
      return graphs.searchRevenue(db, scope, granularityOf(request.granularity), request.direct ?? false);
    case 'search_metrics':
      return figures.searchMetrics(db, scope);
    case 'count_queries':
      // The service collapses no typing sequences, so there is nothing to leave out.
      return figures.countQueries(db, scope);
    case 'popular_filters':
      return figures.popularFilters(db, scope);
    case 'event_funnel':
      return figures.eventFunnel(db, scope);
    case 'head_queries':
      return lists.headQueries(db, scope, lists.pageOf(request.page));
    case 'low_confidence_queries':
      return lists.lowConfidenceQueries(db, scope, lists.pageOf(request.page), request.threshold);
    case 'no_result_queries':
      return lists.noResultQueries(db, scope, lists.pageOf(request.page));
    case 'search_queries':
      return lists.searchQueries(db, scope, request);
  }
}

/** Rates a search of the dataset (again: replaces its rating); 404 when the dataset has no such search. */
export function rateSearch(at: AnalyticsStore, datasetId: string, request: T.RateQueryRequest): Promise<void> {
  return rateRecord(at, 'search_queries', datasetId, request);
}
