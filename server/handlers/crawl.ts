// Handlers of the Crawl operations; the rules are in domain/crawls.ts, the crawling in workflows/crawl.ts.
import type * as H from '../../generated/handlers.js';
import { createCrawl, deleteCrawl, listCrawlRequests, updateCrawl } from '../domain/crawls.js';

export const get_crawl_requests_for_dataset: H.GetCrawlRequestsForDatasetHandler = async ({ query, dataset, services }) => ({
  status: 200,
  body: await listCrawlRequests(services.store.db, dataset.id, query?.page ?? 1, query?.limit ?? 10),
});

export const create_crawl: H.CreateCrawlHandler = async ({ body, dataset, services }) => ({
  status: 200,
  body: await createCrawl(services, dataset, body),
});

export const update_crawl_request: H.UpdateCrawlRequestHandler = async ({ body, dataset, services }) => ({
  status: 200,
  body: await updateCrawl(services, dataset, body),
});

export const delete_crawl_request: H.DeleteCrawlRequestHandler = async ({ path, dataset, services }) => {
  await deleteCrawl(services, dataset.id, path.crawl_id);
  return { status: 204, body: undefined };
};
