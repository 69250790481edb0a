// Pagefind indexes over HTTP: PUT starts a build as durable work, GET answers where its files are,
// and Pagefind's own client (the pagefind.js the build wrote, run here in Node) loads the index from
// there and finds the chunks, narrowed by their tags. A rebuild replaces the index and its files.
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createChunk, createOrganization, getEvents, updateDataset } from '../../sdk/src/generated/sdk.gen.js';
import { ADMIN_KEY, startTestService, type TestService } from '../support/service.js';
import { waitFor } from '../support/wait.js';

let service: TestService;
let orgId: string;
let datasetId: string;
const ds = () => ({ authorization: ADMIN_KEY, 'SVC-Dataset': datasetId });

async function addChunk(body: Record<string, unknown>): Promise<string> {
  const { data, response, error } = await createChunk({ client: service.client(), headers: { 'SVC-Dataset': datasetId }, body: body as any });
  expect(response.status, JSON.stringify(error)).toBe(200);
  return (data as any).chunk_metadata.id;
}

/** Builds the index and waits until GET answers a URL other than `previous`. */
async function build(previous?: string): Promise<string> {
  const put = await service.request('PUT', '/api/dataset/pagefind', { headers: ds() });
  expect(put.status, JSON.stringify(put.body)).toBe(204);
  return waitFor(async () => {
    const reply = await service.request('GET', '/api/dataset/pagefind', { headers: ds() });
    return reply.status === 200 && reply.body.url !== previous ? (reply.body.url as string) : undefined;
  }, 60_000);
}

interface Pagefind {
  options(o: { basePath: string }): Promise<void>;
  search(term: string | null, o?: { filters?: Record<string, string> }): Promise<{ results: { data(): Promise<any> }[] }>;
}

/** Pagefind's client as the index serves it, loaded in this process. */
async function loadPagefind(url: string): Promise<Pagefind> {
  const response = await fetch(`${url}/pagefind.js`);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/javascript/);
  expect(response.headers.get('access-control-allow-origin')).toBe('*');
  const file = path.join(await mkdtemp(path.join(os.tmpdir(), 'pagefind-client-')), 'pagefind.mjs');
  await writeFile(file, await response.text());
  const pagefind = (await import(pathToFileURL(file).href)) as Pagefind;
  await pagefind.options({ basePath: `${url}/` });
  return pagefind;
}

async function found(pagefind: Pagefind, term: string, filters?: Record<string, string>): Promise<any[]> {
  const { results } = await pagefind.search(term, { filters });
  return Promise.all(results.map((r) => r.data()));
}

beforeAll(async () => {
  service = await startTestService();
  orgId = (await createOrganization({ client: service.client(), body: { name: 'Acme' } })).data!.id;
  datasetId = (await service.newDataset(orgId, 'Glaciers')).id;
});
afterAll(async () => {
  await service?.stop();
});

describe('Pagefind indexes', () => {
  it('are refused while the dataset does not enable them', async () => {
    for (const method of ['PUT', 'GET']) {
      const reply = await service.request(method, '/api/dataset/pagefind', { headers: ds() });
      expect(reply.status).toBe(400);
      expect(reply.body.message).toMatch(/PAGEFIND_ENABLED/);
    }
    const { response } = await updateDataset({
      client: service.client(),
      headers: { 'SVC-Organization': orgId },
      body: { dataset_id: datasetId, server_configuration: { PAGEFIND_ENABLED: true } },
    });
    expect(response.status).toBe(200);
    const none = await service.request('GET', '/api/dataset/pagefind', { headers: ds() });
    expect(none.status).toBe(404);
    expect(none.body.message).toMatch(/no Pagefind index yet/);
  });

  let firstUrl: string;
  let glacierId: string;

  it("are built as durable work and loaded by Pagefind's own client, which finds the chunks", async () => {
    glacierId = await addChunk({
      chunk_html: '<p>The Aletsch glacier is the longest glacier of the Alps.</p>',
      tag_set: ['ice', 'alps'],
      link: 'https://example.com/aletsch',
      tracking_id: 'aletsch',
      metadata: { title: 'Aletsch', length_km: 20 },
    });
    const desertId = await addChunk({ chunk_html: '<p>The Sahara is a hot desert, the largest of its kind.</p>', tag_set: ['sand'] });
    firstUrl = await build();
    expect(firstUrl).toMatch(new RegExp(`^${service.url}/pagefind/${datasetId}/[0-9a-f-]{36}$`));

    const pagefind = await loadPagefind(firstUrl);
    const glacier = await found(pagefind, 'glacier');
    expect(glacier).toHaveLength(1);
    expect(glacier[0]).toMatchObject({
      url: 'https://example.com/aletsch',
      meta: { chunk_id: glacierId, tracking_id: 'aletsch', title: 'Aletsch', length_km: '20', tag_set: 'ice, alps' },
      filters: { tag_set: ['ice', 'alps'] },
    });
    expect(glacier[0].excerpt).toContain('<mark>glacier</mark>');
    const desert = await found(pagefind, 'desert');
    // A chunk without a link leads to its API path, which the client reads against the index's host.
    expect(desert.map((d) => d.url)).toEqual([`${service.url}/api/chunk/${desertId}`]);
    expect(await found(pagefind, 'the', { tag_set: 'sand' })).toHaveLength(1);
    expect(await found(pagefind, 'glacier', { tag_set: 'sand' })).toHaveLength(0);

    const { data: events } = await getEvents({ client: service.client(), headers: { 'SVC-Dataset': datasetId }, body: {} });
    const types = events!.events.map((e) => e.event_type);
    expect(types).toContain('pagefind_indexing_started');
    const finished = events!.events.find((e) => e.event_type === 'pagefind_indexing_finished');
    expect(JSON.parse(String(finished?.event_data))).toMatchObject({ status: 'ready', total_records: 2 });
  });

  it('are replaced by the next build, whose files are the only ones served', async () => {
    await addChunk({ chunk_html: '<p>The Rhone glacier feeds Lake Geneva.</p>', tag_set: ['ice'] });
    const url = await build(firstUrl);
    expect(url).not.toBe(firstUrl);
    const pagefind = await loadPagefind(url);
    expect(await found(pagefind, 'glacier')).toHaveLength(2);
    const old = await fetch(`${firstUrl}/pagefind.js`);
    expect(old.status).toBe(404);
    expect((await old.json()).message).toMatch(/replaced/);
    const builds = await service.services.store.db('pagefind_indexes').where({ dataset_id: datasetId }).orderBy('created_at');
    expect(builds.map((b) => b.status)).toEqual(['replaced', 'ready']);
  });

  it('serve only the files of an index', async () => {
    const { body } = await service.request('GET', '/api/dataset/pagefind', { headers: ds() });
    const url = body.url as string;
    expect((await fetch(`${url}/pagefind-entry.json`)).status).toBe(200);
    for (const bad of [`${url}/nothing.js`, `${service.url}/pagefind/${datasetId}/00000000-0000-4000-8000-000000000000/pagefind.js`]) {
      expect((await fetch(bad)).status).toBe(404);
    }
  });
});
