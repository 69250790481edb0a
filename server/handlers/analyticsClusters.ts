import type { GetClusterAnalyticsHandler } from '../../generated/handlers.js';
import { clusterAnalytics } from '../domain/searchClusters/index.js';

export const get_cluster_analytics: GetClusterAnalyticsHandler = async ({ body, dataset, services }) => ({
  status: 200,
  body: await clusterAnalytics(services.store.db, dataset.id, body),
});
