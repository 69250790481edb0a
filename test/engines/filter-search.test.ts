// Every filter case of test/support/filter-cases.ts through every way of reading chunks: the four
// search types (with this mode's lexical engine: Postgres full-text embedded, Typesense in full mode),
// count and scroll. Each must select exactly the chunks the case lists, as the SQL-level suite does.
//
// The fixture goes in through the API (so vectors, lexical documents and BM25 terms are made as for
// any chunk), every chunk holding the word "atlas" so that each search matches them all; then the
// filterable columns are set to the fixture's values (creation dates included), since filters are
// evaluated on the chunk rows whatever engine matched the query.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  countChunks,
  createChunk,
  createChunkGroup,
  createDataset,
  createOrganization,
  scrollDatasetChunks,
  searchChunks,
} from '../../sdk/src/generated/sdk.gen.js';
import type { SearchResponseBody } from '../../sdk/src/generated/types.gen.js';
import { mode } from '../support/env.js';
import { CASES, CHUNKS, fixtureColumns, ids, type Filter } from '../support/filter-cases.js';
import { startTestService, type TestService } from '../support/service.js';

let service: TestService;
let headers: { 'SVC-Dataset': string };
const trackingIdOf = new Map<string, string>();

beforeAll(async () => {
  service = await startTestService();
  const client = service.client();
  const organization = (await createOrganization({ client, body: { name: 'filter search' } })).data!;
  const dataset = (await createDataset({ client, headers: { 'SVC-Organization': organization.id }, body: { dataset_name: 'filter search' } })).data!;
  headers = { 'SVC-Dataset': dataset.id };
  for (const group of ['g-news', 'g-travel', 'g-food']) {
    const created = await createChunkGroup({ client, headers, body: { tracking_id: group, name: group } });
    ids[group] = (created.data as { id: string }).id;
  }
  const created = await createChunk({
    client,
    headers,
    body: CHUNKS.map((chunk) => ({
      tracking_id: chunk.tracking_id,
      chunk_html: `<p>atlas entry ${chunk.tracking_id}</p>`,
      group_ids: (chunk.groups ?? []).map((g) => ids[g]),
    })),
  });
  expect(created.response.status, JSON.stringify(created.error)).toBe(200);
  const db = service.services.store.db;
  for (const [i, chunk] of CHUNKS.entries()) {
    const [{ id }] = await db('chunks').where({ dataset_id: dataset.id, tracking_id: chunk.tracking_id }).update(fixtureColumns(chunk, i)).returning('id');
    ids[chunk.tracking_id] = id;
    trackingIdOf.set(id, chunk.tracking_id);
  }
});
afterAll(async () => {
  await service?.stop();
});

const resolve = (filter: Filter | (() => Filter)) => (typeof filter === 'function' ? filter() : filter);

describe.each(['semantic', 'fulltext', 'bm25', 'hybrid'] as const)(`search %s (${mode})`, (searchType) => {
  it.each(CASES)('%s', async (_name, filter, expected) => {
    const { data, response, error } = await searchChunks({
      client: service.client(),
      headers: { ...headers, 'X-API-Version': 'V2' },
      body: { query: 'atlas', search_type: searchType, filters: resolve(filter), page_size: 100 },
    });
    expect(response.status, JSON.stringify(error)).toBe(200);
    const found = (data as SearchResponseBody).chunks.map((c) => (c.chunk as { tracking_id: string }).tracking_id);
    expect(found.sort()).toEqual([...expected].sort());
  });
});

describe(`count and scroll (${mode})`, () => {
  it.each(CASES)('%s', async (_name, filter, expected) => {
    const counted = await countChunks({ client: service.client(), headers, body: { query: 'atlas', search_type: 'fulltext', filters: resolve(filter) } });
    expect(counted.data?.count).toBe(expected.length);
    const scrolled = await scrollDatasetChunks({ client: service.client(), headers, body: { filters: resolve(filter), page_size: 100 } });
    expect(scrolled.data!.chunks.map((c) => trackingIdOf.get(c.id)).sort()).toEqual([...expected].sort());
  });
});
