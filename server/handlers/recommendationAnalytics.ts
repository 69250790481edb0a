// Handlers of recommendation analytics; the rules are in domain/recommendationAnalytics/.
import type { GetRecommendationAnalyticsHandler } from '../../generated/handlers.js';
import { recommendationAnalytics } from '../domain/recommendationAnalytics/index.js';

export const get_recommendation_analytics: GetRecommendationAnalyticsHandler = async ({ body, dataset, services }) => ({
  status: 200,
  body: await recommendationAnalytics({ db: services.store.db, pending: () => services.deferred.flush() }, dataset.id, body),
});
