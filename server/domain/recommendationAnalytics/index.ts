// Recommendation analytics (POST /api/analytics/recommendations): the report a request's `type`
// names, over the dataset's recommendations that its filter keeps.
import type * as T from '../../../sdk/src/generated/types.gen.js';
import type { AnalyticsStore } from '../searchAnalytics/index.js';
import { granularityOf } from '../searchAnalytics/buckets.js';
import { eventFunnel } from './funnel.js';
import * as graphs from './graphs.js';
import * as lists from './lists.js';
import { recommendationScope } from './scope.js';

export async function recommendationAnalytics(
  at: AnalyticsStore,
  datasetId: string,
  request: T.RecommendationAnalytics,
): Promise<T.RecommendationAnalyticsResponse> {
  const { db } = at;
  // Recommendations and events are recorded just after their answers: those made a moment ago count too.
  await at.pending();
  if (request.type === 'query_details') return lists.queryDetails(db, datasetId, request.request_id);
  const scope = recommendationScope(request.filter);
  switch (request.type) {
    case 'recommendation_usage_graph':
      return graphs.usageGraph(db, datasetId, scope, granularityOf(request.granularity));
    case 'recommendations_per_user':
      return graphs.recommendationsPerUser(db, datasetId, scope, granularityOf(request.granularity));
    case 'recommendations_ctr_rate':
      return graphs.ctrRate(db, datasetId, scope, granularityOf(request.granularity));
    case 'recommendation_conversion_rate':
      return graphs.conversionRate(db, datasetId, scope, granularityOf(request.granularity));
    case 'low_confidence_recommendations':
      return lists.lowConfidence(db, datasetId, scope, request);
    case 'recommendation_queries':
      return lists.recommendationQueries(db, datasetId, scope, request);
    case 'event_funnel':
      return eventFunnel(db, datasetId, scope);
  }
}
