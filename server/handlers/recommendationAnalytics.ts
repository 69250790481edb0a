// Handlers of recommendation analytics and of the organization's top datasets; the rules are in
// domain/recommendationAnalytics/ and domain/topDatasets.ts.
import type { GetRecommendationAnalyticsHandler, GetTopDatasetsHandler } from '../../generated/handlers.js';
import { recommendationAnalytics } from '../domain/recommendationAnalytics/index.js';
import { topDatasets } from '../domain/topDatasets.js';

export const get_recommendation_analytics: GetRecommendationAnalyticsHandler = async ({ body, dataset, services }) => ({
  status: 200,
  body: await recommendationAnalytics({ db: services.store.db, pending: () => services.deferred.flush() }, dataset.id, body),
});

export const get_top_datasets: GetTopDatasetsHandler = async ({ body, organizationId, services }) => {
  // Searches, RAG calls and recommendations are recorded just after their answers: those made a moment ago count too.
  await services.deferred.flush();
  return { status: 200, body: await topDatasets(services.store.db, organizationId, body) };
};
