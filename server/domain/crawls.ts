// Crawl requests of a dataset: created, changed, deleted and listed here; each created or changed
// crawl starts the durable workflow `crawl-<id>` that reads its source (workflows/crawl.ts) and, with
// an interval, is scheduled. A crawl's options are checked before anything is written: a website, a
// Shopify store or an OpenAPI document at http(s) URLs that answer and are not on a forbidden
// address, or a YouTube channel the YouTube Data API knows (with YOUTUBE_API_KEY configured); a
// positive `limit`.
import type { Knex } from 'knex';
import type * as T from '../../sdk/src/generated/types.gen.js';
import { workflowIds } from '../../workflows/registry.js';
import { WorkflowAlreadyRunningError } from '../engines/workflows/types.js';
import { OutboundRefusedError, OutboundUnreachableError, outboundFetch, type OutboundSettings } from '../engines/outbound.js';
import { DEFAULT_PAGE_LIMIT } from '../crawl/sources.js';
import { channelRef, YOUTUBE_KEY_SETTING, YoutubeApi, YoutubeApiError } from '../crawl/youtube/index.js';
import { badRequest, notFound } from '../errors.js';
import { crawlTimestamp } from '../format.js';
import type { Services } from '../services.js';
import type { DatasetRow } from './datasets.js';

export interface CrawlRow {
  id: string;
  dataset_id: string;
  scrape_id: string;
  url: string;
  crawl_type: T.CrawlType;
  status: T.CrawlStatus;
  attempt_number: number;
  interval: T.CrawlInterval | null;
  next_crawl_at: Date | null;
  crawl_options: T.CrawlOptions;
  failure_reason: string | null;
  created_at: Date;
}

/** How often a crawl with an interval runs. */
export const INTERVAL_MS: Record<T.CrawlInterval, number> = { daily: 86_400_000, weekly: 7 * 86_400_000, monthly: 30 * 86_400_000 };

/** How long the site may take to answer when a crawl is created. */
const PROBE_TIMEOUT_MS = 10_000;

const crawlRecord = (row: CrawlRow): T.CrawlRequest => ({
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
});

/** Newest first; `page` counts from 1. */
export async function listCrawlRequests(db: Knex, datasetId: string, page: number, limit: number): Promise<T.CrawlRequest[]> {
  const rows = await db<CrawlRow>('crawl_requests')
    .where({ dataset_id: datasetId })
    .orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id' }])
    .limit(limit)
    .offset((page - 1) * limit);
  return rows.map(crawlRecord);
}

export async function createCrawl(services: Services, dataset: DatasetRow, body: T.CreateCrawlReqPayload): Promise<T.CrawlRequest> {
  const options = await checkedOptions(services.config.outbound, body.crawl_options);
  const [row] = await services.store
    .db<CrawlRow>('crawl_requests')
    .insert({
      dataset_id: dataset.id,
      url: options.site_url!,
      ...runnable(options),
    } as never)
    .returning('*');
  try {
    await startCrawl(services, row);
  } catch (error) {
    // Not started: no crawl is left waiting for a run that will not come.
    await services.store.db('crawl_requests').where({ id: row.id }).delete();
    throw error;
  }
  return crawlRecord(await scheduleCrawl(services, row));
}

export async function updateCrawl(services: Services, dataset: DatasetRow, body: T.UpdateCrawlReqPayload): Promise<T.CrawlRequest> {
  const db = services.store.db;
  const current = await findCrawl(db, dataset.id, body.crawl_id);
  if (isRunning(current.status)) throw badRequest(`crawl ${current.id} is running: change it once it has ended`);
  const options = await checkedOptions(services.config.outbound, body.crawl_options);
  const [row] = await db<CrawlRow>('crawl_requests')
    .where({ id: current.id })
    .update({ url: options.site_url!, ...runnable(options), updated_at: db.fn.now() } as never)
    .returning('*');
  try {
    await startCrawl(services, row);
  } catch (error) {
    // Not started: the crawl is left as it was.
    const { url, crawl_type, status, interval, crawl_options } = current;
    await db('crawl_requests')
      .where({ id: current.id })
      .update({ url, crawl_type, status: JSON.stringify(status), interval, crawl_options: JSON.stringify(crawl_options) });
    if (error instanceof WorkflowAlreadyRunningError) throw badRequest(`crawl ${current.id} is running: change it once it has ended`);
    throw error;
  }
  return crawlRecord(await scheduleCrawl(services, row));
}

/** Deletes the crawl and its schedule; a run under way sees it gone and stops. Its chunks stay. */
export async function deleteCrawl(services: Services, datasetId: string, crawlId: string): Promise<void> {
  const deleted = await services.store.db('crawl_requests').where({ id: crawlId, dataset_id: datasetId }).delete();
  if (deleted === 0) throw notFound(`crawl ${crawlId} not found in this dataset`);
  await services.workflows.unschedule(crawlScheduleId(crawlId));
}

async function findCrawl(db: Knex, datasetId: string, crawlId: string): Promise<CrawlRow> {
  const row = await db<CrawlRow>('crawl_requests').where({ id: crawlId, dataset_id: datasetId }).first();
  if (!row) throw notFound(`crawl ${crawlId} not found in this dataset`);
  return row;
}

/** The columns of a crawl about to run with `options` (jsonb columns as JSON text). */
const runnable = (options: T.CrawlOptions) => ({
  crawl_type: kindOf(options),
  status: JSON.stringify('Pending'),
  interval: options.interval ?? null,
  crawl_options: JSON.stringify(options),
});

const isRunning = (status: T.CrawlStatus) => status === 'Pending' || typeof status === 'object';

const crawlScheduleId = (crawlId: string) => `crawl-schedule-${crawlId}`;
const crawlRun = (row: CrawlRow) => ({ workflowId: workflowIds.crawl(row.id), input: { crawlId: row.id, datasetId: row.dataset_id } });

/** How long a run whose end is recorded may take to close before the next one can start. */
const CLOSING_MS = 5000;

async function startCrawl(services: Services, row: CrawlRow): Promise<void> {
  for (const deadline = Date.now() + CLOSING_MS; ; ) {
    try {
      await services.workflows.run('crawl', crawlRun(row));
      return;
    } catch (error) {
      // The run before has recorded its end but its engine has not closed it yet.
      if (!(error instanceof WorkflowAlreadyRunningError) || Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

/** Runs the crawl on its interval from now on (a Temporal Schedule in full mode), or on none; the row with its next run. */
async function scheduleCrawl(services: Services, row: CrawlRow): Promise<CrawlRow> {
  const scheduleId = crawlScheduleId(row.id);
  if (!row.interval) {
    await services.workflows.unschedule(scheduleId);
    return row;
  }
  const next = await services.workflows.schedule('crawl', { scheduleId, ...crawlRun(row), everyMs: INTERVAL_MS[row.interval] });
  await services.store.db('crawl_requests').where({ id: row.id }).update({ next_crawl_at: next });
  return { ...row, next_crawl_at: next };
}

/** The options as stored: checked, with the site (and an OpenAPI document) probed. */
async function checkedOptions(outbound: OutboundSettings, options: T.CrawlOptions): Promise<T.CrawlOptions> {
  for (const [i, webhook] of (options.webhook_urls ?? []).entries()) httpUrlOf(`crawl_options.webhook_urls[${i}]`, webhook, 'where to post how a run ended');
  if (options.scrape_options?.type === 'youtube') {
    if (options.limit != null && options.limit < 1) throw badRequest(`crawl_options.limit: ${options.limit} is not a positive number of videos`);
    return { ...options, site_url: await youtubeChannel(outbound, options.site_url), limit: options.limit ?? DEFAULT_PAGE_LIMIT };
  }
  const url = httpUrlOf(
    'crawl_options.site_url',
    options.site_url,
    'the page the crawl starts at, the store, or the documentation the OpenAPI document describes',
  );
  if (options.limit != null && options.limit < 1) throw badRequest(`crawl_options.limit: ${options.limit} is not a positive number of pages`);
  for (const field of ['include_paths', 'exclude_paths'] as const)
    for (const pattern of options[field] ?? []) {
      try {
        new RegExp(pattern);
      } catch {
        throw badRequest(`crawl_options.${field}: ${pattern} is not a regular expression`);
      }
    }
  for (const pattern of (options.scrape_options?.type === 'shopify' && options.scrape_options.tag_regexes) || []) {
    try {
      new RegExp(pattern);
    } catch {
      throw badRequest(`crawl_options.scrape_options.tag_regexes: ${pattern} is not a regular expression`);
    }
  }
  await probe(outbound, url, 'crawl_options.site_url');
  if (options.scrape_options?.type === 'openapi') {
    const field = 'crawl_options.scrape_options.openapi_schema_url';
    await probe(outbound, httpUrlOf(field, options.scrape_options.openapi_schema_url, 'the OpenAPI document to read'), field);
  }
  return { ...options, site_url: url.href, limit: options.limit ?? DEFAULT_PAGE_LIMIT };
}

/** The channel's URL as stored, once the YouTube Data API has found the channel it names. */
async function youtubeChannel(outbound: OutboundSettings, siteUrl: string | null | undefined): Promise<string> {
  const field = 'crawl_options.site_url';
  if (!outbound.youtube?.apiKey)
    throw badRequest(
      `crawl_options.scrape_options: youtube crawls read channels through the YouTube Data API, which needs ${YOUTUBE_KEY_SETTING}: this instance has none configured`,
    );
  if (!siteUrl) throw badRequest(`${field} is required: the YouTube channel to crawl, such as https://www.youtube.com/@handle`);
  const ref = channelRef(siteUrl);
  if ('error' in ref) throw badRequest(`${field}: ${ref.error}`);
  let found: unknown;
  try {
    found = await new YoutubeApi(outbound).channel(ref);
  } catch (error) {
    if (error instanceof YoutubeApiError) throw badRequest(`${field}: the channel could not be looked up: ${error.message}`);
    throw error;
  }
  if (!found) throw badRequest(`${field}: YouTube knows no channel at ${siteUrl}`);
  return new URL(siteUrl.trim()).href;
}

/** The kind of source the options name (the reference calls a website crawl firecrawl). */
const kindOf = (options: T.CrawlOptions): T.CrawlType => options.scrape_options?.type ?? 'firecrawl';

function httpUrlOf(field: string, value: string | null | undefined, what: string): URL {
  if (!value) throw badRequest(`${field} is required: ${what}`);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw badRequest(`${field}: ${value} is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw badRequest(`${field}: ${url.protocol} is not http or https`);
  return url;
}

/** The URL must answer (any status), from an address the outbound rules allow. */
async function probe(outbound: OutboundSettings, url: URL, field: string): Promise<void> {
  try {
    const response = await outboundFetch(outbound, url, { timeoutMs: PROBE_TIMEOUT_MS });
    await response.body?.cancel();
  } catch (error) {
    if (error instanceof OutboundRefusedError || error instanceof OutboundUnreachableError)
      throw badRequest(`${field}: ${url.href} ${error instanceof OutboundRefusedError ? 'is refused' : 'could not be reached'}: ${error.message}`);
    throw error;
  }
}
