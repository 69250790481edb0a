// Crawl activities: the I/O steps of the crawl flow (workflows/crawl.ts). The site is read by
// server/crawl/website under the outbound rules of tenants' URLs; pages are stored through the chunk
// write path by server/domain/crawlRuns.ts. Each step is idempotent: run again, it stores nothing twice.
import { crawlSource } from '../../server/crawl/sources.js';
import type { SourcePage } from '../../server/crawl/types.js';
import { beginRun, dropVanishedPages, endRun, recordProgress, type RunEnd, type RunStart, STORE_BATCH, storePages } from '../../server/domain/crawlRuns.js';
import type { CrawlRow } from '../../server/domain/crawls.js';
import type { DatasetRow } from '../../server/domain/datasets.js';
import { STRICT_OUTBOUND } from '../../server/engines/outbound.js';
import { heartbeat } from './heartbeat.js';
import type { ActivityDeps } from './index.js';

/** The longest a crawled page waits to be stored with others. */
const MAX_WAIT_MS = 1000;
/**
 * How often the crawl step says it is alive while no page comes (a site's Crawl-delay, a slow
 * channel API): well inside the step's heartbeat timeout.
 */
const ALIVE_EVERY_MS = 10_000;

export interface CrawlRunRef {
  crawlId: string;
  datasetId: string;
  run: number;
}

export interface CrawledPages {
  stored: number;
  skipped: number;
  /** Why the first page skipped was: the reason a run that stored nothing failed. */
  firstSkip?: string;
  /** The crawl or its dataset was deleted meanwhile: the run stops. */
  gone: boolean;
}

export function crawlActivities(deps: ActivityDeps) {
  const { store, lexical } = deps;
  const { db } = store;
  const outbound = deps.outbound ?? STRICT_OUTBOUND;
  const politeness = deps.crawl && { minDelayMs: deps.crawl.minDelayMs };
  const chunkServices = { store, lexical, config: { outbound } };

  return {
    async beginCrawlRun({ crawlId }: { crawlId: string }): Promise<RunStart | null> {
      return beginRun(db, crawlId);
    },

    /** Reads the site and stores its pages a batch at a time, noting progress as it goes. */
    async crawlSitePages({ crawlId, datasetId, run }: CrawlRunRef): Promise<CrawledPages> {
      const gone = { stored: 0, skipped: 0, gone: true };
      const dataset = await db<DatasetRow>('datasets').where({ id: datasetId, deleted: 0 }).first();
      const crawl = await db<CrawlRow>('crawl_requests').where({ id: crawlId, dataset_id: datasetId }).first();
      if (!dataset || !crawl) return gone;
      let seen = 0;
      let stored = 0;
      let firstSkip: string | undefined;
      // Pages wait here until they hold a batch of chunks (written together, they embed faster), or
      // for a second at most, so a slow site's pages are not held back.
      let waiting: SourcePage[] = [];
      let waitingChunks = 0;
      let waitingSince = 0;
      const flush = async () => {
        const pages = waiting;
        waiting = [];
        waitingChunks = 0;
        if (pages.length === 0) return true;
        if (!(await storePages(chunkServices, dataset, { id: crawlId, run, options: crawl.crawl_options }, pages))) return false;
        stored += pages.length;
        return true;
      };
      const alive = setInterval(() => heartbeat({ seen, stored }), ALIVE_EVERY_MS);
      try {
        for await (const item of crawlSource(crawl.crawl_options, { outbound, politeness })) {
          seen++;
          if ('page' in item) {
            if (waiting.length === 0) waitingSince = Date.now();
            waiting.push(item.page);
            waitingChunks += item.page.chunks.length;
          } else firstSkip ??= `${item.skipped.url}: ${item.skipped.reason}`;
          if ((waitingChunks >= STORE_BATCH || Date.now() - waitingSince >= MAX_WAIT_MS) && !(await flush())) return gone;
          heartbeat({ seen, stored });
          if (!(await recordProgress(db, crawlId, seen, stored))) return gone;
        }
      } finally {
        clearInterval(alive);
      }
      if (!(await flush()) || !(await recordProgress(db, crawlId, seen, stored))) return gone;
      return { stored, skipped: seen - stored, firstSkip, gone: false };
    },

    async dropVanishedCrawlPages({ crawlId, datasetId, run }: CrawlRunRef): Promise<number> {
      return dropVanishedPages(chunkServices, datasetId, crawlId, run);
    },

    async endCrawlRun({ crawlId, datasetId, end }: { crawlId: string; datasetId: string; end: RunEnd }): Promise<void> {
      await endRun(db, datasetId, crawlId, end);
    },
  };
}
