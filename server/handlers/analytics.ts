import type { GetRagAnalyticsHandler, GetSearchAnalyticsHandler, SetRagQueryRatingHandler, SetSearchQueryRatingHandler } from '../../generated/handlers.js';
import { ragAnalytics, rateRagQuery } from '../domain/ragAnalytics/index.js';
import { rateSearch, searchAnalytics } from '../domain/searchAnalytics/index.js';
import type { Services } from '../services.js';

const analyticsStore = (services: Services) => ({ db: services.store.db, pending: () => services.deferred.flush() });

export const get_rag_analytics: GetRagAnalyticsHandler = async ({ body, dataset, services }) => ({
  status: 200,
  body: await ragAnalytics(analyticsStore(services), dataset.id, body),
});

export const set_rag_query_rating: SetRagQueryRatingHandler = async ({ body, dataset, services }) => {
  await rateRagQuery(analyticsStore(services), dataset.id, body);
  return { status: 204, body: undefined };
};

export const get_search_analytics: GetSearchAnalyticsHandler = async ({ body, dataset, services }) => ({
  status: 200,
  body: await searchAnalytics(analyticsStore(services), dataset.id, body),
});

export const set_search_query_rating: SetSearchQueryRatingHandler = async ({ body, dataset, services }) => {
  await rateSearch(analyticsStore(services), dataset.id, body);
  return { status: 204, body: undefined };
};
