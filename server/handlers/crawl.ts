import type { GetCrawlRequestsForDatasetHandler } from '../../generated/handlers.js';
import { listCrawlRequests } from '../domain/crawls.js';

export const get_crawl_requests_for_dataset: GetCrawlRequestsForDatasetHandler = async ({ query, dataset, services }) => ({
  status: 200,
  body: await listCrawlRequests(services.store.db, dataset.id, query?.page ?? 1, query?.limit ?? 10),
});
