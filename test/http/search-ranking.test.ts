// Ranking options of search and autocomplete over HTTP (`sort_options`), through the SDK, in both
// response versions: sort by a field, rerank by another search type or the dataset's cross-encoder
// (a local stand-in server), weights, tag weights, recency and location biases, MMR, hybrid search
// reranked by the dataset's reranker, and the 400s of bad or conflicting options.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { autocomplete, createChunk, createDataset, createOrganization, searchChunks } from '../../sdk/src/generated/sdk.gen.js';
import type * as T from '../../sdk/src/generated/types.gen.js';
import { startStandInReranker, type StandInReranker } from '../support/reranker.js';
import { ALLOW_LOCAL_STAND_INS } from '../support/outbound.js';
import { ADMIN_KEY, startTestService, type TestService } from '../support/service.js';

let service: TestService;
let reranker: StandInReranker;
let orgId: string;
/** The shop, with the stand-in reranker configured (TEI shape: no model name). */
let shop: string;
/** Near duplicates and an unlike chunk, for MMR; a reranker with a model name (Cohere shape). */
let diverse: string;
/** No reranker. */
let plain: string;

const PARIS = { lat: 48.86, lon: 2.35 };
const AMSTERDAM = { lat: 52.37, lon: 4.9 };
const SHOP: T.ChunkReqPayload[] = [
  {
    tracking_id: 'tent',
    chunk_html: '<p>Four person camping tent, waterproof.</p>',
    num_value: 250,
    time_stamp: '2024-03-01T00:00:00',
    tag_set: ['camp'],
    location: AMSTERDAM,
  },
  {
    tracking_id: 'stove',
    chunk_html: '<p>Camping stove for quick boiling.</p>',
    num_value: 40,
    weight: 3,
    time_stamp: '2022-05-01T00:00:00',
    tag_set: ['camp', 'sale'],
    location: { lat: 38.72, lon: -9.14 },
  },
  {
    tracking_id: 'kayak',
    chunk_html: '<p>Two seat kayak for calm rivers.</p>',
    num_value: 900,
    time_stamp: '2025-02-01T00:00:00',
    tag_set: ['water'],
    location: { lat: 52.52, lon: 13.4 },
  },
  { tracking_id: 'paddle', chunk_html: '<p>Carbon kayak paddle, light and stiff.</p>', tag_set: ['water', 'sale'] },
  {
    tracking_id: 'lamp',
    chunk_html: '<p>Camping lamp with a long battery life.</p>',
    num_value: 15,
    time_stamp: '2023-07-01T00:00:00',
    tag_set: ['camp'],
    location: PARIS,
  },
];
const DIVERSE: T.ChunkReqPayload[] = [
  { tracking_id: 'dup-1', chunk_html: '<p>Two seat kayak for calm rivers and lakes.</p>' },
  { tracking_id: 'dup-2', chunk_html: '<p>Two seat kayak for calm lakes and rivers.</p>' },
  { tracking_id: 'other', chunk_html: '<p>A reflecting telescope shows the rings of Saturn.</p>' },
];

type Version = 'V1' | 'V2';
type Ranked = [string, number][];

/** The results as [tracking id, score], read from the response version asked for. */
function ranked(version: Version, data: unknown): Ranked {
  if (version === 'V2') return (data as T.SearchResponseBody).chunks.map((c) => [c.chunk.tracking_id!, c.score]);
  return (data as T.SearchChunkQueryResponseBody).score_chunks.map((c) => [(c.metadata[0] as T.ChunkMetadataStringTagSet).tracking_id!, c.score]);
}

async function search(version: Version, body: Partial<T.SearchChunksReqPayload>, dataset = shop): Promise<Ranked> {
  const { data, error, response } = await searchChunks({
    client: service.client(),
    headers: { 'SVC-Dataset': dataset, 'X-API-Version': version },
    body: { query: 'camping gear', search_type: 'semantic', page_size: 10, ...body },
  });
  expect(response.status, JSON.stringify(error)).toBe(200);
  return ranked(version, data);
}

async function refusal(body: Record<string, unknown>, dataset = shop): Promise<string> {
  const reply = await service.request('POST', '/api/chunk/search', {
    headers: { authorization: ADMIN_KEY, 'SVC-Dataset': dataset },
    body: { query: 'camping gear', search_type: 'semantic', ...body },
  });
  expect(reply.status).toBe(400);
  return reply.body.message;
}

const order = (results: Ranked) => results.map(([t]) => t);
/** The results reordered by `factor` times their score, as the service should rank them. */
const scaled = (results: Ranked, factor: (tracking: string) => number): Ranked =>
  results.map(([t, s]): [string, number] => [t, s * factor(t)]).sort((a, b) => b[1] - a[1]);
const closeTo = (expected: Ranked) => expected.map(([t, s]) => [t, expect.closeTo(s, 6)]);

async function newDataset(name: string, serverConfiguration: T.DatasetConfigurationDto, chunks: T.ChunkReqPayload[]): Promise<string> {
  const id = (
    await createDataset({
      client: service.client(),
      headers: { 'SVC-Organization': orgId },
      body: { dataset_name: name, server_configuration: serverConfiguration },
    })
  ).data!.id;
  const created = await createChunk({ client: service.client(), headers: { 'SVC-Dataset': id }, body: chunks });
  expect(created.response.status, JSON.stringify(created.error)).toBe(200);
  return id;
}

beforeAll(async () => {
  [service, reranker] = await Promise.all([startTestService(ALLOW_LOCAL_STAND_INS), startStandInReranker()]);
  orgId = (await createOrganization({ client: service.client(), body: { name: 'Ranking' } })).data!.id;
  shop = await newDataset('shop', { RERANKER_BASE_URL: reranker.baseUrl }, SHOP);
  diverse = await newDataset('diverse', { RERANKER_BASE_URL: reranker.baseUrl, RERANKER_MODEL_NAME: 'rerank-stand-in' }, DIVERSE);
  plain = await newDataset('plain', {}, SHOP.slice(0, 2));
});
afterAll(async () => {
  await Promise.all([service?.stop(), reranker?.close()]);
});
beforeEach(() => reranker.reset());

describe.each(['V1', 'V2'] as const)('%s', (version) => {
  it('sorts by num_value, descending by default, chunks without one last; the value is the score', async () => {
    expect(await search(version, { sort_options: { sort_by: { field: 'num_value' } } })).toEqual([
      ['kayak', 900],
      ['tent', 250],
      ['stove', 40],
      ['lamp', 15],
      ['paddle', 0],
    ]);
    expect(order(await search(version, { sort_options: { sort_by: { field: 'num_value', direction: 'asc' } } }))).toEqual([
      'lamp',
      'stove',
      'tent',
      'kayak',
      'paddle',
    ]);
  });

  it('pages through the sorted order', async () => {
    const pages = [];
    for (const page of [1, 2, 3])
      pages.push(...order(await search(version, { page, page_size: 2, sort_options: { sort_by: { field: 'time_stamp', direction: 'asc' } } })));
    expect(pages).toEqual(['stove', 'lamp', 'tent', 'kayak', 'paddle']);
  });

  it('sorts autocomplete results too', async () => {
    const { data, response } = await autocomplete({
      client: service.client(),
      headers: { 'SVC-Dataset': shop, 'X-API-Version': version },
      body: { query: 'camp', search_type: 'fulltext', sort_options: { sort_by: { field: 'num_value', direction: 'asc' } } },
    });
    expect(response.status).toBe(200);
    expect(order(ranked(version, data))).toEqual(['lamp', 'stove', 'tent']);
  });

  it('reranks by another search type: the chunks the rerank query matches first', async () => {
    const results = await search(version, { sort_options: { use_weights: false, sort_by: { rerank_type: 'fulltext', rerank_query: 'kayak' } } });
    expect(order(results).slice(0, 2).sort()).toEqual(['kayak', 'paddle']);
    expect(results.slice(2).map(([, s]) => s)).toEqual([0, 0, 0]);
  });

  it('multiplies by the chunk weights and by tag weights', async () => {
    const baseline = await search(version, {});
    expect(baseline).toHaveLength(5);
    // Chunk weights are on whenever sort_options is given; the stove weighs 3, the rest 0 (counted as 1).
    expect(await search(version, { sort_options: {} })).toEqual(closeTo(scaled(baseline, (t) => (t === 'stove' ? 3 : 1))));
    // stove (camp, sale) × 10, paddle (water, sale) × 5, kayak (water) × 0.5, tent and lamp (camp) × 1.
    const weights: Record<string, number> = { sale: 10, water: 0.5 };
    const tagFactor = (t: string) => SHOP.find((c) => c.tracking_id === t)!.tag_set!.reduce((f, tag) => f * (weights[tag] ?? 1), 1);
    expect(await search(version, { sort_options: { use_weights: false, tag_weights: weights } })).toEqual(closeTo(scaled(baseline, tagFactor)));
  });

  it('recency_bias puts newer chunks first (created_at for a chunk without a time stamp)', async () => {
    expect(order(await search(version, { sort_options: { recency_bias: 100, use_weights: false } }))).toEqual(['paddle', 'kayak', 'tent', 'lamp', 'stove']);
  });

  it('location_bias puts chunks near the point first, chunks without a location last', async () => {
    // Amsterdam 0 km, Paris ~430 km, Berlin ~580 km, Lisbon ~1860 km (the farthest: as far as no location).
    const results = order(await search(version, { sort_options: { location_bias: { location: AMSTERDAM, bias: 100 }, use_weights: false } }));
    expect(results.slice(0, 3)).toEqual(['tent', 'lamp', 'kayak']);
    expect(results.slice(3).sort()).toEqual(['paddle', 'stove']);
  });

  it('diversifies with mmr: a near duplicate moves below a different chunk', async () => {
    const query = { query: 'two seat kayak for calm rivers' };
    expect(order(await search(version, query, diverse))).toEqual(['dup-1', 'dup-2', 'other']);
    const results = await search(version, { ...query, sort_options: { use_weights: false, mmr: { use_mmr: true, mmr_lambda: 0.9 } } }, diverse);
    expect(order(results)).toEqual(['dup-1', 'other', 'dup-2']);
    expect(results[0][1]).toBeCloseTo(0.1, 6);
    expect(results[1][1]).toBeGreaterThanOrEqual(results[2][1]);
  });

  it("reranks with the dataset's cross-encoder, and hybrid search by it alone", async () => {
    reranker.score = (_query, text) => (text.includes('lamp') ? 9 : text.includes('kayak') ? 4 : 1);
    const results = await search(version, { sort_options: { use_weights: false, sort_by: { rerank_type: 'cross_encoder', rerank_query: 'light at night' } } });
    expect(results.slice(0, 3)).toEqual([
      ['lamp', 9],
      [expect.stringMatching(/kayak|paddle/), 4],
      [expect.stringMatching(/kayak|paddle/), 4],
    ]);
    expect(reranker.requests).toHaveLength(1);
    expect(reranker.requests[0].body).toMatchObject({ query: 'light at night', truncate: true });
    expect(reranker.requests[0].body.texts).toContain('Camping lamp with a long battery life.');

    reranker.requests.length = 0;
    const hybrid = await search(version, { search_type: 'hybrid', query: 'camping' });
    expect(hybrid[0]).toEqual(['lamp', 9]);
    expect(reranker.requests[0].body.query).toBe('camping');
  });

  it('speaks the Cohere shape to a reranker with a model name', async () => {
    reranker.score = (_query, text) => (text.includes('telescope') ? 5 : 0);
    const results = await search(version, { query: 'kayak', sort_options: { sort_by: { rerank_type: 'cross_encoder' } } }, diverse);
    expect(results[0]).toEqual(['other', 5]);
    expect(reranker.requests[0].body).toMatchObject({ model: 'rerank-stand-in', query: 'kayak', documents: expect.any(Array) });
  });
});

describe('bad input', () => {
  it('refuses cross_encoder on a dataset without a reranker', async () => {
    expect(await refusal({ sort_options: { sort_by: { rerank_type: 'cross_encoder' } } }, plain)).toMatch(/cross_encoder.*configures none.*RERANKER_BASE_URL/);
  });

  it('names the reranker endpoint when it keeps failing, and answers no other order', async () => {
    reranker.answer = { status: 500, body: { error: 'model crashed' } };
    const message = await refusal({ sort_options: { sort_by: { rerank_type: 'cross_encoder' } } });
    expect(message).toContain(`reranker endpoint ${reranker.baseUrl}/rerank answered 500`);
    expect(reranker.requests.length).toBe(4); // three retries
    const hybrid = await refusal({ search_type: 'hybrid' });
    expect(hybrid).toMatch(/hybrid.*reranker endpoint/);
  }, 30_000);

  it.each([
    [{ recency_bias: -1 }, /sort_options\.recency_bias: must be a number, 0 or more/],
    [{ location_bias: { location: PARIS, bias: -2 } }, /sort_options\.location_bias\.bias/],
    [{ tag_weights: { sale: -1 } }, /sort_options\.tag_weights\.sale/],
    [{ mmr: { use_mmr: true, mmr_lambda: 1.5 } }, /sort_options\.mmr\.mmr_lambda: must be between 0 and 1/],
    [{ sort_by: { field: 'num_value' }, mmr: { use_mmr: true } }, /sort_options\.sort_by \(field num_value\) and sort_options\.mmr cannot both apply/],
    [{ sort_by: { field: 'time_stamp' }, recency_bias: 2 }, /sort_options\.sort_by \(field time_stamp\) and sort_options\.recency_bias/],
    [{ sort_by: { field: 'colour' } }, /sort_options\/sort_by\/field must be equal to one of the allowed values/],
    [{ sort_by: { rerank_type: 'fulltext', rerank_query: '' } }, /rerank_query/],
  ])('refuses sort_options %j, naming the field', async (sortOptions, message) => {
    expect(await refusal({ sort_options: sortOptions })).toMatch(message);
  });

  it('refuses them on autocomplete too', async () => {
    const reply = await service.request('POST', '/api/chunk/autocomplete', {
      headers: { authorization: ADMIN_KEY, 'SVC-Dataset': shop },
      body: { query: 'camp', search_type: 'fulltext', sort_options: { mmr: { use_mmr: true, mmr_lambda: 2 } } },
    });
    expect(reply.status).toBe(400);
    expect(reply.body.message).toMatch(/mmr_lambda/);
  });
});
