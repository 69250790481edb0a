// Recommendations over HTTP: chunks and groups like some examples and unlike others, for each
// recommend type and strategy, both response versions, filters, limits, the analytics record, and
// the refusals of bad input.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createChunk,
  createChunkGroup,
  createDataset,
  createOrganization,
  getRecommendedChunks,
  getRecommendedGroups,
} from '../../sdk/src/generated/sdk.gen.js';
import type { ChunkMetadataWithScore, GroupScoreChunk, RecommendChunksResponseBody, RecommendGroupsResponseBody } from '../../sdk/src/generated/types.gen.js';
import { ADMIN_KEY, startTestService, type TestService } from '../support/service.js';

let service: TestService;
let orgId: string;
let datasetId: string;
const ids: Record<string, string> = {};
const groups: Record<string, string> = {};
const db = () => service.services.store.db;

const corpus = [
  { tracking_id: 'tea-green', chunk_html: '<p>Green tea leaves steep in hot water for three minutes.</p>', tag_set: ['drinks'] },
  { tracking_id: 'tea-black', chunk_html: '<p>Black tea leaves need boiling water and four minutes to steep.</p>', tag_set: ['drinks'] },
  { tracking_id: 'tea-herbal', chunk_html: '<p>Herbal tea made from dried leaves steeps in hot water.</p>', tag_set: ['drinks'] },
  { tracking_id: 'bike-road', chunk_html: '<p>Road bike tyres need pumping to six bar before a ride.</p>', tag_set: ['cycling'] },
  { tracking_id: 'bike-mountain', chunk_html: '<p>Mountain bike tyres grip mud on a trail ride.</p>', tag_set: ['cycling'] },
  { tracking_id: 'bike-chain', chunk_html: '<p>Bike chains need oil after a wet ride.</p>', tag_set: ['cycling'] },
  { tracking_id: 'pasta', chunk_html: '<p>Pasta boils in salted water for ten minutes.</p>', tag_set: ['cooking'] },
  { tracking_id: 'rice', chunk_html: '<p>Rice boils in salted water for twenty minutes.</p>', tag_set: ['cooking'] },
];
const groupMembers: Record<string, string[]> = {
  'tea-a': ['tea-green', 'tea-black'],
  'tea-b': ['tea-herbal'],
  'bikes-a': ['bike-road', 'bike-mountain'],
  'bikes-b': ['bike-chain'],
  cooking: ['pasta', 'rice'],
  empty: [],
};
const TYPES = ['semantic', 'fulltext', 'bm25'] as const;

async function newDataset(name: string, server_configuration: Record<string, unknown> = {}): Promise<string> {
  const { data, response, error } = await createDataset({
    client: service.client(),
    headers: { 'SVC-Organization': orgId },
    body: { dataset_name: name, server_configuration },
  });
  expect(response.status, JSON.stringify(error)).toBe(200);
  return data!.id;
}

function recommend(body: Record<string, unknown>, version: 'V1' | 'V2' = 'V2', dataset = datasetId) {
  return service.request('POST', '/api/chunk/recommend', { headers: { authorization: ADMIN_KEY, 'SVC-Dataset': dataset, 'X-API-Version': version }, body });
}

function recommendGroups(body: Record<string, unknown>, version: 'V1' | 'V2' = 'V2', dataset = datasetId) {
  return service.request('POST', '/api/chunk_group/recommend', {
    headers: { authorization: ADMIN_KEY, 'SVC-Dataset': dataset, 'X-API-Version': version },
    body,
  });
}

/** The tracking ids of a V2 chunk recommendation, best first, with their scores. */
async function recommended(body: Record<string, unknown>): Promise<{ tracking: string[]; score: Record<string, number> }> {
  const reply = await recommend({ limit: 10, ...body });
  expect(reply.status, JSON.stringify(reply.body)).toBe(200);
  const chunks = (reply.body as RecommendChunksResponseBody).chunks;
  return { tracking: chunks.map((c) => c.chunk.tracking_id!), score: Object.fromEntries(chunks.map((c) => [c.chunk.tracking_id!, c.score])) };
}

beforeAll(async () => {
  service = await startTestService();
  orgId = (await createOrganization({ client: service.client(), body: { name: 'Recommendations' } })).data!.id;
  datasetId = await newDataset('kitchen and cycling');
  const created = await createChunk({ client: service.client(), headers: { 'SVC-Dataset': datasetId }, body: corpus });
  expect(created.response.status).toBe(200);
  for (const chunk of (created.data as { chunk_metadata: { id: string; tracking_id: string }[] }).chunk_metadata) ids[chunk.tracking_id] = chunk.id;
  for (const [name, members] of Object.entries(groupMembers)) {
    const { data } = await createChunkGroup({ client: service.client(), headers: { 'SVC-Dataset': datasetId }, body: { name, tracking_id: name } });
    groups[name] = (data as { id: string }).id;
    for (const member of members) {
      const added = await service.request('POST', `/api/chunk_group/chunk/${groups[name]}`, {
        headers: { authorization: ADMIN_KEY, 'SVC-Dataset': datasetId },
        body: { chunk_id: ids[member] },
      });
      expect(added.status).toBe(204);
    }
  }
});
afterAll(async () => {
  await service?.stop();
});

describe.each(TYPES)('chunk recommendations by %s', (recommend_type) => {
  it('ranks the chunks most like the positive example first, and never returns the example', async () => {
    const { tracking } = await recommended({ positive_tracking_ids: ['tea-green'], recommend_type });
    expect(tracking.slice(0, 2).sort()).toEqual(['tea-black', 'tea-herbal']);
    expect(tracking).not.toContain('tea-green');
  });

  it('average_vector: a negative example lowers the chunks like it', async () => {
    const plain = await recommended({ positive_tracking_ids: ['tea-green'], recommend_type });
    const steered = await recommended({ positive_tracking_ids: ['tea-green'], negative_tracking_ids: ['rice'], recommend_type });
    expect(steered.score.pasta).toBeLessThan(plain.score.pasta);
    expect(steered.tracking).not.toContain('rice');
    expect(steered.tracking.slice(0, 2).sort()).toEqual(['tea-black', 'tea-herbal']);
  });

  it('best_score: a chunk closer to a negative than to every positive scores below zero', async () => {
    const { tracking, score } = await recommended({
      positive_tracking_ids: ['tea-green'],
      negative_tracking_ids: ['rice'],
      strategy: 'best_score',
      recommend_type,
    });
    expect(tracking.slice(0, 2).sort()).toEqual(['tea-black', 'tea-herbal']);
    expect(score['tea-herbal']).toBeGreaterThan(0);
    expect(score.pasta).toBeLessThan(0);
  });

  it('best_score with negatives only: the chunks least like them come first', async () => {
    const { tracking } = await recommended({ negative_tracking_ids: ['bike-road'], strategy: 'best_score', recommend_type });
    expect(tracking).toHaveLength(corpus.length - 1);
    expect(tracking.slice(-2).sort()).toEqual(['bike-chain', 'bike-mountain']);
  });

  it('recommends only chunks that pass the filter', async () => {
    const { tracking } = await recommended({
      positive_tracking_ids: ['tea-green'],
      recommend_type,
      filters: { must: [{ field: 'tag_set', match_any: ['cooking'] }] },
    });
    expect(tracking.sort()).toEqual(['pasta', 'rice']);
  });
});

describe('chunk recommendation shapes and options', () => {
  it('takes examples by id and by tracking id together, and honours the limit', async () => {
    const { tracking } = await recommended({ positive_chunk_ids: [ids['tea-black']], positive_tracking_ids: ['tea-green'], limit: 1 });
    expect(tracking).toEqual(['tea-herbal']);
  });

  it('answers in the V1 shape by default: records with their score and tags as text', async () => {
    const { data, response } = await getRecommendedChunks({
      client: service.client(),
      headers: { 'SVC-Dataset': datasetId },
      body: { positive_tracking_ids: ['tea-green'], limit: 2 },
    });
    expect(response.status).toBe(200);
    const records = data as ChunkMetadataWithScore[];
    expect(records).toHaveLength(2);
    expect(records[0]).toMatchObject({ tag_set: 'drinks', dataset_id: datasetId });
    expect(records[0].chunk_html).toContain('tea');
    expect(records[0].score).toBeGreaterThanOrEqual(records[1].score);
  });

  it('leaves chunk_html out with slim_chunks, in both versions', async () => {
    const v1 = await recommend({ positive_tracking_ids: ['tea-green'], slim_chunks: true, limit: 2 }, 'V1');
    expect(v1.body[0]).not.toHaveProperty('chunk_html');
    expect(v1.body[0]).toHaveProperty('score');
    const v2 = await recommend({ positive_tracking_ids: ['tea-green'], slim_chunks: true, limit: 2 }, 'V2');
    expect(v2.body.chunks[0].chunk).not.toHaveProperty('chunk_html');
    expect(v2.body.chunks[0].chunk.tag_set).toEqual(['drinks']);
  });

  it('records the recommendation for analytics', async () => {
    const reply = await recommend({
      positive_tracking_ids: ['tea-green'],
      negative_chunk_ids: [ids.rice],
      user_id: 'user-7',
      metadata: { page: 'home' },
      limit: 3,
    });
    const body = reply.body as RecommendChunksResponseBody;
    await service.services.deferred.flush();
    const row = await db()('recommendation_queries').where({ id: body.id }).first();
    expect(row).toMatchObject({
      dataset_id: datasetId,
      recommendation_type: 'Chunk',
      positive_ids: [],
      negative_ids: [ids.rice],
      positive_tracking_ids: ['tea-green'],
      negative_tracking_ids: [],
      user_id: 'user-7',
      metadata: { page: 'home' },
    });
    expect(row.results.map((r: { chunk_id: string }) => r.chunk_id)).toEqual(body.chunks.map((c) => c.chunk.id));
    expect(row.top_score).toBeCloseTo(body.chunks[0].score, 5);
    expect(row.request_params).toMatchObject({ limit: 3, user_id: 'user-7' });
  });

  it('records nothing when the dataset disables analytics', async () => {
    const quiet = await newDataset('quiet', { DISABLE_ANALYTICS: true });
    await createChunk({ client: service.client(), headers: { 'SVC-Dataset': quiet }, body: corpus.slice(0, 3) });
    const reply = await recommend({ positive_tracking_ids: ['tea-green'] }, 'V2', quiet);
    expect(reply.status).toBe(200);
    expect(reply.body.chunks.length).toBe(2);
    await service.services.deferred.flush();
    expect(Number((await db()('recommendation_queries').where({ dataset_id: quiet }).count('* as n').first())!.n)).toBe(0);
  });
});

describe('chunk recommendation refusals', () => {
  let limited: string;
  let manyIds: string[];
  beforeAll(async () => {
    limited = await newDataset('limited', { MAX_LIMIT: 5, BM25_ENABLED: false });
    const many = Array.from({ length: 65 }, (_, i) => ({ chunk_html: `<p>note ${i}</p>`, tracking_id: `note-${i}` }));
    const created = await createChunk({ client: service.client(), headers: { 'SVC-Dataset': limited }, body: many });
    manyIds = (created.data as { chunk_metadata: { id: string }[] }).chunk_metadata.map((c) => c.id);
  });

  it.each([
    [{}, 400, /positive_chunk_ids or positive_tracking_ids: average_vector needs at least one positive/],
    [{ negative_tracking_ids: ['rice'] }, 400, /average_vector needs at least one positive/],
    [{ strategy: 'best_score' }, 400, /give at least one example/],
    [
      { positive_chunk_ids: ['00000000-0000-4000-8000-00000000abcd'] },
      404,
      /positive_chunk_ids: 00000000-0000-4000-8000-00000000abcd is not a chunk of this dataset/,
    ],
    [{ positive_tracking_ids: ['tea-green', 'no-such'] }, 404, /positive_tracking_ids: no chunk of this dataset has the tracking id no-such/],
    [{ positive_tracking_ids: ['tea-green'], negative_tracking_ids: ['tea-green'] }, 400, /both a positive and a negative example/],
    [{ positive_tracking_ids: ['tea-green'], filters: { must: [{ field: 'colour', match_any: ['red'] }] } }, 400, /filters\.must\[0\].*colour/],
    [{ positive_tracking_ids: ['tea-green'], strategy: 'most_similar' }, 400, /strategy/],
  ])('%j is refused with %i', async (body, status, message) => {
    const reply = await recommend(body);
    expect(reply.status).toBe(status);
    expect(reply.body.message).toMatch(message);
  });

  it('refuses a limit over MAX_LIMIT, a disabled type, and too many examples for best_score', async () => {
    const over = await recommend({ positive_tracking_ids: ['note-1'], limit: 6 }, 'V2', limited);
    expect(over.status).toBe(400);
    expect(over.body.message).toMatch(/limit: 6 chunks is over the dataset's MAX_LIMIT of 5/);
    const disabled = await recommend({ positive_tracking_ids: ['note-1'], recommend_type: 'bm25', limit: 5 }, 'V2', limited);
    expect(disabled.status).toBe(400);
    expect(disabled.body.message).toMatch(/BM25_ENABLED/);
    const crowded = await recommend({ positive_chunk_ids: manyIds, strategy: 'best_score', limit: 5 }, 'V2', limited);
    expect(crowded.status).toBe(400);
    expect(crowded.body.message).toMatch(/at most 64 example chunks; these are 65/);
    // average_vector takes any number of examples.
    const averaged = await recommend({ positive_chunk_ids: manyIds.slice(0, 60), limit: 5 }, 'V2', limited);
    expect(averaged.status).toBe(200);
    expect(averaged.body.chunks.map((c: { chunk: { id: string } }) => c.chunk.id).every((id: string) => !manyIds.slice(0, 60).includes(id))).toBe(true);
  });
});

describe.each(TYPES)('group recommendations by %s', (recommend_type) => {
  it('ranks the groups whose chunks are most like the examples first; example groups do not come back', async () => {
    const reply = await recommendGroups({ positive_group_ids: [groups['tea-a']], recommend_type });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    const names = (reply.body as RecommendGroupsResponseBody).results.map((r) => r.group.name);
    expect(names[0]).toBe('tea-b');
    expect(names).not.toContain('tea-a');
    expect(names).not.toContain('empty');
    expect(new Set(names).size).toBe(names.length);
  });
});

describe('group recommendation shapes and options', () => {
  it('shows each group with its best group_size chunks, best first', async () => {
    const reply = await recommendGroups({ positive_group_tracking_ids: ['tea-a'], group_size: 1 });
    const results = (reply.body as RecommendGroupsResponseBody).results;
    const bikes = results.find((r) => r.group.name === 'bikes-a')!;
    expect(bikes.chunks).toHaveLength(1);
    for (const result of results) {
      expect(result.chunks.length).toBeLessThanOrEqual(1);
      expect(groupMembers[result.group.name]).toContain(result.chunks[0].chunk.tracking_id);
    }
    const wide = await recommendGroups({ positive_group_tracking_ids: ['tea-a'], group_size: 5 });
    const cooking = (wide.body as RecommendGroupsResponseBody).results.find((r) => r.group.name === 'cooking')!;
    expect(cooking.chunks.map((c) => c.chunk.tracking_id).sort()).toEqual(['pasta', 'rice']);
    expect(cooking.chunks[0].score).toBeGreaterThanOrEqual(cooking.chunks[1].score);
    const bare = await recommendGroups({ positive_group_tracking_ids: ['tea-a'], group_size: 0 });
    expect((bare.body as RecommendGroupsResponseBody).results.every((r) => r.chunks.length === 0)).toBe(true);
    expect((bare.body as RecommendGroupsResponseBody).results.length).toBeGreaterThan(0);
  });

  it('leaves out the negative groups and honours the limit', async () => {
    const reply = await recommendGroups({ positive_group_ids: [groups['tea-a']], negative_group_tracking_ids: ['cooking'], limit: 2 });
    const names = (reply.body as RecommendGroupsResponseBody).results.map((r) => r.group.name);
    expect(names).toHaveLength(2);
    expect(names[0]).toBe('tea-b');
    expect(names).not.toContain('cooking');
  });

  it('answers in the V1 shape by default: a list of groups with their chunks as metadata', async () => {
    const { data, response } = await getRecommendedGroups({
      client: service.client(),
      headers: { 'SVC-Dataset': datasetId },
      body: { positive_group_ids: [groups['tea-a']], limit: 2, slim_chunks: true },
    });
    expect(response.status).toBe(200);
    const list = data as unknown as GroupScoreChunk[];
    expect(list[0]).toMatchObject({ group_id: groups['tea-b'], group_name: 'tea-b', group_tracking_id: 'tea-b', group_dataset_id: datasetId });
    expect(list[0].metadata[0].metadata[0]).toMatchObject({ tracking_id: 'tea-herbal', tag_set: 'drinks' });
    expect(list[0].metadata[0].metadata[0]).not.toHaveProperty('chunk_html');
  });

  it('records the recommendation with the groups it named and found', async () => {
    const reply = await recommendGroups({ positive_group_ids: [groups['tea-a']], negative_group_tracking_ids: ['cooking'], user_id: 'user-9' });
    const body = reply.body as RecommendGroupsResponseBody;
    await service.services.deferred.flush();
    const row = await db()('recommendation_queries').where({ id: body.id }).first();
    expect(row).toMatchObject({ recommendation_type: 'Group', positive_ids: [groups['tea-a']], negative_tracking_ids: ['cooking'], user_id: 'user-9' });
    expect(row.results.map((r: { group_id: string }) => r.group_id)).toEqual(body.results.map((r) => r.group.id));
    expect(row.top_score).toBeCloseTo(body.results[0].chunks[0].score, 5);
  });

  it.each([
    [{}, 400, /positive_group_ids or positive_group_tracking_ids: give at least one positive group/],
    [{ negative_group_ids: ['00000000-0000-4000-8000-00000000abcd'] }, 404, /negative_group_ids: .* is not a group of this dataset/],
    [{ positive_group_tracking_ids: ['nope'] }, 404, /positive_group_tracking_ids: no group of this dataset has the tracking id nope/],
    [{ positive_group_tracking_ids: ['empty'] }, 400, /the positive groups hold no chunks/],
    [{ positive_group_tracking_ids: ['tea-a'], limit: 100000 }, 400, /MAX_LIMIT/],
  ])('%j is refused with %i', async (body, status, message) => {
    const reply = await recommendGroups(body);
    expect(reply.status).toBe(status);
    expect(reply.body.message).toMatch(message);
  });
});
