import type { GetRagAnalyticsHandler, GetSearchAnalyticsHandler, SetSearchQueryRatingHandler } from '../../generated/handlers.js';
import { ragQueries } from '../domain/ragAnalytics.js';
import { rateSearch, searchAnalytics } from '../domain/searchAnalytics/index.js';
import type { Services } from '../services.js';

export const get_rag_analytics: GetRagAnalyticsHandler = async ({ body, dataset, services }) => ({
  status: 200,
  body: await ragQueries(services.store.db, dataset.id, body),
});

const analyticsStore = (services: Services) => ({ db: services.store.db, pending: () => services.deferred.flush() });

export const get_search_analytics: GetSearchAnalyticsHandler = async ({ body, dataset, services }) => ({
  status: 200,
  body: await searchAnalytics(analyticsStore(services), dataset.id, body),
});

export const set_search_query_rating: SetSearchQueryRatingHandler = async ({ body, dataset, services }) => {
  await rateSearch(analyticsStore(services), dataset.id, body);
  return { status: 204, body: undefined };
};
