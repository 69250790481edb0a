// Crawls through the API, against a small website served by the test on localhost (allowed by
// OUTBOUND_ALLOW_PRIVATE): a crawl created runs as the workflow crawl-<id> in either engine, stores
// each page's sections as chunks linking to the page, and ends Completed with a dataset event; run
// again after the site changed, it updates pages in place and drops the chunks of pages gone. The
// same site serves a Shopify-shaped product listing and an OpenAPI document. Bad options, forbidden
// and unreachable sites, and other datasets' crawls are refused with nothing made.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  createCrawl,
  createOrganization,
  deleteCrawlRequest,
  getCrawlRequestsForDataset,
  getEvents,
  updateCrawlRequest,
} from '../../generated/client/sdk.gen.js';
import type { CrawlRequest } from '../../generated/client/types.gen.js';
import type { DatasetRow } from '../../server/domain/datasets.js';
import { mode } from '../support/env.js';
import { startTestService, type TestService } from '../support/service.js';

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
      [{ site_url: `${origin}/`, scrape_options: { type: 'youtube' } }, /youtube crawls are not offered yet/],
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
