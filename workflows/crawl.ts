// The crawl flow (workflow `crawl-<id>`): one run of a crawl. Steps, each an activity:
//   begin (count the run, mark it processing) -> crawl the source, storing pages as they are read
//   (a long step that heartbeats; retried after a crash, it reads the site again and stores every
//   page once, by tracking id) -> drop the chunks of pages this run did not find -> the crawl's
//   webhooks, told how it ended -> end (Completed or Failed with the reason, and a dataset event).
//   A run that stored nothing fails and drops nothing. A crawl deleted meanwhile ends the flow
//   quietly. Deterministic code only: it runs in Temporal's workflow sandbox.
import type { ActivityOptions } from '@temporalio/workflow';
import type { Activities } from './activities/index.js';
import { checkUuid, isCancellation, reasonOf, retry } from './common.js';
import type { RunStart } from '../server/domain/crawlRuns.js';
import type { FlowContext } from './flows.js';

const heartbeatTimeout = '30s';

export const crawlActivityOptions = {
  beginCrawlRun: { startToCloseTimeout: '1m', retry },
  // A thousand pages at a polite pace take a while; the heartbeat notices a dead worker.
  crawlSitePages: { startToCloseTimeout: '6h', heartbeatTimeout, retry },
  dropVanishedCrawlPages: { startToCloseTimeout: '10m', heartbeatTimeout, retry },
  endCrawlRun: { startToCloseTimeout: '1m', retry },
} satisfies Record<string, ActivityOptions>;

export interface CrawlInput {
  crawlId: string;
  datasetId: string;
}

export type CrawlResult = { status: 'completed'; stored: number; skipped: number; dropped: number } | { status: 'failed'; reason: string } | { status: 'gone' };

export async function crawlFlow(ctx: FlowContext<Activities>, input: CrawlInput): Promise<CrawlResult> {
  const { crawlId, datasetId } = input;
  checkUuid('crawl', 'crawlId', crawlId);
  checkUuid('crawl', 'datasetId', datasetId);
  const { beginCrawlRun, crawlSitePages, dropVanishedCrawlPages, endCrawlRun } = ctx.activities;
  const begun = await beginCrawlRun({ crawlId });
  if (!begun) return { status: 'gone' };
  let result: CrawlResult;
  let stored = 0;
  try {
    const pages = await crawlSitePages({ crawlId, datasetId, run: begun.run });
    if (pages.gone) return { status: 'gone' };
    stored = pages.stored;
    if (pages.stored === 0) {
      // Nothing stored is a failed run (a site down, say), and keeps what the run before stored.
      result = { status: 'failed', reason: `nothing could be stored: ${pages.firstSkip ?? 'the source had no pages'}` };
    } else {
      const dropped = await dropVanishedCrawlPages({ crawlId, datasetId, run: begun.run });
      result = { status: 'completed', stored: pages.stored, skipped: pages.skipped, dropped };
    }
  } catch (err) {
    if (isCancellation(err)) throw err;
    result = { status: 'failed', reason: reasonOf(err) };
  }
  // The webhooks first: the run has ended, as its status says, once nothing is left to do.
  await notifyWebhooks(ctx, begun.options, { datasetId, crawlId, stored, result });
  await endCrawlRun({
    crawlId,
    datasetId,
    end:
      result.status === 'completed' ? { outcome: 'completed', stored: result.stored, skipped: result.skipped } : { outcome: 'failed', reason: result.reason },
  });
  return result;
}

/** Tells the crawl's webhooks how the run ended; an endpoint that fails (after the retries) is not the run's failure. */
async function notifyWebhooks(
  ctx: FlowContext<Activities>,
  options: RunStart['options'],
  run: { datasetId: string; crawlId: string; stored: number; result: CrawlResult },
): Promise<void> {
  const failed = run.result.status === 'failed';
  for (const url of options.webhook_urls ?? []) {
    try {
      await ctx.activities.notifyWebhook({
        url,
        body: {
          event_type: failed ? 'crawl_failed' : 'crawl_completed',
          dataset_id: run.datasetId,
          crawl_id: run.crawlId,
          status: failed ? 'failed' : 'completed',
          pages_stored: run.stored,
          error: run.result.status === 'failed' ? run.result.reason : null,
          metadata: options.webhook_metadata ?? null,
        },
      });
    } catch (err) {
      if (isCancellation(err)) throw err;
    }
  }
}
