// The public page over HTTP: served only for public datasets, with the page options in it, escaped,
// and holding one key that is read-only, limited to its dataset and to the page's routes, made once,
// and taken away when the dataset stops being public or is deleted. (public-page-browser.test.ts
// drives the page itself in a browser.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createChunk, createOrganization, getOrganizationApiKeys, updateDataset } from '../../sdk/src/generated/sdk.gen.js';
import { PUBLIC_PAGE_ROUTES, publicPageKeyName } from '../../server/domain/publicPage/keys.js';
import type { PageSettings } from '../../server/publicPage/settings.js';
import { ADMIN_KEY, startTestService, type TestService } from '../support/service.js';

let service: TestService;
let orgId: string;
let datasetId: string;
let otherDatasetId: string;
const org = () => ({ 'SVC-Organization': orgId });

async function setPublic(id: string, publicDataset: Record<string, unknown>) {
  const { response, error } = await updateDataset({
    client: service.client(),
    headers: org(),
    body: { dataset_id: id, server_configuration: { PUBLIC_DATASET: publicDataset as any } },
  });
  expect(response.status, JSON.stringify(error)).toBe(200);
}

/** The page, and the settings its script starts from. */
async function page(id: string): Promise<{ html: string; settings: PageSettings; status: number; headers: Headers }> {
  const response = await fetch(`${service.url}/api/public_page/${encodeURIComponent(id)}`);
  const html = await response.text();
  const json = html.match(/<script type="application\/json" id="page-settings">(.*?)<\/script>/s)?.[1];
  return { html, settings: json ? JSON.parse(json) : null, status: response.status, headers: response.headers };
}

const searchWith = (key: string, dataset = datasetId) =>
  service.request('POST', '/api/chunk/search', {
    headers: { authorization: key, 'SVC-Dataset': dataset },
    body: { query: 'glacier', search_type: 'fulltext' },
  });

beforeAll(async () => {
  service = await startTestService();
  orgId = (await createOrganization({ client: service.client(), body: { name: 'Acme' } })).data!.id;
  datasetId = (await service.newDataset(orgId, 'Glaciers')).id;
  otherDatasetId = (await service.newDataset(orgId, 'Private')).id;
  await service.services.store.db('datasets').where({ id: datasetId }).update({ tracking_id: 'glaciers' });
  const { response } = await createChunk({
    client: service.client(),
    headers: { 'SVC-Dataset': datasetId },
    body: { chunk_html: '<p>The Aletsch glacier is the longest glacier of the Alps.</p>', tag_set: ['ice'] },
  });
  expect(response.status).toBe(200);
});
afterAll(async () => {
  await service?.stop();
});

describe('GET /api/public_page/{dataset_id}', () => {
  it('answers 404 for a dataset that is not public, and for an unknown one', async () => {
    for (const id of [datasetId, 'glaciers', '00000000-0000-4000-8000-000000000000', 'nope']) {
      const reply = await service.request('GET', `/api/public_page/${id}`);
      expect(reply.status).toBe(404);
      expect(reply.body.message).toMatch(/not found, or not public/);
    }
  });

  it('serves the page of a public dataset, by id or tracking id, with its options', async () => {
    await setPublic(datasetId, {
      enabled: true,
      extra_params: { brandName: 'Ice <Facts>', brandColor: '#7c3aed', placeholder: 'Ask about ice', tags: [{ tag: 'ice', label: 'Ice' }], chat: false },
    });
    const reply = await service.request('GET', `/api/public_page/${datasetId}`);
    expect(reply.status).toBe(200);
    const { html, settings, headers } = await page('glaciers');
    expect(headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(headers.get('content-security-policy')).toMatch(/script-src 'sha256-/);
    expect(html).toContain('<title>Ice &#60;Facts&#62;</title>');
    expect(html).not.toContain('<Facts>');
    expect(settings).toMatchObject({
      datasetId,
      brandName: 'Ice <Facts>',
      brandColor: '#7c3aed',
      placeholder: 'Ask about ice',
      tags: [{ tag: 'ice', label: 'Ice', selected: false }],
      chat: false,
    });
  });

  it('keeps markup in the options from closing its script element', async () => {
    await setPublic(datasetId, { enabled: true, extra_params: { brandName: '</script><script>alert(1)</script>' } });
    const { html, settings } = await page(datasetId);
    expect(html.match(/<script/g)).toHaveLength(2);
    expect(settings.brandName).toBe('</script><script>alert(1)</script>');
  });

  it('holds one read-only key, limited to the dataset and to the routes the page calls', async () => {
    const first = (await page(datasetId)).settings.apiKey;
    expect((await page(datasetId)).settings.apiKey).toBe(first);
    const { data: keys } = await getOrganizationApiKeys({ client: service.client(), headers: org() });
    const listed = keys!.filter((k) => k.name === publicPageKeyName(datasetId));
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({ role: 0, dataset_ids: [datasetId] });
    const row = await service.services.store.db('api_keys').where({ id: listed[0].id }).first();
    expect([...row.scopes].sort()).toEqual([...PUBLIC_PAGE_ROUTES].sort());

    const search = await searchWith(first);
    expect(search.status).toBe(200);
    expect(search.body.score_chunks).toHaveLength(1);
    expect((await searchWith(first, otherDatasetId)).status).toBe(403);
    const write = await service.request('POST', '/api/chunk', {
      headers: { authorization: first, 'SVC-Dataset': datasetId },
      body: { chunk_html: 'intruder' },
    });
    expect(write.status).toBe(403);
    const read = await service.request('GET', `/api/dataset/${datasetId}`, { headers: { authorization: first, 'SVC-Dataset': datasetId } });
    expect(read.status).toBe(403);
    expect(read.body.message).toMatch(/scopes do not include/);
  });

  it('makes a new key when its key was deleted by hand', async () => {
    const before = (await page(datasetId)).settings.apiKey;
    const { data: keys } = await getOrganizationApiKeys({ client: service.client(), headers: org() });
    const id = keys!.find((k) => k.name === publicPageKeyName(datasetId))!.id;
    const deleted = await service.request('DELETE', `/api/organization/api_key/${id}`, { headers: { authorization: ADMIN_KEY, ...org() } });
    expect(deleted.status).toBe(204);
    const after = (await page(datasetId)).settings.apiKey;
    expect(after).not.toBe(before);
    expect((await searchWith(before)).status).toBe(401);
    expect((await searchWith(after)).status).toBe(200);
  });

  it('takes the page and its key away when the dataset is no longer public', async () => {
    const key = (await page(datasetId)).settings.apiKey;
    await setPublic(datasetId, { enabled: false });
    const reply = await service.request('GET', `/api/public_page/${datasetId}`);
    expect(reply.status).toBe(404);
    expect((await searchWith(key)).status).toBe(401);
    const { data: keys } = await getOrganizationApiKeys({ client: service.client(), headers: org() });
    expect(keys!.some((k) => k.name === publicPageKeyName(datasetId))).toBe(false);
  });

  it('takes the key away with the dataset', async () => {
    await setPublic(otherDatasetId, { enabled: true });
    const key = (await page(otherDatasetId)).settings.apiKey;
    const deleted = await service.request('DELETE', `/api/dataset/${otherDatasetId}`, { headers: { authorization: ADMIN_KEY, 'SVC-Dataset': otherDatasetId } });
    expect(deleted.status).toBe(204);
    expect((await service.request('GET', `/api/public_page/${otherDatasetId}`)).status).toBe(404);
    const db = service.services.store.db;
    for (let i = 0; i < 200 && (await db('datasets').where({ id: otherDatasetId }).first()); i++) await new Promise((r) => setTimeout(r, 50));
    expect(await db('datasets').where({ id: otherDatasetId }).first()).toBeUndefined();
    expect(
      await db('api_keys')
        .where({ name: publicPageKeyName(otherDatasetId) })
        .first(),
    ).toBeUndefined();
    expect((await searchWith(key, otherDatasetId)).status).toBe(401);
  });
});
