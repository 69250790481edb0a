// Group searches over HTTP: searching within one group, searching for groups (each group once, by its
// best chunk, with its best chunks), group autocomplete, both response versions, pages, filters,
// API-key defaults, the window of chunk hits, analytics records and bad input.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  autocompleteSearchOverGroups,
  createChunk,
  createChunkGroup,
  createDataset,
  createOrganization,
  createOrganizationApiKey,
  searchOverGroups,
  searchWithinGroup,
} from '../../sdk/src/generated/sdk.gen.js';
import type {
  DeprecatedSearchOverGroupsResponseBody,
  SearchOverGroupsResponseBody,
  SearchWithinGroupResponseBody,
  SearchWithinGroupResults,
} from '../../sdk/src/generated/types.gen.js';
import { ADMIN_KEY, startTestService, type TestService } from '../support/service.js';

let service: TestService;
let orgId: string;
let datasetId: string;
const ids: Record<string, string> = {};
const groups: Record<string, string> = {};
const db = () => service.services.store.db;
const v2 = () => ({ 'SVC-Dataset': datasetId, 'X-API-Version': 'V2' as const });

const corpus = [
  { tracking_id: 'refund-card', chunk_html: '<p>Refunds are paid to the original card within five days.</p>', tag_set: ['billing'] },
  { tracking_id: 'refund-order', chunk_html: '<p>Refund requests need the order number.</p>', tag_set: ['billing'] },
  { tracking_id: 'parcel-ship', chunk_html: '<p>Parcels ship from Rotterdam within two days.</p>', tag_set: ['logistics'] },
  { tracking_id: 'parcel-track', chunk_html: '<p>Parcel tracking links arrive by email.</p>', tag_set: ['logistics'] },
  { tracking_id: 'returns', chunk_html: '<p>Returns are free: print the label for the parcel and the refund follows.</p>', tag_set: ['billing', 'logistics'] },
  { tracking_id: 'giftcards', chunk_html: '<p>Gift cards never expire.</p>', tag_set: ['billing'] },
  { tracking_id: 'kettle-boil', chunk_html: '<p>The kettle boils water in ninety seconds.</p>', tag_set: ['product'] },
  { tracking_id: 'kettle-descale', chunk_html: '<p>Descaling keeps the kettle quiet.</p>', tag_set: ['product'] },
  { tracking_id: 'kettle-lid', chunk_html: '<p>The kettle lid locks.</p>', tag_set: ['product'] },
  { tracking_id: 'kettle-base', chunk_html: '<p>Kettle bases are cordless.</p>', tag_set: ['product'] },
];
const members: Record<string, string[]> = {
  billing: ['refund-card', 'refund-order', 'returns'],
  shipping: ['parcel-ship', 'parcel-track', 'returns'],
  kettles: ['kettle-boil', 'kettle-descale', 'kettle-lid', 'kettle-base'],
  empty: [],
};
const TYPES = ['semantic', 'fulltext', 'hybrid', 'bm25'] as const;

function post(path: string, body: Record<string, unknown>, headers: Record<string, string> = {}, key = ADMIN_KEY) {
  return service.request('POST', path, { headers: { authorization: key, 'SVC-Dataset': datasetId, 'X-API-Version': 'V2', ...headers }, body });
}

async function makeGroups(dataset: string, chunkIds: Record<string, string>, groupMembers: Record<string, string[]>, into: Record<string, string>) {
  for (const [name, list] of Object.entries(groupMembers)) {
    const { data } = await createChunkGroup({
      client: service.client(),
      headers: { 'SVC-Dataset': dataset },
      body: { name, tracking_id: name, description: `the ${name} group` },
    });
    into[name] = (data as { id: string }).id;
    for (const member of list) {
      const added = await service.request('POST', `/api/chunk_group/chunk/${into[name]}`, {
        headers: { authorization: ADMIN_KEY, 'SVC-Dataset': dataset },
        body: { chunk_id: chunkIds[member] },
      });
      expect(added.status).toBe(204);
    }
  }
}

async function addChunks(dataset: string, chunks: Record<string, unknown>[], into: Record<string, string>) {
  for (let start = 0; start < chunks.length; start += 120) {
    const created = await createChunk({ client: service.client(), headers: { 'SVC-Dataset': dataset }, body: chunks.slice(start, start + 120) as never });
    expect(created.response.status).toBe(200);
    for (const chunk of (created.data as { chunk_metadata: { id: string; tracking_id: string }[] }).chunk_metadata) into[chunk.tracking_id] = chunk.id;
  }
}

/** Group name → tracking ids of its chunks shown, in the order of the V2 results. */
function shown(body: SearchOverGroupsResponseBody): [string, string[]][] {
  return body.results.map((r) => [r.group.name, r.chunks.map((c) => c.chunk.tracking_id!)]);
}

beforeAll(async () => {
  service = await startTestService();
  orgId = (await createOrganization({ client: service.client(), body: { name: 'Group search' } })).data!.id;
  const { data } = await createDataset({
    client: service.client(),
    headers: { 'SVC-Organization': orgId },
    body: { dataset_name: 'help', server_configuration: { MAX_LIMIT: 50 } },
  });
  datasetId = data!.id;
  await addChunks(datasetId, corpus, ids);
  await makeGroups(datasetId, ids, members, groups);
});
afterAll(async () => {
  await service?.stop();
});

describe.each(TYPES)('search over groups by %s', (search_type) => {
  it('gives each group once, ranked by its best chunk, with its best chunks', async () => {
    const { data, response } = await searchOverGroups({ client: service.client(), headers: v2(), body: { query: 'refund card', search_type } });
    expect(response.status).toBe(200);
    const body = data as SearchOverGroupsResponseBody;
    const names = body.results.map((r) => r.group.name);
    expect(names[0]).toBe('billing');
    expect(new Set(names).size).toBe(names.length);
    expect(names).not.toContain('empty');
    for (const result of body.results) {
      expect(result.chunks.length).toBeGreaterThan(0);
      expect(result.chunks.length).toBeLessThanOrEqual(3);
      for (const chunk of result.chunks) expect(members[result.group.name]).toContain(chunk.chunk.tracking_id);
      const scores = result.chunks.map((c) => c.score);
      expect([...scores].sort((a, b) => b - a)).toEqual(scores);
    }
    expect(body.results[0].chunks[0].chunk.tracking_id).toBe('refund-card');
  });

  it('counts only chunks that pass the filter', async () => {
    const reply = await post('/api/chunk_group/group_oriented_search', {
      query: 'refund parcel',
      search_type,
      filters: { must: [{ field: 'tag_set', match_any: ['logistics'] }] },
    });
    expect(reply.status).toBe(200);
    const body = reply.body as SearchOverGroupsResponseBody;
    expect(body.results.length).toBeGreaterThan(0);
    for (const result of body.results) for (const chunk of result.chunks) expect((chunk.chunk as { tag_set: string[] }).tag_set).toContain('logistics');
    // 'returns' is the billing group's only chunk tagged logistics, and it holds both query words.
    const billing = body.results.find((r) => r.group.name === 'billing');
    expect(billing?.chunks.map((c) => c.chunk.tracking_id)).toEqual(['returns']);
  });
});

describe('search over groups', () => {
  it('shows group_size chunks per group, 3 by default, none for 0', async () => {
    const three = (await post('/api/chunk_group/group_oriented_search', { query: 'kettle', search_type: 'fulltext' })).body as SearchOverGroupsResponseBody;
    expect(shown(three)).toEqual([['kettles', expect.any(Array)]]);
    expect(three.results[0].chunks).toHaveLength(3);
    const four = (await post('/api/chunk_group/group_oriented_search', { query: 'kettle', search_type: 'fulltext', group_size: 4 }))
      .body as SearchOverGroupsResponseBody;
    expect(four.results[0].chunks.map((c) => c.chunk.tracking_id).sort()).toEqual([...members.kettles].sort());
    const none = (await post('/api/chunk_group/group_oriented_search', { query: 'kettle', search_type: 'fulltext', group_size: 0 }))
      .body as SearchOverGroupsResponseBody;
    expect(shown(none)).toEqual([['kettles', []]]);
  });

  it('counts a chunk in several groups for each, and shows no chunk that is in none', async () => {
    const label = (await post('/api/chunk_group/group_oriented_search', { query: 'label', search_type: 'fulltext' })).body as SearchOverGroupsResponseBody;
    expect(shown(label).sort()).toEqual([
      ['billing', ['returns']],
      ['shipping', ['returns']],
    ]);
    const gift = (await post('/api/chunk_group/group_oriented_search', { query: 'expire', search_type: 'fulltext' })).body as SearchOverGroupsResponseBody;
    expect(gift.results).toEqual([]);
  });

  it('pages over groups and counts them when asked', async () => {
    const page = async (n: number) =>
      (
        await post('/api/chunk_group/group_oriented_search', {
          query: 'refund parcel kettle',
          search_type: 'semantic',
          page_size: 1,
          page: n,
          get_total_pages: true,
        })
      ).body as SearchOverGroupsResponseBody;
    const pages = [await page(1), await page(2), await page(3), await page(4)];
    expect(pages.map((p) => p.results.length)).toEqual([1, 1, 1, 0]);
    expect(new Set(pages.slice(0, 3).map((p) => p.results[0].group.name))).toEqual(new Set(['billing', 'shipping', 'kettles']));
    expect(pages[0].total_pages).toBe(3);
  });

  it('answers in the V1 shape by default, with the group fields prefixed', async () => {
    const { data } = await searchOverGroups({
      client: service.client(),
      headers: { 'SVC-Dataset': datasetId },
      body: { query: 'kettle', search_type: 'fulltext', group_size: 1, slim_chunks: true },
    });
    const body = data as DeprecatedSearchOverGroupsResponseBody;
    expect(body.total_chunk_pages).toBe(0);
    expect(body.group_chunks).toHaveLength(1);
    expect(body.group_chunks[0]).toMatchObject({
      group_id: groups.kettles,
      group_name: 'kettles',
      group_description: 'the kettles group',
      group_tracking_id: 'kettles',
      group_dataset_id: datasetId,
    });
    expect(body.group_chunks[0].metadata[0].metadata[0]).toMatchObject({ tag_set: 'product' });
    expect(body.group_chunks[0].metadata[0].metadata[0]).not.toHaveProperty('chunk_html');
  });

  it('records the search for analytics with the chunks shown', async () => {
    const body = (await post('/api/chunk_group/group_oriented_search', { query: 'kettle', search_type: 'fulltext', user_id: 'u1' }))
      .body as SearchOverGroupsResponseBody;
    await service.services.deferred.flush();
    const row = await db()('search_queries').where({ id: body.id }).first();
    expect(row).toMatchObject({ dataset_id: datasetId, search_type: 'search_over_groups_fulltext', query: 'kettle', user_id: 'u1' });
    expect(row.results).toEqual(body.results[0].chunks.map((c) => c.chunk.id));
    expect(row.request_params).toMatchObject({ search_type: 'fulltext', user_id: 'u1' });
  });

  it('matches the last word as a prefix in group autocomplete', async () => {
    const { data, response } = await autocompleteSearchOverGroups({
      client: service.client(),
      headers: v2(),
      body: { query: 'kett', search_type: 'fulltext', group_size: 2 },
    });
    expect(response.status).toBe(200);
    const body = data as SearchOverGroupsResponseBody;
    expect(shown(body)[0][0]).toBe('kettles');
    expect(body.results[0].chunks).toHaveLength(2);
    await service.services.deferred.flush();
    const row = await db()('search_queries').where({ id: body.id }).first();
    expect(row.search_type).toBe('autocomplete_fulltext');
  });

  it.each([
    [{ query: 'x', search_type: 'semantic', page_size: 51 }, /page_size: 51 is over the dataset's MAX_LIMIT of 50/],
    [{ query: 'x', search_type: 'semantic', filters: { must_not: [{ field: 'colour', match_any: ['red'] }] } }, /filters\.must_not\[0\].*colour/],
    [{ query: 'x', search_type: 'semantic', group_size: -1 }, /group_size/],
    [{ search_type: 'semantic' }, /query/],
  ])('%j is refused naming the problem', async (body, message) => {
    const reply = await post('/api/chunk_group/group_oriented_search', body);
    expect(reply.status).toBe(400);
    expect(reply.body.message).toMatch(message);
  });
});

describe('the window of chunk hits', () => {
  it('grows until it holds a group, and completes groups short of chunks from a search within them', async () => {
    const { data } = await createDataset({ client: service.client(), headers: { 'SVC-Organization': orgId }, body: { dataset_name: 'crowded' } });
    const crowded = data!.id;
    const chunkIds: Record<string, string> = {};
    // 120 ungrouped chunks that say "kettle" most densely, then grouped ones that say it once in more words.
    const fillers = Array.from({ length: 120 }, (_, i) => ({ tracking_id: `filler-${i}`, chunk_html: `<p>kettle kettle kettle ${i}</p>` }));
    const late = [
      { tracking_id: 'late-1', chunk_html: '<p>Our kettle comes in a recycled cardboard box with a printed manual.</p>' },
      { tracking_id: 'late-2', chunk_html: '<p>The manual for the kettle explains every button on the handle and base.</p>' },
      { tracking_id: 'early', chunk_html: '<p>kettle kettle kettle kettle</p>' },
    ];
    await addChunks(crowded, [...fillers, ...late], chunkIds);
    const crowdedGroups: Record<string, string> = {};
    await makeGroups(crowded, chunkIds, { late: ['late-1', 'late-2'], mixed: ['early', 'late-1'] }, crowdedGroups);

    const search = async (page_size: number) => {
      const reply = await service.request('POST', '/api/chunk_group/group_oriented_search', {
        headers: { authorization: ADMIN_KEY, 'SVC-Dataset': crowded, 'X-API-Version': 'V2' },
        body: { query: 'kettle', search_type: 'bm25', page_size },
      });
      expect(reply.status).toBe(200);
      return shown(reply.body as SearchOverGroupsResponseBody);
    };
    // One group wanted: the first window (100 hits) holds `early` only of `mixed`, whose other chunk
    // ranks below the fillers; a search within `mixed` completes it.
    expect(await search(1)).toEqual([['mixed', ['early', 'late-1']]]);
    // Two groups wanted: `late` is only found once the window has grown past the 120 fillers.
    expect(await search(2)).toEqual([
      ['mixed', ['early', 'late-1']],
      ['late', expect.arrayContaining(['late-1', 'late-2'])],
    ]);
  });
});

describe('search within a group', () => {
  it('finds only chunks of the group named by id, in the V2 shape', async () => {
    const { data, response } = await searchWithinGroup({
      client: service.client(),
      headers: v2(),
      body: { query: 'refund', search_type: 'fulltext', group_id: groups.shipping },
    });
    expect(response.status).toBe(200);
    const body = data as SearchWithinGroupResponseBody;
    expect(body.chunks.map((c) => c.chunk.tracking_id)).toEqual(['returns']);
    expect(body.id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it.each(TYPES)('keeps every %s result inside the group', async (search_type) => {
    const body = (await post('/api/chunk_group/search', { query: 'refund parcel kettle', search_type, group_tracking_id: 'kettles', page_size: 10 }))
      .body as SearchWithinGroupResponseBody;
    expect(body.chunks.length).toBeGreaterThan(0);
    for (const chunk of body.chunks) expect(members.kettles).toContain(chunk.chunk.tracking_id);
  });

  it('answers in the V1 shape by default: the bookmarks that match and the group', async () => {
    const { data } = await searchWithinGroup({
      client: service.client(),
      headers: { 'SVC-Dataset': datasetId },
      body: { query: 'kettle boils', search_type: 'semantic', group_tracking_id: 'kettles', page_size: 2 },
    });
    const body = data as SearchWithinGroupResults;
    expect(body.group).toMatchObject({ id: groups.kettles, name: 'kettles', tracking_id: 'kettles' });
    expect(body.bookmarks).toHaveLength(2);
    expect(body.bookmarks[0].metadata[0]).toMatchObject({ tracking_id: 'kettle-boil', tag_set: 'product' });
  });

  it('pages within the group and counts its pages', async () => {
    const page = async (n: number) =>
      (
        await post('/api/chunk_group/search', {
          query: 'kettle',
          search_type: 'semantic',
          group_id: groups.kettles,
          page_size: 3,
          page: n,
          get_total_pages: true,
        })
      ).body as SearchWithinGroupResponseBody;
    const [first, second] = [await page(1), await page(2)];
    expect(first.total_pages).toBe(2);
    expect([...first.chunks, ...second.chunks].map((c) => c.chunk.tracking_id).sort()).toEqual([...members.kettles].sort());
  });

  it('records the search with the group as asked', async () => {
    const body = (await post('/api/chunk_group/search', { query: 'parcel', search_type: 'semantic', group_tracking_id: 'shipping' }))
      .body as SearchWithinGroupResponseBody;
    await service.services.deferred.flush();
    const row = await db()('search_queries').where({ id: body.id }).first();
    expect(row).toMatchObject({ search_type: 'search_within_groups_semantic', query: 'parcel' });
    expect(row.request_params).toMatchObject({ group_tracking_id: 'shipping' });
  });

  it("keeps an API key's default filters and the group both in force", async () => {
    const { data } = await createOrganizationApiKey({
      client: service.client(),
      headers: { 'SVC-Organization': orgId },
      body: { name: 'billing only', role: 0, default_params: { filters: { must: [{ field: 'tag_set', match_any: ['billing'] }] } } },
    });
    const reply = await post(
      '/api/chunk_group/search',
      { query: 'parcel', search_type: 'semantic', group_id: groups.shipping, filters: null },
      {},
      data!.api_key,
    );
    expect(reply.status).toBe(200);
    expect((reply.body as SearchWithinGroupResponseBody).chunks.map((c) => c.chunk.tracking_id)).toEqual(['returns']);
    const over = await post('/api/chunk_group/group_oriented_search', { query: 'parcel', search_type: 'semantic' }, {}, data!.api_key);
    expect((over.body as SearchOverGroupsResponseBody).results.length).toBeGreaterThan(0);
    for (const result of (over.body as SearchOverGroupsResponseBody).results)
      for (const chunk of result.chunks) expect((chunk.chunk as { tag_set: string[] }).tag_set).toContain('billing');
  });

  it.each([
    [{ query: 'x', search_type: 'semantic' }, 400, /group_id or group_tracking_id/],
    [{ query: 'x', search_type: 'semantic', group_id: '00000000-0000-4000-8000-00000000abcd' }, 404, /group 00000000-0000-4000-8000-00000000abcd not found/],
    [{ query: 'x', search_type: 'semantic', group_tracking_id: 'nope' }, 404, /tracking_id nope not found/],
    [{ query: 'x', search_type: 'semantic', group_id: 'not-a-uuid' }, 400, /group_id/],
    [{ query: 'x', search_type: 'semantic', group_tracking_id: 'kettles', page_size: 51 }, 400, /MAX_LIMIT/],
  ])('%j is refused with %i', async (body, status, message) => {
    const reply = await post('/api/chunk_group/search', body);
    expect(reply.status).toBe(status);
    expect(reply.body.message).toMatch(message);
  });
});
