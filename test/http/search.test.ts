// Search over HTTP: each search type, both response versions, filters, pages, thresholds, slim and
// content-only records, highlights, analytics records, API-key defaults, count and autocomplete.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  autocomplete,
  countChunks,
  createChunk,
  createDataset,
  createOrganization,
  createOrganizationApiKey,
  searchChunks,
} from '../../sdk/src/generated/sdk.gen.js';
import type { SearchChunkQueryResponseBody, SearchResponseBody } from '../../sdk/src/generated/types.gen.js';
import { ALLOW_LOCAL_STAND_INS } from '../support/outbound.js';
import { ADMIN_KEY, startTestService, type TestService } from '../support/service.js';

let service: TestService;
let orgId: string;
let datasetId: string;
let headers: { 'SVC-Dataset': string };
const v2 = () => ({ ...headers, 'X-API-Version': 'V2' as const });

const corpus = [
  { tracking_id: 'refunds', chunk_html: '<p>Refunds are paid to the original card within five working days.</p>', tag_set: ['billing'], num_value: 1 },
  { tracking_id: 'shipping', chunk_html: '<p>Parcels ship from our warehouse in Rotterdam within two days.</p>', tag_set: ['logistics'], num_value: 2 },
  {
    tracking_id: 'returns',
    chunk_html: '<p>Returns are free: print the label and drop the parcel at any post office.</p>',
    tag_set: ['logistics', 'billing'],
    num_value: 3,
  },
  { tracking_id: 'warranty', chunk_html: '<p>Every kettle carries a two year warranty against defects.</p>', tag_set: ['product'], num_value: 4 },
  { tracking_id: 'giftcards', chunk_html: '<p>Gift cards never expire and can be spent online or in store.</p>', tag_set: ['billing'], num_value: 5 },
  { tracking_id: 'kettle', chunk_html: '<p>The kettle boils a litre of water in ninety seconds.</p>', tag_set: ['product'], num_value: 6 },
];

async function search(body: Record<string, unknown>, extraHeaders: Record<string, string> = {}, key = ADMIN_KEY) {
  return service.request('POST', '/api/chunk/search', { headers: { authorization: key, ...headers, ...extraHeaders }, body });
}

beforeAll(async () => {
  service = await startTestService(ALLOW_LOCAL_STAND_INS);
  orgId = (await createOrganization({ client: service.client(), body: { name: 'Search' } })).data!.id;
  datasetId = (await createDataset({ client: service.client(), headers: { 'SVC-Organization': orgId }, body: { dataset_name: 'help' } })).data!.id;
  headers = { 'SVC-Dataset': datasetId };
  const created = await createChunk({ client: service.client(), headers, body: corpus });
  expect(created.response.status).toBe(200);
});
afterAll(async () => {
  await service?.stop();
});

describe.each(['semantic', 'fulltext', 'hybrid', 'bm25'] as const)('search_type %s', (searchType) => {
  it('finds the chunk that answers the query, in the V1 shape by default', async () => {
    const { data, response } = await searchChunks({ client: service.client(), headers, body: { query: 'refunds original card', search_type: searchType } });
    expect(response.status).toBe(200);
    const body = data as SearchChunkQueryResponseBody;
    expect(body.score_chunks[0].metadata[0]).toMatchObject({ tracking_id: 'refunds', tag_set: 'billing' });
  });

  it('answers in the V2 shape with a search id when asked', async () => {
    const { data } = await searchChunks({ client: service.client(), headers: v2(), body: { query: 'kettle warranty defects', search_type: searchType } });
    const body = data as SearchResponseBody;
    expect(body.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(body.chunks[0].chunk).toMatchObject({ tracking_id: 'warranty', tag_set: ['product'] });
    await service.services.deferred.flush();
    const recorded = await service.services.store.db('search_queries').where({ id: body.id }).first();
    expect(recorded).toMatchObject({ dataset_id: datasetId, search_type: searchType, query: 'kettle warranty defects' });
  });

  it('applies filters exactly', async () => {
    const { data } = await searchChunks({
      client: service.client(),
      headers: v2(),
      body: { query: 'parcel', search_type: searchType, filters: { must: [{ field: 'tag_set', match_any: ['billing'] }] }, page_size: 10 },
    });
    const ids = (data as SearchResponseBody).chunks.map((c) => c.chunk.tracking_id);
    expect(ids.length).toBeGreaterThan(0);
    for (const id of ids) expect(['refunds', 'returns', 'giftcards']).toContain(id);
  });
});

describe('pages and records', () => {
  it('pages without overlap and counts total pages when asked', async () => {
    const first = (
      await searchChunks({
        client: service.client(),
        headers: v2(),
        body: { query: 'water parcel card kettle', search_type: 'semantic', page_size: 2, page: 1, get_total_pages: true },
      })
    ).data as SearchResponseBody;
    const second = (
      await searchChunks({
        client: service.client(),
        headers: v2(),
        body: { query: 'water parcel card kettle', search_type: 'semantic', page_size: 2, page: 2 },
      })
    ).data as SearchResponseBody;
    expect(first.chunks).toHaveLength(2);
    expect(first.total_pages).toBe(3);
    expect(second.total_pages).toBe(0);
    const ids = [...first.chunks, ...second.chunks].map((c) => c.chunk.id);
    expect(new Set(ids).size).toBe(4);
  });

  it('drops results under the score threshold', async () => {
    const all = (await searchChunks({ client: service.client(), headers: v2(), body: { query: 'gift cards expire', search_type: 'semantic', page_size: 6 } }))
      .data as SearchResponseBody;
    const threshold = all.chunks[0].score - 1e-6;
    const strict = (
      await searchChunks({
        client: service.client(),
        headers: v2(),
        body: { query: 'gift cards expire', search_type: 'semantic', page_size: 6, score_threshold: threshold },
      })
    ).data as SearchResponseBody;
    expect(strict.chunks.map((c) => c.chunk.tracking_id)).toEqual(['giftcards']);
  });

  it('gives slim records without content, and content-only records', async () => {
    const slim = (await searchChunks({ client: service.client(), headers: v2(), body: { query: 'kettle', search_type: 'fulltext', slim_chunks: true } }))
      .data as SearchResponseBody;
    expect(slim.chunks[0].chunk).not.toHaveProperty('chunk_html');
    expect(slim.chunks[0].chunk).toHaveProperty('tracking_id');
    const content = (await searchChunks({ client: service.client(), headers: v2(), body: { query: 'kettle', search_type: 'fulltext', content_only: true } }))
      .data as SearchResponseBody;
    expect(Object.keys(content.chunks[0].chunk).sort()).toEqual(['chunk_html', 'id', 'image_urls', 'num_value', 'time_stamp', 'tracking_id', 'weight']);
  });

  it('marks the matching words in highlights', async () => {
    const { data } = await searchChunks({ client: service.client(), headers: v2(), body: { query: 'warehouse', search_type: 'fulltext' } });
    const hit = (data as SearchResponseBody).chunks[0];
    expect(hit.highlights!.join(' ')).toContain('<mark><b>warehouse</b></mark>');
    const off = await searchChunks({
      client: service.client(),
      headers: v2(),
      body: { query: 'warehouse', search_type: 'fulltext', highlight_options: { highlight_results: false } },
    });
    expect((off.data as SearchResponseBody).chunks[0].highlights ?? []).toEqual([]);
  });
});

describe('API key default parameters', () => {
  it("forces the key's filters and search type on every search", async () => {
    const { data } = await createOrganizationApiKey({
      client: service.client(),
      headers: { 'SVC-Organization': orgId },
      body: { name: 'new products', role: 0, default_params: { search_type: 'fulltext', filters: { must: [{ field: 'num_value', range: { gte: 6 } }] } } },
    });
    // Without the key's filter, both kettle chunks match.
    const open = await search({ query: 'kettle', search_type: 'fulltext', page_size: 6 }, { 'X-API-Version': 'V2' });
    expect(open.body.chunks).toHaveLength(2);
    const reply = await search({ query: 'kettle', search_type: 'semantic', page_size: 6, filters: null }, { 'X-API-Version': 'V2' }, data!.api_key);
    expect(reply.status).toBe(200);
    const ids = (reply.body as SearchResponseBody).chunks.map((c) => c.chunk.tracking_id);
    expect(ids).toEqual(['kettle']);
    await service.services.deferred.flush();
    const recorded = await service.services.store.db('search_queries').where({ id: reply.body.id }).first();
    expect(recorded.search_type).toBe('fulltext');
  });
});

describe('count and autocomplete', () => {
  it('counts the matching chunks', async () => {
    const { data } = await countChunks({ client: service.client(), headers, body: { query: 'parcel', search_type: 'fulltext' } });
    expect(data!.count).toBe(2);
    const limited = await countChunks({ client: service.client(), headers, body: { query: 'parcel', search_type: 'fulltext', limit: 1 } });
    expect(limited.data!.count).toBe(1);
  });

  it('matches the last word as a prefix', async () => {
    const { data } = await autocomplete({ client: service.client(), headers: v2(), body: { query: 'warr', search_type: 'fulltext' } });
    expect((data as SearchResponseBody).chunks[0].chunk.tracking_id).toBe('warranty');
  });
});

describe('bad input', () => {
  it.each([
    [{ query: 'x', search_type: 'magic' }, /search_type/],
    [{ query: 'x', search_type: 'semantic', page_size: 100000 }, /MAX_LIMIT/],
    [{ query: 'x', search_type: 'semantic', sort_options: { recency_bias: -0.5 } }, /recency_bias/],
    [{ query: [], search_type: 'semantic' }, /query: give one query/],
    [{ query: { image_url: 'https://example.com/a.png' }, search_type: 'semantic' }, /text queries/],
    [{ query: 'x', search_type: 'semantic', filters: { must: [{ field: 'colour', match_any: ['red'] }] } }, /colour/],
    [{ search_type: 'semantic' }, /query/],
  ])('%j is refused naming the problem', async (body, message) => {
    const reply = await search(body as Record<string, unknown>);
    expect(reply.status).toBe(400);
    expect(reply.body.message).toMatch(message);
  });

  it('names a failing embedding endpoint', async () => {
    const remote = await createDataset({
      client: service.client(),
      headers: { 'SVC-Organization': orgId },
      body: { dataset_name: 'remote', server_configuration: { EMBEDDING_BASE_URL: 'http://127.0.0.1:9/v1', EMBEDDING_MODEL_NAME: 'm', EMBEDDING_SIZE: 8 } },
    });
    const reply = await service.request('POST', '/api/chunk/search', {
      headers: { authorization: ADMIN_KEY, 'SVC-Dataset': remote.data!.id },
      body: { query: 'x', search_type: 'semantic' },
    });
    expect(reply.status).toBe(400);
    expect(reply.body.message).toMatch(/127\.0\.0\.1:9/);
  }, 30_000);
});
