// The metrics over HTTP: only the instance administrator reads them; they count requests by
// operation and status, time searches by type, report each engine up, and follow durable work: a
// crawl held by a slow site shows as an open workflow, and its end as a dataset event.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createCrawl, createOrganization, createOrganizationApiKey, searchChunks } from '../../sdk/src/generated/sdk.gen.js';
import { ADMIN_KEY, startTestService, type TestService } from '../support/service.js';

let service: TestService;
let orgId: string;
let ownerKey: string;
let datasetId: string;
let site: http.Server;
let siteUrl: string;
/** Requests for the page after the first (the crawl's probe) wait for this. */
let release: () => void;
const held = new Promise<void>((resolve) => {
  release = resolve;
});

/** The metrics as the administrator reads them, with a sample's value by its name and labels. */
async function metrics(method: 'POST' | 'GET' = 'POST') {
  const reply = await service.request(method, '/metrics', { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
  expect(reply.status).toBe(200);
  const text = reply.body as string;
  return {
    text,
    value(name: string, labels: Record<string, string> = {}): number {
      const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
      const line = text.split('\n').find((l) => (l.startsWith(`${name}{`) || l.startsWith(`${name} `) ? wanted.every((w) => l.includes(w)) : false));
      return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
    },
  };
}

beforeAll(async () => {
  let pageRequests = 0;
  site = http.createServer(async (req, res) => {
    if (req.url !== '/docs/') return res.writeHead(404).end();
    if (pageRequests++ > 0) await held;
    res.writeHead(200, { 'content-type': 'text/html' }).end('<html><body><h1>Crampons</h1><p>Steel points for glacier travel.</p></body></html>');
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  siteUrl = `http://localhost:${(site.address() as AddressInfo).port}/docs/`;
  service = await startTestService({ OUTBOUND_ALLOW_PRIVATE: 'localhost' });
  const client = service.client();
  orgId = (await createOrganization({ client, body: { name: 'Metrics' }, throwOnError: true })).data.id;
  ownerKey = (await createOrganizationApiKey({ client, headers: { 'SVC-Organization': orgId }, body: { name: 'owner', role: 2 }, throwOnError: true })).data
    .api_key;
  datasetId = (await service.newDataset(orgId, 'metrics')).id;
}, 120_000);

afterAll(async () => {
  release();
  await service?.stop();
  await new Promise((resolve) => site?.close(resolve));
});

describe('metrics', () => {
  it('are read by the instance administrator only', async () => {
    expect((await service.request('POST', '/metrics')).status).toBe(401);
    const owner = await service.request('POST', '/metrics', { headers: { authorization: ownerKey } });
    expect(owner.status).toBe(403);
    expect(owner.body.message).toMatch(/instance administrator/);
    const read = await metrics('GET');
    expect(read.text).toContain('# TYPE svc_http_requests_total counter');
    expect(read.text).toContain('process_cpu_seconds_total');
  });

  it('count requests by operation and status, and time searches by type', async () => {
    const before = await metrics();
    const search = (search_type: 'bm25' | 'semantic') =>
      searchChunks({ client: service.client(ownerKey), headers: { 'SVC-Dataset': datasetId }, body: { query: 'glacier', search_type } });
    await search('bm25');
    await search('bm25');
    await search('semantic');
    const bad = await service.request('POST', '/api/chunk/search', { headers: { authorization: ownerKey, 'SVC-Dataset': datasetId }, body: {} });
    expect(bad.status).toBe(400);
    const after = await metrics();
    const requests = (status: string) => ({ operation: 'search_chunks', method: 'POST', status });
    expect(after.value('svc_http_requests_total', requests('200')) - before.value('svc_http_requests_total', requests('200'))).toBe(3);
    expect(after.value('svc_http_requests_total', requests('400')) - before.value('svc_http_requests_total', requests('400'))).toBe(1);
    const timed = (type: string) =>
      after.value('svc_search_duration_seconds_count', { search_type: type }) - before.value('svc_search_duration_seconds_count', { search_type: type });
    expect([timed('bm25'), timed('semantic')]).toEqual([2, 1]);
    expect(after.value('svc_http_request_duration_seconds_count', { operation: 'search_chunks', status: '200' })).toBeGreaterThanOrEqual(3);
    expect(after.value('svc_http_requests_total', { operation: 'get_metrics', method: 'POST', status: '200' })).toBeGreaterThanOrEqual(1);
  });

  it('report every engine up', async () => {
    const read = await metrics();
    for (const engine of ['store', 'vectors', 'lexical', 'workflows']) expect(read.value('svc_engine_up', { engine }), engine).toBe(1);
  });

  it('follow durable work from open to its outcome', async () => {
    const completed = (await metrics()).value('svc_dataset_events_total', { event_type: 'crawl_completed' });
    const { response } = await createCrawl({
      client: service.client(ownerKey),
      headers: { 'SVC-Dataset': datasetId },
      body: { crawl_options: { site_url: siteUrl, ignore_sitemap: true, limit: 5 } },
    });
    expect(response.status).toBe(200);
    await vi.waitFor(async () => expect((await metrics()).value('svc_workflows_open', { workflow: 'crawl' })).toBe(1), { timeout: 30_000, interval: 200 });
    release();
    await vi.waitFor(
      async () => {
        const read = await metrics();
        expect(read.value('svc_dataset_events_total', { event_type: 'crawl_completed' })).toBe(completed + 1);
        expect(read.value('svc_workflows_open', { workflow: 'crawl' })).toBe(0);
      },
      { timeout: 60_000, interval: 250 },
    );
  }, 120_000);
});
