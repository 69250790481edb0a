// The crawl flow (workflow `crawl-<id>`): one run of a crawl. Steps, each an activity:
//   begin (count the run, mark it processing) -> crawl the source, storing pages as they are read
//   (a long step that heartbeats; retried after a crash, it reads the site again and stores every
//   page once, by tracking id) -> drop the chunks of pages this run did not find -> end (Completed
//   or Failed with the reason, and a dataset event). A run that stored nothing fails and drops
//   nothing. A crawl deleted meanwhile ends the flow quietly. Deterministic code only: it runs in Temporal's workflow sandbox.
import type { ActivityOptions } from '@temporalio/workflow';
import type { Activities } from './activities/index.js';
import { checkUuid, isCancellation, reasonOf, retry } from './common.js';
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
  try {
    const pages = await crawlSitePages({ crawlId, datasetId, run: begun.run });
    if (pages.gone) return { status: 'gone' };
    // Nothing stored is a failed run (a site down, say), and keeps what the run before stored.
    if (pages.stored === 0) {
      const reason = `nothing could be stored: ${pages.firstSkip ?? 'the source had no pages'}`;
      await endCrawlRun({ crawlId, datasetId, end: { outcome: 'failed', reason } });
      return { status: 'failed', reason };
    }
    const dropped = await dropVanishedCrawlPages({ crawlId, datasetId, run: begun.run });
    await endCrawlRun({ crawlId, datasetId, end: { outcome: 'completed', stored: pages.stored, skipped: pages.skipped } });
    return { status: 'completed', stored: pages.stored, skipped: pages.skipped, dropped };
  } catch (err) {
    if (isCancellation(err)) throw err;
    const reason = reasonOf(err);
    await endCrawlRun({ crawlId, datasetId, end: { outcome: 'failed', reason } });
    return { status: 'failed', reason };
  }
}
