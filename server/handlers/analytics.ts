import type { GetRagAnalyticsHandler } from '../../generated/handlers.js';
import { ragQueries } from '../domain/ragAnalytics.js';

export const get_rag_analytics: GetRagAnalyticsHandler = async ({ body, dataset, services }) => ({
  status: 200,
  body: await ragQueries(services.store.db, dataset.id, body),
});
