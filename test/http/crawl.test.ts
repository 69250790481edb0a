// Crawls through the API, against a small website served by the test on localhost (allowed by
// OUTBOUND_ALLOW_PRIVATE): a crawl created runs as the workflow crawl-<id> in either engine, stores
// each page's sections as chunks linking to the page, and ends Completed with a dataset event; run
// again after the site changed, it updates pages in place and drops the chunks of pages gone. The
// same site serves a Shopify-shaped product listing and an OpenAPI document; the YouTube stand-in
// (test/support/youtubeStandIn.ts) serves a channel to a second service configured with its URLs
// and key. Bad options, forbidden and unreachable sites, a YouTube crawl without a key or a channel,
// and other datasets' crawls are refused with nothing made.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  createCrawl,
  createOrganization,
  deleteCrawlRequest,
  getCrawlRequestsForDataset,
  getEvents,
  searchChunks,
  updateCrawlRequest,
} from '../../sdk/src/generated/sdk.gen.js';
import type { CrawlRequest, SearchChunkQueryResponseBody } from '../../sdk/src/generated/types.gen.js';
import type { DatasetRow } from '../../server/domain/datasets.js';
import { mode } from '../support/env.js';
import { startTestService, type TestService } from '../support/service.js';
import { startYoutubeStandIn, type YoutubeStandIn } from '../support/youtubeStandIn.js';

interface SitePage {
  status?: number;
  type?: string;
  body: string;
}

const site = new Map<string, SitePage>();
/** What the crawls' webhooks received. */
const hooks: unknown[] = [];
let server: http.Server;
let origin: string;
let service: TestService;
let orgId: string;
const ds = (id: string) => ({ 'SVC-Dataset': id });

function html(title: string, body: string): SitePage {
  return { body: `<!doctype html><html><head><title>${title}</title></head><body>${body}</body></html>` };
}

const PRODUCTS = [
  {
    id: 7001,
    title: 'Crampons',
    handle: 'crampons',
    body_html: '<p>Twelve steel points for glacier travel.</p>',
    tags: ['ice', 'gear'],
    variants: [
      { id: 8001, title: 'Small', price: '149.00' },
      { id: 8002, title: 'Large', price: '159.00' },
    ],
    images: [{ src: 'https://cdn.example/crampons.jpg' }],
  },
];

const OPENAPI = {
  openapi: '3.0.0',
  info: { title: 'Glacier API', version: '1' },
  paths: {
    '/glaciers': {
      get: {
        tags: ['glaciers'],
        summary: 'List glaciers',
        parameters: [{ name: 'region', in: 'query', schema: { type: 'string' } }],
        responses: { 200: { description: 'ok' } },
      },
    },
    '/glaciers/{id}': {
      delete: {
        tags: ['admin'],
        summary: 'Delete a glacier',
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
        responses: { 204: { description: 'gone' } },
      },
    },
  },
};

function resetSite(): void {
  site.clear();
  site.set(
    '/',
    html(
      'Glaciers',
      '<h1>Glaciers</h1><p>Ice that flows.</p><h2>Aletsch</h2><p>The Aletsch glacier is 20 km long.</p><a href="/rhone">Rhone</a> <a href="/private/notes">notes</a> <a href="/broken">broken</a>',
    ),
  );
  site.set('/rhone', html('Rhone', '<h1>Rhone glacier</h1><p>The Rhone glacier feeds the river Rhone.</p>'));
  site.set('/extra', html('Extra', '<h1>Moraines</h1><p>Moraines are rocks a glacier left behind.</p>'));
  site.set('/private/notes', html('Private', '<h1>Private</h1><p>Not for crawlers.</p>'));
  site.set('/broken', { status: 500, body: 'failure' });
  site.set('/openapi.json', { type: 'application/json', body: JSON.stringify(OPENAPI) });
  site.set('/robots.txt', { type: 'text/plain', body: 'User-agent: *\nDisallow: /private\n' });
  site.set('/sitemap.xml', {
    type: 'application/xml',
    body: `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>${origin}/</loc></url><url><loc>${origin}/extra</loc></url></urlset>`,
  });
}

const chunksOf = (datasetId: string) =>
  service.services.store
    .db('chunks')
    .where({ dataset_id: datasetId })
    .orderBy('tracking_id')
    .select('tracking_id', 'link', 'chunk_html', 'metadata', 'tag_set');

async function crawlsOf(datasetId: string): Promise<CrawlRequest[]> {
  return (await getCrawlRequestsForDataset({ client: service.client(), headers: ds(datasetId), throwOnError: true })).data;
}

/** Waits for the crawl to end; its record then. */
async function ended(datasetId: string, crawlId: string): Promise<CrawlRequest> {
  let found: CrawlRequest | undefined;
  await vi.waitFor(
    async () => {
      found = (await crawlsOf(datasetId)).find((c) => c.id === crawlId);
      expect(['Completed', 'Failed']).toContain(found?.status);
    },
    { timeout: 30_000, interval: 100 },
  );
  return found!;
}

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', origin);
    if (url.pathname === '/hook' && req.method === 'POST') {
      let body = '';
      req.on('data', (part) => (body += part));
      req.on('end', () => {
        hooks.push(JSON.parse(body));
        res.writeHead(204).end();
      });
      return;
    }
    // A Shopify store's public listing, paged.
    if (url.pathname === '/store/products.json') {
      const products = url.searchParams.get('page') === '1' ? PRODUCTS : [];
      return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ products }));
    }
    const page = site.get(url.pathname);
    if (!page) return void res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
    res.writeHead(page.status ?? 200, { 'content-type': page.type ?? 'text/html; charset=utf-8' }).end(page.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://localhost:${(server.address() as AddressInfo).port}`;
  resetSite();
  service = await startTestService({ OUTBOUND_ALLOW_PRIVATE: 'localhost' });
  orgId = (await createOrganization({ client: service.client(), body: { name: 'Crawls' }, throwOnError: true })).data.id;
}, 60_000);

afterAll(async () => {
  await service?.stop();
  await new Promise((resolve) => server?.close(resolve));
});

describe('a website crawl', () => {
  let dataset: DatasetRow;
  let crawl: CrawlRequest;

  it('stores each page by section, linked to its page, and ends Completed with an event and a webhook', async () => {
    dataset = await service.newDataset(orgId, 'site');
    const created = await createCrawl({
      client: service.client(),
      headers: ds(dataset.id),
      body: {
        crawl_options: { site_url: `${origin}/`, tags: ['docs'], interval: 'weekly', webhook_urls: [`${origin}/hook`], webhook_metadata: { team: 'docs' } },
      },
    });
    expect(created.response.status, JSON.stringify(created.error)).toBe(200);
    crawl = created.data!;
    expect(crawl).toMatchObject({ url: `${origin}/`, crawl_type: 'firecrawl', interval: 'weekly', dataset_id: dataset.id });
    expect(crawl.crawl_options.crawl_options).toMatchObject({ site_url: `${origin}/`, limit: 1000 });
    // Weekly: scheduled a week from now (a Temporal Schedule in full mode).
    const WEEK = 7 * 86_400_000;
    expect(Math.abs(Date.parse(crawl.next_crawl_at!) - (Date.now() + WEEK))).toBeLessThan(120_000);
    if (mode === 'embedded')
      expect(await service.services.store.db('workflow_schedules').where({ id: `crawl-schedule-${crawl.id}` })).toMatchObject([
        { every_ms: expect.anything() },
      ]);

    const done = await ended(dataset.id, crawl.id);
    expect(done).toMatchObject({ status: 'Completed', attempt_number: 1 });
    expect(done.next_crawl_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    const chunks = await chunksOf(dataset.id);
    const links = [...new Set(chunks.map((c) => c.link))].sort();
    // Robots.txt keeps /private out; /broken answered 500; /extra came from the sitemap.
    expect(links).toEqual([`${origin}/`, `${origin}/extra`, `${origin}/rhone`]);
    expect(chunks.every((c) => c.tracking_id && c.tag_set?.includes('docs'))).toBe(true);
    const aletsch = chunks.find((c) => c.chunk_html.includes('20 km long'));
    expect(aletsch!.chunk_html).toContain('Aletsch');
    expect(aletsch!.metadata).toMatchObject({ url: `${origin}/`, title: 'Glaciers' });

    const { data: events } = await getEvents({
      client: service.client(),
      headers: ds(dataset.id),
      body: { event_types: ['crawl_completed'] },
      throwOnError: true,
    });
    // Event data is a JSON text, as the reference has it.
    expect(events.events.map((e) => JSON.parse(e.event_data as string))).toEqual([
      { crawl_id: crawl.id, site_url: `${origin}/`, pages_stored: 3, pages_skipped: 2 },
    ]);
  });

  it('run again on a changed site, updates pages in place and drops the chunks of pages gone', async () => {
    const before = await chunksOf(dataset.id);
    site.set('/rhone', html('Rhone', '<h1>Rhone glacier</h1><p>The Rhone glacier is melting fast.</p>'));
    site.delete('/extra');
    const updated = await updateCrawlRequest({
      client: service.client(),
      headers: ds(dataset.id),
      body: { crawl_id: crawl.id, crawl_options: { site_url: `${origin}/`, tags: ['docs'] } },
    });
    expect(updated.response.status).toBe(200);
    expect(updated.data!.interval).toBeNull();
    if (mode === 'embedded') expect(await service.services.store.db('workflow_schedules').where({ id: `crawl-schedule-${crawl.id}` })).toEqual([]);
    const done = await ended(dataset.id, crawl.id);
    expect(done).toMatchObject({ status: 'Completed', attempt_number: 2, next_crawl_at: null });
    const after = await chunksOf(dataset.id);
    expect(after.some((c) => c.link === `${origin}/extra`)).toBe(false);
    const rhone = after.filter((c) => c.link === `${origin}/rhone`);
    expect(rhone.map((c) => c.tracking_id)).toEqual(before.filter((c) => c.link === `${origin}/rhone`).map((c) => c.tracking_id));
    expect(rhone.some((c) => c.chunk_html.includes('melting fast'))).toBe(true);
    resetSite();
  });

  it('is deleted with its chunks kept, and is another dataset’s to change only', async () => {
    const other = await service.newDataset(orgId, 'other');
    const foreign = await deleteCrawlRequest({ client: service.client(), headers: ds(other.id), path: { crawl_id: crawl.id } });
    expect(foreign.response.status).toBe(404);
    const kept = (await chunksOf(dataset.id)).length;
    const deleted = await deleteCrawlRequest({ client: service.client(), headers: ds(dataset.id), path: { crawl_id: crawl.id } });
    expect(deleted.response.status).toBe(204);
    expect(await crawlsOf(dataset.id)).toEqual([]);
    if (mode === 'embedded') expect(await service.services.store.db('workflow_schedules').where({ id: `crawl-schedule-${crawl.id}` })).toEqual([]);
    expect(await chunksOf(dataset.id)).toHaveLength(kept);
    const again = await updateCrawlRequest({
      client: service.client(),
      headers: ds(dataset.id),
      body: { crawl_id: crawl.id, crawl_options: { site_url: `${origin}/` } },
    });
    expect(again.response.status).toBe(404);
  });
});

describe('other sources', () => {
  it('a Shopify store: a chunk per variant with its price, tags and images, linked to the product', async () => {
    const dataset = await service.newDataset(orgId, 'store');
    const created = await createCrawl({
      client: service.client(),
      headers: ds(dataset.id),
      body: { crawl_options: { site_url: `${origin}/store`, scrape_options: { type: 'shopify' } } },
    });
    expect(created.response.status, JSON.stringify(created.error)).toBe(200);
    expect(created.data!.crawl_type).toBe('shopify');
    expect(await ended(dataset.id, created.data!.id)).toMatchObject({ status: 'Completed' });
    const chunks = await service.services.store
      .db('chunks')
      .where({ dataset_id: dataset.id })
      .orderBy('num_value')
      .select('num_value', 'link', 'tag_set', 'image_urls', 'chunk_html');
    expect(chunks.map((c) => [c.num_value, c.link])).toEqual([
      [149, `${origin}/store/products/crampons`],
      [159, `${origin}/store/products/crampons`],
    ]);
    expect(chunks[0].tag_set).toEqual(expect.arrayContaining(['ice', 'gear']));
    expect(chunks[0].image_urls).toContain('https://cdn.example/crampons.jpg');
    expect(chunks[0].chunk_html).toContain('Twelve steel points');
  });

  it('an OpenAPI document: a chunk per operation, by tag, linked to the documentation', async () => {
    const dataset = await service.newDataset(orgId, 'api docs');
    const created = await createCrawl({
      client: service.client(),
      headers: ds(dataset.id),
      body: {
        crawl_options: { site_url: `${origin}/`, scrape_options: { type: 'openapi', openapi_schema_url: `${origin}/openapi.json`, openapi_tag: 'glaciers' } },
      },
    });
    expect(created.response.status, JSON.stringify(created.error)).toBe(200);
    expect(created.data!.crawl_type).toBe('openapi');
    expect(await ended(dataset.id, created.data!.id)).toMatchObject({ status: 'Completed' });
    const chunks = await service.services.store.db('chunks').where({ dataset_id: dataset.id }).select('link', 'tag_set', 'chunk_html');
    // Only the operations tagged `glaciers`.
    expect(chunks).toHaveLength(1);
    expect(chunks[0].chunk_html).toMatch(/GET/);
    expect(chunks[0].chunk_html).toContain('/glaciers');
    expect(chunks[0].chunk_html).toContain('region');
    expect(chunks[0].link.startsWith(`${origin}/`)).toBe(true);
    expect(chunks[0].tag_set).toContain('glaciers');
  });

  it('a source that yields nothing fails the run, keeping what the run before stored', async () => {
    const dataset = await service.newDataset(orgId, 'broken docs');
    const created = await createCrawl({
      client: service.client(),
      headers: ds(dataset.id),
      body: { crawl_options: { site_url: `${origin}/`, scrape_options: { type: 'openapi', openapi_schema_url: `${origin}/broken`, openapi_tag: 'x' } } },
    });
    expect(created.response.status).toBe(200);
    const done = await ended(dataset.id, created.data!.id);
    expect(done.status).toBe('Failed');
    const { data: events } = await getEvents({
      client: service.client(),
      headers: ds(dataset.id),
      body: { event_types: ['crawl_failed'] },
      throwOnError: true,
    });
    expect(JSON.parse(events.events[0].event_data as string).reason).toMatch(/^nothing could be stored: /);
  });
});

describe('bad crawl options', () => {
  it('are refused with a message naming the problem, and nothing is created', async () => {
    const dataset = await service.newDataset(orgId, 'refusals');
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    for (const [options, message] of [
      [{}, /site_url is required/],
      [{ site_url: 'ftp://localhost/' }, /ftp: is not http or https/],
      [{ site_url: 'not a url' }, /is not a URL/],
      [{ site_url: `${origin}/`, limit: 0 }, /limit: 0 is not a positive number/],
      [{ site_url: `${origin}/`, include_paths: ['('] }, /include_paths: \( is not a regular expression/],
      [{ site_url: 'https://www.youtube.com/@GlacierTalks', scrape_options: { type: 'youtube' } }, /needs YOUTUBE_API_KEY: this instance has none/],
      [{ site_url: `${origin}/`, webhook_urls: ['ftp://example.com/hook'] }, /webhook_urls\[0\]: ftp: is not http or https/],
      [
        { site_url: `${origin}/`, scrape_options: { type: 'openapi', openapi_schema_url: 'ftp://x/', openapi_tag: 'a' } },
        /openapi_schema_url: ftp: is not http/,
      ],
      [{ site_url: `${origin}/`, scrape_options: { type: 'shopify', tag_regexes: ['['] } }, /tag_regexes: \[ is not a regular expression/],
      [{ site_url: `http://localhost:${closedPort}/` }, /could not be reached/],
      [{ site_url: `${origin.replace('localhost', '127.0.0.1')}/` }, /is refused.*OUTBOUND_ALLOW_PRIVATE/],
    ] as const) {
      const reply = await createCrawl({ client: service.client(), headers: ds(dataset.id), body: { crawl_options: options as never } });
      expect(reply.response.status, JSON.stringify(options)).toBe(400);
      expect(reply.error!.message).toMatch(message);
    }
    expect(await crawlsOf(dataset.id)).toEqual([]);
  });
});

describe('a YouTube crawl', () => {
  const KEY = 'AIzaSyHttpTestKey000000000000000000000';
  const CHANNEL = 'https://www.youtube.com/@GlacierTalks';
  let youtube: YoutubeStandIn;
  let withKey: TestService;
  let org: string;

  beforeAll(async () => {
    youtube = await startYoutubeStandIn(KEY, [
      {
        id: 'UCstandInChannel00000001',
        handle: '@GlacierTalks',
        title: 'Glacier Talks',
        videos: [
          {
            id: 'vidCalving1',
            title: 'Calving at Aletsch',
            description: 'Ice falls into the lake',
            publishedAt: '2024-06-01T08:00:00Z',
            captions: [
              { start: 0, dur: 5, text: 'welcome back to the channel' },
              { start: 12.7, dur: 5, text: 'seracs topple when the glacier calves into the proglacial lake' },
            ],
          },
          { id: 'vidNoCaps02', title: 'Drone footage', captions: 'off' },
          { id: 'vidBroken03', title: 'Broken captions', captions: 'fail' },
          { id: 'vidMoulin04', title: 'Inside a moulin', captions: [{ start: 3.2, dur: 4, text: 'meltwater drills a moulin through the ice' }] },
        ],
      },
    ]);
    // The operator's own endpoints: reached on loopback without OUTBOUND_ALLOW_PRIVATE.
    withKey = await startTestService({
      YOUTUBE_API_KEY: KEY,
      YOUTUBE_API_BASE_URL: youtube.apiBaseUrl,
      YOUTUBE_TRANSCRIPT_BASE_URL: youtube.transcriptBaseUrl,
    });
    org = (await createOrganization({ client: withKey.client(), body: { name: 'Videos' }, throwOnError: true })).data.id;
  }, 60_000);

  afterAll(async () => {
    await withKey?.stop();
    await youtube?.close();
  });

  const videoChunks = (datasetId: string) =>
    withKey.services.store
      .db('chunks')
      .where({ dataset_id: datasetId })
      .orderBy('link')
      .select('tracking_id', 'link', 'chunk_html', 'metadata', 'tag_set', 'image_urls');

  it('stores a chunk per transcript group, linked to the video at its second, skipping videos without a transcript', async () => {
    const dataset = await withKey.newDataset(org, 'videos');
    const crawlsNow = async () => (await getCrawlRequestsForDataset({ client: withKey.client(), headers: ds(dataset.id), throwOnError: true })).data;
    const created = await createCrawl({
      client: withKey.client(),
      headers: ds(dataset.id),
      body: { crawl_options: { site_url: CHANNEL, tags: ['video'], scrape_options: { type: 'youtube' } } },
    });
    expect(created.response.status, JSON.stringify(created.error)).toBe(200);
    const crawl = created.data!;
    expect(crawl).toMatchObject({ url: CHANNEL, crawl_type: 'youtube' });
    expect(crawl.crawl_options.crawl_options).toMatchObject({ site_url: CHANNEL, limit: 1000, scrape_options: { type: 'youtube' } });

    let done: CrawlRequest | undefined;
    await vi.waitFor(
      async () => {
        done = (await crawlsNow()).find((c) => c.id === crawl.id);
        expect(['Completed', 'Failed']).toContain(done?.status);
      },
      { timeout: 30_000, interval: 100 },
    );
    expect(done!.status).toBe('Completed');
    const chunks = await videoChunks(dataset.id);
    expect(chunks.map((c) => c.link)).toEqual(['https://www.youtube.com/watch?v=vidCalving1&t=0', 'https://www.youtube.com/watch?v=vidMoulin04&t=3']);
    expect(chunks[0].chunk_html).toBe(
      '<h1>Calving at Aletsch</h1><p>welcome back to the channel seracs topple when the glacier calves into the proglacial lake</p>',
    );
    expect(chunks[0].metadata).toMatchObject({
      url: 'https://www.youtube.com/watch?v=vidCalving1',
      title: 'Calving at Aletsch',
      description: 'Ice falls into the lake',
      yt_preview_src: 'https://i.ytimg.com/vi/vidCalving1/hqdefault.jpg',
    });
    expect(chunks[0].tag_set).toContain('video');
    expect(chunks[0].image_urls).toEqual(['https://i.ytimg.com/vi/vidCalving1/hqdefault.jpg']);

    // The videos without a transcript are counted in the run's event, which still completed.
    const { data: events } = await getEvents({
      client: withKey.client(),
      headers: ds(dataset.id),
      body: { event_types: ['crawl_completed'] },
      throwOnError: true,
    });
    expect(events.events.map((e) => JSON.parse(e.event_data as string))).toEqual([
      { crawl_id: crawl.id, site_url: CHANNEL, pages_stored: 2, pages_skipped: 2 },
    ]);

    const { data: found } = await searchChunks({
      client: withKey.client(),
      headers: ds(dataset.id),
      body: { query: 'seracs calving proglacial lake', search_type: 'fulltext' },
      throwOnError: true,
    });
    const top = (found as SearchChunkQueryResponseBody).score_chunks[0].metadata[0];
    expect(top).toMatchObject({ link: 'https://www.youtube.com/watch?v=vidCalving1&t=0', tracking_id: chunks[0].tracking_id });

    // The key went to the API only; no request carried it in its URL.
    expect(youtube.requests.filter((r) => r.headerKey === KEY).every((r) => r.path.startsWith('/youtube/v3/'))).toBe(true);
    expect(youtube.requests.some((r) => r.path.includes(KEY))).toBe(false);

    // Run again after a video got new captions: its chunk is updated in place, none is added.
    youtube.channels[0].videos[3].captions = [{ start: 3.2, dur: 4, text: 'meltwater drills a deep moulin' }];
    const again = await updateCrawlRequest({
      client: withKey.client(),
      headers: ds(dataset.id),
      body: { crawl_id: crawl.id, crawl_options: { site_url: CHANNEL, tags: ['video'], scrape_options: { type: 'youtube' } } },
    });
    expect(again.response.status, JSON.stringify(again.error)).toBe(200);
    await vi.waitFor(async () => expect((await crawlsNow()).find((c) => c.id === crawl.id)).toMatchObject({ status: 'Completed', attempt_number: 2 }), {
      timeout: 30_000,
      interval: 100,
    });
    const after = await videoChunks(dataset.id);
    expect(after.map((c) => c.tracking_id)).toEqual(chunks.map((c) => c.tracking_id));
    expect(after[1].chunk_html).toContain('a deep moulin');
  });

  it('refuses a URL that is not a channel, and a channel YouTube does not know, with nothing made', async () => {
    const dataset = await withKey.newDataset(org, 'refused videos');
    for (const [site_url, message] of [
      ['https://www.youtube.com/watch?v=vidCalving1', /site_url: .* is not a YouTube channel/],
      [`${origin}/`, /site_url: .* is not a YouTube channel/],
      ['https://www.youtube.com/@NoSuchChannel', /YouTube knows no channel at https:\/\/www\.youtube\.com\/@NoSuchChannel/],
      [undefined, /site_url is required/],
    ] as const) {
      const reply = await createCrawl({
        client: withKey.client(),
        headers: ds(dataset.id),
        body: { crawl_options: { site_url, scrape_options: { type: 'youtube' } } },
      });
      expect(reply.response.status, String(site_url)).toBe(400);
      expect(reply.error!.message).toMatch(message);
    }
    const { data } = await getCrawlRequestsForDataset({ client: withKey.client(), headers: ds(dataset.id), throwOnError: true });
    expect(data).toEqual([]);
  });
});
