// The crawl suite: how fast a website crawl fills a dataset, against the chunk write path alone for
// the same chunks. A site of 500 pages is served by the bench on localhost (each page a title, three
// sections under headings, and links onward; answered at once, so the site is not what is timed),
// the service runs in a process of its own with OUTBOUND_ALLOW_PRIVATE=localhost, and:
//   crawl       POST /api/crawl (sitemap ignored, limit 500), timed until the crawl is Completed:
//               fetching, robots.txt, extracting, splitting and writing every page;
//   write path  the chunks the crawl stored, read back and sent to POST /api/chunk in batches of
//               120 into another dataset, one request at a time: the same chunks, without the crawl.
//   schedule    with the service stopped, the bench's own workflow engine on the same database
//               (and Temporal) schedules a short workflow (clearDataset of an empty dataset) 2 s
//               ahead, five times: from the schedule's due time to the run's dataset event, what a
//               crawl's interval waits beyond its time (the in-process runner looks every 5 s).
// Reported: pages/s and chunks/s of each, crawl / write path, and the schedule's delays.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createClient } from '../sdk/src/generated/client/index.js';
import { createChunk, createCrawl, createDataset, createOrganization, getCrawlRequestsForDataset, scrollDatasetChunks } from '../sdk/src/generated/sdk.gen.js';
import type { ChunkReqPayload } from '../sdk/src/generated/types.gen.js';
import { loadConfig } from '../server/config.js';
import { createLexicalIndex } from '../server/engines/lexical/index.js';
import { openFileStorage } from '../server/engines/storage/index.js';
import { createWorkflowEngine } from '../server/engines/workflows/index.js';
import { openStore } from '../server/store/db.js';
import { ADMIN_KEY, type ModeEnvironment } from './modes.js';
import { fmt, table } from './report.js';
import { spawnService } from './service-process.js';

export interface CrawlOptions {
  pages: number;
}

export interface CrawlResult {
  mode: string;
  pages: number;
  chunks: number;
  crawl: { seconds: number; pages_per_s: number; chunks_per_s: number };
  write_path: { seconds: number; pages_per_s: number; chunks_per_s: number };
  crawl_over_write_path: number;
  /** From a schedule's due time to its run's end, ms. */
  schedule_delay_ms: number[];
}

const WRITE_BATCH = 120;
const SCHEDULE_AHEAD_MS = 2000;
const SCHEDULE_SAMPLES = 5;
const WORDS = 'glacier moraine crevasse serac firn cirque arete icefall meltwater bergschrund nunatak drumlin esker kame'.split(' ');

/** Page i: a title, three sections, and links to the next pages (so a breadth-first crawl reaches them all). */
function pageHtml(i: number, pages: number): string {
  const words = (k: number) => Array.from({ length: 40 }, (_, w) => WORDS[(i * 7 + k * 3 + w) % WORDS.length]).join(' ');
  const sections = [1, 2, 3].map((k) => `<h2>Section ${k} of page ${i}</h2><p>${words(k)}.</p>`).join('');
  const links = [1, 2, 3]
    .map((d) => i * 3 + d)
    .filter((j) => j < pages)
    .map((j) => `<a href="/page/${j}">page ${j}</a>`)
    .join(' ');
  return `<!doctype html><html><head><title>Page ${i}</title></head><body><h1>Page ${i}</h1>${sections}<nav>${links}</nav></body></html>`;
}

async function serveSite(pages: number): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    const match = /^\/page\/(\d+)$/.exec(req.url ?? '');
    const i = req.url === '/' ? 0 : match ? Number(match[1]) : -1;
    if (i < 0 || i >= pages) return void res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(pageHtml(i, pages));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://localhost:${(server.address() as AddressInfo).port}/`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

export async function runCrawl(modeEnv: ModeEnvironment, options: CrawlOptions, log: (line: string) => void): Promise<CrawlResult> {
  const site = await serveSite(options.pages);
  // The local site is read as fast as the crawl goes: what is measured is the crawl, not its politeness.
  const env = { ...(await modeEnv.freshEnv()), OUTBOUND_ALLOW_PRIVATE: 'localhost', CRAWL_REQUESTS_PER_SECOND: '1000' };
  const service = await spawnService(env, log);
  let stopped = false;
  try {
    const admin = createClient({ baseUrl: service.url, auth: () => ADMIN_KEY });
    const org = (await createOrganization({ client: admin, body: { name: 'crawl bench' }, throwOnError: true })).data;
    const newDataset = async (name: string) =>
      (await createDataset({ client: admin, headers: { 'SVC-Organization': org.id }, body: { dataset_name: name }, throwOnError: true })).data.id;
    const crawled = await newDataset('crawled');
    const headers = { 'SVC-Dataset': crawled };

    log(`crawling ${options.pages} pages…`);
    const t0 = performance.now();
    const crawl = (
      await createCrawl({
        client: admin,
        headers,
        body: { crawl_options: { site_url: site.url, ignore_sitemap: true, limit: options.pages } },
        throwOnError: true,
      })
    ).data;
    for (;;) {
      const [current] = (await getCrawlRequestsForDataset({ client: admin, headers, throwOnError: true })).data.filter((c) => c.id === crawl.id);
      if (current.status === 'Completed') break;
      if (current.status === 'Failed') throw new Error('the crawl failed');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const crawlSeconds = (performance.now() - t0) / 1000;

    // The chunks the crawl stored, as payloads for the write path.
    const payloads: ChunkReqPayload[] = [];
    for (let offset: string | undefined; ; ) {
      const page = (await scrollDatasetChunks({ client: admin, headers, body: { page_size: 1000, offset_chunk_id: offset }, throwOnError: true })).data.chunks;
      for (const c of page)
        payloads.push({
          chunk_html: c.chunk_html,
          link: c.link,
          tracking_id: c.tracking_id,
          tag_set: c.tag_set?.filter((t): t is string => t != null),
          metadata: c.metadata,
        });
      if (page.length < 1000) break;
      offset = page[page.length - 1].id;
    }
    const written = await newDataset('written');
    log(`writing the same ${payloads.length} chunks through POST /api/chunk…`);
    const t1 = performance.now();
    for (let i = 0; i < payloads.length; i += WRITE_BATCH)
      await createChunk({ client: admin, headers: { 'SVC-Dataset': written }, body: payloads.slice(i, i + WRITE_BATCH), throwOnError: true });
    const writeSeconds = (performance.now() - t1) / 1000;

    const rates = (seconds: number) => ({ seconds, pages_per_s: options.pages / seconds, chunks_per_s: payloads.length / seconds });
    await service.stop();
    stopped = true;
    log(`scheduling a workflow ${SCHEDULE_SAMPLES} times, ${SCHEDULE_AHEAD_MS} ms ahead…`);
    const delays = await scheduleDelays(env, await newDatasetRow(env, org.id));
    return {
      mode: modeEnv.mode,
      pages: options.pages,
      chunks: payloads.length,
      crawl: rates(crawlSeconds),
      write_path: rates(writeSeconds),
      crawl_over_write_path: writeSeconds / crawlSeconds,
      schedule_delay_ms: delays,
    };
  } finally {
    if (!stopped) await service.stop();
    await site.close();
  }
}

/** An empty dataset of the organization, made in the database (the service is stopped by then). */
async function newDatasetRow(env: Record<string, string>, organizationId: string): Promise<string> {
  const store = await openStore(loadConfig(env).store);
  try {
    const [row] = await store.db('datasets').insert({ organization_id: organizationId, name: 'scheduled' }).returning('id');
    return row.id;
  } finally {
    await store.close();
  }
}

/** Due time to the scheduled run's event, for each sample. */
async function scheduleDelays(env: Record<string, string>, datasetId: string): Promise<number[]> {
  const config = loadConfig(env);
  const store = await openStore(config.store);
  const lexical = await createLexicalIndex(config.lexical, store);
  const engine = await createWorkflowEngine(config.workflows, {
    store,
    lexical,
    storage: await openFileStorage(config),
    outbound: config.outbound,
    crawl: config.crawl,
  });
  await engine.start();
  try {
    const delays: number[] = [];
    for (let i = 0; i < SCHEDULE_SAMPLES; i++) {
      const scheduleId = `bench-schedule-${datasetId}-${i}`;
      const due = await engine.schedule('clearDataset', {
        scheduleId,
        workflowId: `clear-dataset-${datasetId}`,
        input: { datasetId },
        everyMs: SCHEDULE_AHEAD_MS,
      });
      for (;;) {
        const events = await store.db('events').where({ dataset_id: datasetId }).orderBy('created_at').select('created_at');
        if (events.length > i) {
          delays.push(new Date(events[i].created_at).getTime() - due.getTime());
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      await engine.unschedule(scheduleId);
    }
    return delays;
  } finally {
    await engine.close();
    await lexical.close();
    await store.close();
  }
}

export function formatCrawl(mode: string, r: CrawlResult): string {
  const row = (name: string, x: CrawlResult['crawl']) => [name, fmt(x.seconds, 2), fmt(x.pages_per_s, 1), fmt(x.chunks_per_s, 1)];
  return [
    `crawl · ${mode} · a local site of ${r.pages} pages, ${r.chunks} chunks`,
    table([
      ['', 'seconds', 'pages/s', 'chunks/s'],
      row('crawl (fetch, extract, split, write)', r.crawl),
      row('write path alone (POST /api/chunk)', r.write_path),
    ]),
    `crawl speed / write path speed: ${fmt(r.crawl_over_write_path * 100, 0)} %`,
    `a schedule's run, due time to its end: ${r.schedule_delay_ms.map((ms) => fmt(ms, 0)).join(', ')} ms`,
  ].join('\n');
}
