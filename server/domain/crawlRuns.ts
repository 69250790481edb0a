// A crawl's runs, as its workflow records them: a run begins (attempt_number counts runs), stores
// pages (their chunks upserted by tracking id, and each page noted with the run that stored it),
// drops the chunks of pages the run did not find again, and ends Completed or Failed. Every step is
// idempotent, so a run retried after a crash stores each page once.
import type { Knex } from 'knex';
import type * as T from '../../sdk/src/generated/types.gen.js';
import { BATCH_LIMIT, createChunks } from './chunks/create.js';
import { deleteChunks } from './chunks/delete.js';
import type { ChunkWriteServices } from './chunks/write.js';
import { type CrawlRow, INTERVAL_MS } from './crawls.js';
import type { DatasetRow } from './datasets.js';
import { emitEvent } from './events.js';
import type { SourcePage } from '../crawl/types.js';

export interface RunStart {
  run: number;
  options: T.CrawlOptions;
}

/**
 * Marks the crawl processing and counts the run; null when the crawl is gone. A crawl with an
 * interval runs next one interval from now (its schedule started this run, or is reset by a change).
 */
export async function beginRun(db: Knex, crawlId: string): Promise<RunStart | null> {
  const [row] = await db<CrawlRow>('crawl_requests')
    .where({ id: crawlId })
    .update({
      attempt_number: db.raw('attempt_number + 1'),
      status: JSON.stringify({ Processing: 0 }),
      failure_reason: null,
      pages_seen: 0,
      pages_stored: 0,
      next_crawl_at: db.raw(
        `case interval ${Object.entries(INTERVAL_MS)
          .map(([name, ms]) => `when '${name}' then now() + interval '${ms} milliseconds'`)
          .join(' ')} else null end`,
      ),
    } as never)
    .returning(['attempt_number', 'crawl_options']);
  return row ? { run: row.attempt_number, options: row.crawl_options } : null;
}

/** Chunks written by one call of the chunk write path: the embedder's batch, and the API's. */
export const STORE_BATCH = BATCH_LIMIT;

/**
 * Stores pages: their chunks (updated in place by tracking id, written a batch at a time, as the
 * embedding model prefers), the chunks each page had at the last run and no longer has deleted,
 * and each page noted under this run. False when the crawl is gone.
 */
export async function storePages(
  services: ChunkWriteServices,
  dataset: DatasetRow,
  crawl: { id: string; run: number; options: T.CrawlOptions },
  pages: SourcePage[],
): Promise<boolean> {
  const db = services.store.db;
  const { options } = crawl;
  const payloads: T.ChunkReqPayload[] = pages.flatMap((page) =>
    page.chunks.map((chunk) => ({
      chunk_html: chunk.html,
      link: chunk.link ?? page.url,
      tracking_id: chunk.trackingId,
      upsert_by_tracking_id: true,
      tag_set: [...new Set([...(options.tags ?? []), ...(chunk.tags ?? [])])],
      num_value: chunk.numValue ?? undefined,
      image_urls: chunk.imageUrls?.length ? chunk.imageUrls : undefined,
      time_stamp: chunk.timeStamp,
      metadata: { ...chunk.metadata, url: page.url, title: page.title, headings: chunk.headings },
      ...(options.boost_titles && page.title
        ? { fulltext_boost: { phrase: page.title, boost_factor: 1.3 }, semantic_boost: { phrase: page.title, distance_factor: 0.5 } }
        : {}),
    })),
  );
  for (let i = 0; i < payloads.length; i += STORE_BATCH) await createChunks(services, dataset, payloads.slice(i, i + STORE_BATCH), true);
  const urls = pages.map((p) => p.url);
  const before = new Map<string, string[]>(
    (await db('crawl_pages').where({ crawl_id: crawl.id }).whereIn('url', urls).select('url', 'tracking_ids')).map((r) => [r.url, r.tracking_ids]),
  );
  const kept = new Set(pages.flatMap((p) => p.chunks.map((c) => c.trackingId)));
  await dropTracked(
    services,
    dataset.id,
    [...before.values()].flat().filter((id) => !kept.has(id)),
  );
  return db.transaction(async (trx) => {
    // Under the crawl's row lock, so a crawl deleted meanwhile gets no page noted.
    if (!(await trx('crawl_requests').where({ id: crawl.id }).forUpdate().first('id'))) return false;
    await trx('crawl_pages')
      .insert(pages.map((page) => ({ crawl_id: crawl.id, url: page.url, run: crawl.run, tracking_ids: page.chunks.map((c) => c.trackingId) })))
      .onConflict(['crawl_id', 'url'])
      .merge(['run', 'tracking_ids']);
    return true;
  });
}

/** Progress while the run goes: pages seen and stored. False when the crawl is gone. */
export async function recordProgress(db: Knex, crawlId: string, seen: number, stored: number): Promise<boolean> {
  const changed = await db('crawl_requests')
    .where({ id: crawlId })
    .update({ pages_seen: seen, pages_stored: stored, status: JSON.stringify({ Processing: stored }) });
  return changed > 0;
}

/** Deletes the chunks of the pages no run since `run` stored; returns how many chunks went. */
export async function dropVanishedPages(
  services: Pick<ChunkWriteServices, 'store' | 'lexical'>,
  datasetId: string,
  crawlId: string,
  run: number,
): Promise<number> {
  const db = services.store.db;
  const gone: { url: string; tracking_ids: string[] }[] = await db('crawl_pages')
    .where({ crawl_id: crawlId })
    .where('run', '<', run)
    .select('url', 'tracking_ids');
  const dropped = await dropTracked(
    services,
    datasetId,
    gone.flatMap((p) => p.tracking_ids),
  );
  if (gone.length)
    await db('crawl_pages')
      .where({ crawl_id: crawlId })
      .whereIn(
        'url',
        gone.map((p) => p.url),
      )
      .delete();
  return dropped;
}

async function dropTracked(services: Pick<ChunkWriteServices, 'store' | 'lexical'>, datasetId: string, trackingIds: string[]): Promise<number> {
  if (trackingIds.length === 0) return 0;
  const ids: string[] = await services.store.db('chunks').where({ dataset_id: datasetId }).whereIn('tracking_id', trackingIds).pluck('id');
  return deleteChunks(services, datasetId, ids);
}

export type RunEnd = { outcome: 'completed'; stored: number; skipped: number } | { outcome: 'failed'; reason: string };

/** Ends the run: its status and the dataset's event. */
export async function endRun(db: Knex, datasetId: string, crawlId: string, end: RunEnd): Promise<void> {
  const row = await db<CrawlRow>('crawl_requests').where({ id: crawlId }).first('url');
  if (!row) return;
  await db('crawl_requests')
    .where({ id: crawlId })
    .update({
      status: JSON.stringify(end.outcome === 'completed' ? 'Completed' : 'Failed'),
      failure_reason: end.outcome === 'failed' ? end.reason : null,
    });
  await emitEvent(db, {
    datasetId,
    type: end.outcome === 'completed' ? 'crawl_completed' : 'crawl_failed',
    data:
      end.outcome === 'completed'
        ? { crawl_id: crawlId, site_url: row.url, pages_stored: end.stored, pages_skipped: end.skipped }
        : { crawl_id: crawlId, site_url: row.url, reason: end.reason },
  });
}
