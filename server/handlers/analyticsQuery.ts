import type { GetAnalyticsHandler } from '../../generated/handlers.js';
import { analyticsQuery } from '../domain/analyticsQuery/index.js';

export const get_analytics: GetAnalyticsHandler = async ({ body, dataset, services }) => ({
  status: 200,
  body: await analyticsQuery({ db: services.store.db, pending: () => services.deferred.flush() }, dataset.id, body),
});
