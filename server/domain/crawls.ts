// Crawl requests of a dataset (created by the crawl feature; listed here).
import type { Knex } from 'knex';
import type * as T from '../../generated/client/types.gen.js';
import { crawlTimestamp } from '../format.js';

interface CrawlRow {
  id: string;
  dataset_id: string;
  scrape_id: string;
  url: string;
  crawl_type: T.CrawlType;
  status: T.CrawlStatus;
  attempt_number: number;
  interval: string | null;
  next_crawl_at: Date | null;
  crawl_options: T.CrawlOptions;
  created_at: Date;
}

/** Newest first; `page` counts from 1. */
export async function listCrawlRequests(db: Knex, datasetId: string, page: number, limit: number): Promise<T.CrawlRequest[]> {
  const rows = await db<CrawlRow>('crawl_requests')
    .where({ dataset_id: datasetId })
    .orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id' }])
    .limit(limit)
    .offset((page - 1) * limit);
  return rows.map((row) => ({
    id: row.id,
    dataset_id: row.dataset_id,
    scrape_id: row.scrape_id,
    url: row.url,
    status: row.status,
    crawl_type: row.crawl_type,
    attempt_number: row.attempt_number,
    interval: row.interval,
    next_crawl_at: row.next_crawl_at && crawlTimestamp(row.next_crawl_at),
    created_at: crawlTimestamp(row.created_at),
    crawl_options: { crawl_options: row.crawl_options },
  }));
}
