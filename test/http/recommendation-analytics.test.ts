// Recommendation analytics over HTTP: every report of POST /api/analytics/recommendations over
// recommendations recorded at chosen instants and the events sent about them (exact counts, rates
// and averages, empty buckets filled, order, pages, each filter), a recommendation made through the
// API reported right after, the admin role, and bad input refused with nothing recorded.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createChunk, createOrganization, createOrganizationApiKey, getRecommendationAnalytics } from '../../sdk/src/generated/sdk.gen.js';
import type { RecommendationAnalytics } from '../../sdk/src/generated/types.gen.js';
import { seedChunk, seedRecommendation } from '../support/seed.js';
import { ADMIN_KEY, startTestService, type TestService } from '../support/service.js';

let service: TestService;
let orgId: string;
const db = () => service.services.store.db;
const ds = (id: string) => ({ 'SVC-Dataset': id });

/** The main dataset's recommendations, in the order they were made; `ids[n]` is the id of recommendation n + 1. */
let main: string;
const ids: string[] = [];
let chunkA: string;
let chunkB: string;

interface Seeded {
  at: string;
  type: 'Chunk' | 'Group';
  score: number;
  user?: string;
  component?: string;
}

// 1 March: five recommendations (three at 10h, two at 12h); 2 March: two.
const SEEDED: Seeded[] = [
  { at: '2024-03-01 10:05:00', type: 'Chunk', score: 0.9, user: 'u1' },
  { at: '2024-03-01 10:20:00', type: 'Chunk', score: 0.8, user: 'u1' },
  { at: '2024-03-01 10:40:00', type: 'Group', score: 0.2, user: 'u2', component: 'widget' },
  { at: '2024-03-01 12:10:00', type: 'Chunk', score: 0, user: 'u2' },
  { at: '2024-03-01 12:50:00', type: 'Chunk', score: 0.5 },
  { at: '2024-03-02 09:00:00', type: 'Group', score: 0.3, user: 'u3' },
  { at: '2024-03-02 09:30:00', type: 'Chunk', score: 0.7, user: 'u1', component: 'widget' },
];

function record(datasetId: string, s: Seeded): Promise<string> {
  const metadata = s.component ? { component_props: { componentName: s.component } } : undefined;
  return seedRecommendation(db(), datasetId, {
    recommendation_type: s.type,
    positive_ids: [chunkA],
    top_score: s.score,
    user_id: s.user ?? null,
    request_params: { positive_chunk_ids: [chunkA], limit: 2, ...(s.user && { user_id: s.user }), ...(metadata && { metadata }) },
    results: [{ chunk_id: chunkB, score: s.score }],
    created_at: `${s.at}Z`,
  });
}

async function report(body: RecommendationAnalytics, datasetId = main): Promise<any> {
  const { data } = await getRecommendationAnalytics({ client: service.client(), headers: ds(datasetId), body, throwOnError: true });
  return data;
}

const day = (from: string, to: string) => ({ date_range: { gte: from, lt: to } });
const points = (r: { points: { time_stamp: string; point: number }[] }) => r.points.map((p) => [p.time_stamp, p.point]);
const numbers = (r: { queries: { id: string }[] }) => r.queries.map((q) => ids.indexOf(q.id) + 1);

beforeAll(async () => {
  service = await startTestService();
  orgId = (await createOrganization({ client: service.client(), body: { name: 'Recommendation analytics' } })).data!.id;
  main = (await service.newDataset(orgId, 'shop')).id;
  chunkA = await seedChunk(db(), main, { tracking_id: 'a', chunk_html: '<p>Red shoes</p>' });
  chunkB = await seedChunk(db(), main, { tracking_id: 'b', chunk_html: '<p>Blue hat</p>' });
  for (const s of SEEDED) ids.push(await record(main, s));
  // What users did: clicks on recommendations 1 (twice), 3 and 6, a purchase after 2, a view (no
  // conversion) and an add to cart after 7; a purchase after none and a click on a search, which
  // no recommendation report counts but the funnel's users.
  const event = (at: string, type: string, name: string, about: number | 'search' | null, user: string, extra: Record<string, unknown> = {}) => ({
    id: randomUUID(),
    dataset_id: main,
    event_type: type,
    event_name: name,
    request_id: about === null ? null : about === 'search' ? randomUUID() : ids[about - 1],
    request_type: about === null ? null : about === 'search' ? 'search' : 'recommendation',
    items: [],
    user_id: user,
    is_conversion: type !== 'view',
    created_at: `${at}Z`,
    ...extra,
  });
  await db()('analytics_events').insert([
    event('2024-03-01 10:06:00', 'click', 'click', 1, 'u1', { clicked_chunk_id: chunkB, position: 0 }),
    event('2024-03-01 10:07:00', 'click', 'click', 1, 'u1', { clicked_chunk_id: chunkB, position: 0 }),
    event('2024-03-01 10:41:00', 'click', 'click', 3, 'u2', { clicked_chunk_id: chunkB, position: 0 }),
    event('2024-03-02 09:01:00', 'click', 'click', 6, 'u3', { clicked_chunk_id: chunkB, position: 0 }),
    event('2024-03-01 10:30:00', 'purchase', 'purchase_done', 2, 'u1', { revenue: 30 }),
    event('2024-03-02 09:35:00', 'view', 'product_view', 7, 'u1'),
    event('2024-03-02 09:36:00', 'add_to_cart', 'cart_add', 7, 'u1'),
    event('2024-03-02 12:00:00', 'purchase', 'purchase_done', null, 'u4', { revenue: 12.5 }),
    event('2024-03-01 11:00:00', 'click', 'click', 'search', 'u5', { clicked_chunk_id: chunkA, position: 1 }),
  ]);
});
afterAll(async () => {
  await service?.stop();
});

describe('graphs', () => {
  it('recommendation_usage_graph counts each hour, the hours without recommendations as 0', async () => {
    const r = await report({ type: 'recommendation_usage_graph', filter: day('2024-03-01 10:00', '2024-03-01 14:00') });
    expect(r.total_requests).toBe(5);
    expect(points(r)).toEqual([
      ['2024-03-01 10:00:00.000', 3],
      ['2024-03-01 11:00:00.000', 0],
      ['2024-03-01 12:00:00.000', 2],
      ['2024-03-01 13:00:00.000', 0],
    ]);
  });

  it('recommendation_usage_graph by minute, day and month, each filter', async () => {
    const minutes = await report({ type: 'recommendation_usage_graph', granularity: 'minute', filter: day('2024-03-01 10:00', '2024-03-01 10:30') });
    expect(minutes.points).toHaveLength(30);
    expect(minutes.points.filter((p: { point: number }) => p.point > 0).map((p: { time_stamp: string }) => p.time_stamp)).toEqual([
      '2024-03-01 10:05:00.000',
      '2024-03-01 10:20:00.000',
    ]);
    const days = await report({
      type: 'recommendation_usage_graph',
      granularity: 'day',
      filter: { date_range: { gte: '2024-02-29', lte: '2024-03-02 23:59:59.999' } },
    });
    expect(points(days)).toEqual([
      ['2024-02-29 00:00:00.000', 0],
      ['2024-03-01 00:00:00.000', 5],
      ['2024-03-02 00:00:00.000', 2],
    ]);
    const months = await report({ type: 'recommendation_usage_graph', granularity: 'month', filter: day('2024-01-15', '2024-04-01') });
    expect(points(months)).toEqual([
      ['2024-01-01 00:00:00.000', 0],
      ['2024-02-01 00:00:00.000', 0],
      ['2024-03-01 00:00:00.000', 7],
    ]);
    const byFilter = async (filter: Record<string, unknown>) =>
      (await report({ type: 'recommendation_usage_graph', granularity: 'month', filter: { ...day('2024-03-01', '2024-04-01'), ...filter } })).total_requests;
    expect(await byFilter({ recommendation_type: 'Group' })).toBe(2);
    expect(await byFilter({ top_score: { gte: 0.5, lt: 0.9 } })).toBe(3);
    expect(await byFilter({ component_name: 'widget' })).toBe(2);
  });

  it('without a start, begins at the first recommendation; without an end, runs to now', async () => {
    const r = await report({ type: 'recommendation_usage_graph', granularity: 'month' });
    expect(r.points[0]).toEqual({ time_stamp: '2024-03-01 00:00:00.000', point: 7 });
    const now = new Date();
    const thisMonth = `${now.getUTCFullYear()}-${String(now.getUTCMonth() + 1).padStart(2, '0')}-01 00:00:00.000`;
    expect(r.points.at(-1)).toEqual({ time_stamp: thisMonth, point: 0 });
    expect(r.total_requests).toBe(7);
  });

  it('recommendations_per_user divides the recommendations of each bucket by their users (no user id is one user)', async () => {
    const r = await report({ type: 'recommendations_per_user', granularity: 'day', filter: day('2024-02-29', '2024-03-03') });
    // 1 March: u1 twice, u2 twice, one without a user; 2 March: u3 once, u1 once.
    expect(points(r)).toEqual([
      ['2024-02-29 00:00:00.000', 0],
      ['2024-03-01 00:00:00.000', 5 / 3],
      ['2024-03-02 00:00:00.000', 1],
    ]);
    expect(r.avg_recommendations_per_user).toBeCloseTo((5 / 3 + 1) / 2, 10);
  });

  it('recommendations_ctr_rate: clicks over recommendations in each bucket', async () => {
    const r = await report({ type: 'recommendations_ctr_rate', granularity: 'day', filter: day('2024-02-29', '2024-03-03') });
    // 1 March: 3 clicks (the click on a search not among them), 5 recommendations; 2 March: 1 click, 2 recommendations.
    expect(points(r)).toEqual([
      ['2024-02-29 00:00:00.000', 0],
      ['2024-03-01 00:00:00.000', 0.6],
      ['2024-03-02 00:00:00.000', 0.5],
    ]);
    expect(r.total_ctr).toBeCloseTo(0.55, 10);
    // Only group recommendations: 3 on 1 March and 6 on 2 March, each clicked once.
    const groups = await report({
      type: 'recommendations_ctr_rate',
      granularity: 'day',
      filter: { ...day('2024-03-01', '2024-03-03'), recommendation_type: 'Group' },
    });
    expect([points(groups), groups.total_ctr]).toEqual([
      [
        ['2024-03-01 00:00:00.000', 1],
        ['2024-03-02 00:00:00.000', 1],
      ],
      1,
    ]);
  });

  it('recommendation_conversion_rate: conversion events about recommendations over recommendations', async () => {
    const r = await report({ type: 'recommendation_conversion_rate', granularity: 'day', filter: day('2024-03-01', '2024-03-03') });
    // 1 March: 3 clicks and a purchase over 5; 2 March: a click and an add to cart over 2 (the view is no conversion).
    expect(points(r)).toEqual([
      ['2024-03-01 00:00:00.000', 4 / 5],
      ['2024-03-02 00:00:00.000', 1],
    ]);
    expect(r.conversion_rate).toBe(6 / 7);
    const hourly = await report({
      type: 'recommendation_conversion_rate',
      filter: { ...day('2024-03-01 10:00', '2024-03-01 12:00'), top_score: { gte: 0.85 } },
    });
    // Only recommendation 1, at 10h: its two clicks.
    expect([points(hourly), hourly.conversion_rate]).toEqual([
      [
        ['2024-03-01 10:00:00.000', 2],
        ['2024-03-01 11:00:00.000', 0],
      ],
      2,
    ]);
  });

  it('a graph of nothing has its buckets at 0 and figures of 0', async () => {
    const r = await report({ type: 'recommendations_ctr_rate', granularity: 'day', filter: day('2020-01-01', '2020-01-03') });
    expect([points(r), r.total_ctr]).toEqual([
      [
        ['2020-01-01 00:00:00.000', 0],
        ['2020-01-02 00:00:00.000', 0],
      ],
      0,
    ]);
  });
});

describe('lists', () => {
  it('low_confidence_recommendations: lowest top score first, below the threshold', async () => {
    expect(numbers(await report({ type: 'low_confidence_recommendations' }))).toEqual([4, 3, 6, 5, 7, 2, 1]);
    expect(numbers(await report({ type: 'low_confidence_recommendations', threshold: 0.5 }))).toEqual([4, 3, 6]);
    expect(numbers(await report({ type: 'low_confidence_recommendations', filter: { recommendation_type: 'Chunk' }, threshold: 0.75 }))).toEqual([4, 5, 7]);
  });

  it('recommendation_queries: newest first by default, each sort, clicked or not, each filter', async () => {
    expect(numbers(await report({ type: 'recommendation_queries' }))).toEqual([7, 6, 5, 4, 3, 2, 1]);
    expect(numbers(await report({ type: 'recommendation_queries', sort_by: 'created_at', sort_order: 'asc' }))).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(numbers(await report({ type: 'recommendation_queries', sort_by: 'top_score', sort_order: 'desc' }))).toEqual([1, 2, 7, 5, 6, 3, 4]);
    expect(numbers(await report({ type: 'recommendation_queries', has_clicks: true }))).toEqual([6, 3, 1]);
    expect(numbers(await report({ type: 'recommendation_queries', has_clicks: false }))).toEqual([7, 5, 4, 2]);
    expect(numbers(await report({ type: 'recommendation_queries', filter: { top_score: { gte: 0.5 } } }))).toEqual([7, 5, 2, 1]);
    expect(numbers(await report({ type: 'recommendation_queries', filter: { component_name: 'widget' } }))).toEqual([7, 3]);
    expect(numbers(await report({ type: 'recommendation_queries', filter: day('2024-03-01 10:20', '2024-03-01 12:50') }))).toEqual([4, 3, 2]);
  });

  it('pages of ten', async () => {
    const many = (await service.newDataset(orgId, 'many')).id;
    const made: string[] = [];
    for (let i = 0; i < 23; i++) {
      made.push(await seedRecommendation(db(), many, { top_score: i / 100, created_at: new Date(Date.UTC(2024, 4, 1, 0, i)) }));
    }
    const page = async (n: number | undefined, type: 'recommendation_queries' | 'low_confidence_recommendations') =>
      (await report({ type, ...(n !== undefined && { page: n }) }, many)).queries.map((q: { id: string }) => made.indexOf(q.id));
    expect(await page(undefined, 'recommendation_queries')).toEqual([22, 21, 20, 19, 18, 17, 16, 15, 14, 13]);
    expect(await page(0, 'recommendation_queries')).toEqual(await page(1, 'recommendation_queries'));
    expect(await page(3, 'recommendation_queries')).toEqual([2, 1, 0]);
    expect(await page(2, 'low_confidence_recommendations')).toEqual([10, 11, 12, 13, 14, 15, 16, 17, 18, 19]);
    expect(await page(4, 'low_confidence_recommendations')).toEqual([]);
  });

  it('query_details: one recommendation, as recorded', async () => {
    expect(await report({ type: 'query_details', request_id: ids[2] })).toEqual({
      id: ids[2],
      dataset_id: main,
      recommendation_type: 'Group',
      positive_ids: [chunkA],
      negative_ids: [],
      positive_tracking_ids: [],
      negative_tracking_ids: [],
      request_params: { positive_chunk_ids: [chunkA], limit: 2, user_id: 'u2', metadata: { component_props: { componentName: 'widget' } } },
      results: [{ chunk_id: chunkB, score: 0.2 }],
      top_score: 0.2,
      user_id: 'u2',
      metadata: null,
      created_at: '2024-03-01 10:40:00.000',
    });
    expect((await report({ type: 'query_details', request_id: ids[4] })).user_id).toBe('');
  });
});

describe('event_funnel', () => {
  it('users who asked for recommendations, who sent any event, who sent each event; most first', async () => {
    const r = await report({ type: 'event_funnel', filter: day('2024-03-01', '2024-03-03') });
    // Asked: u1, u2, u3 and one without a user id. Events: u1, u2, u3, u4, u5.
    expect(r.event_names).toEqual([
      { event_name: 'all_users', event_count: 5 },
      { event_name: 'click', event_count: 4 },
      { event_name: 'recommendation_created', event_count: 4 },
      { event_name: 'purchase_done', event_count: 2 },
      { event_name: 'cart_add', event_count: 1 },
      { event_name: 'product_view', event_count: 1 },
    ]);
    // Chunk recommendations were asked for by u1, u2 and one without a user id; the events stay as they are.
    const chunks = await report({ type: 'event_funnel', filter: { ...day('2024-03-01', '2024-03-03'), recommendation_type: 'Chunk' } });
    expect(chunks.event_names.find((e: { event_name: string }) => e.event_name === 'recommendation_created').event_count).toBe(3);
    expect(chunks.event_names.find((e: { event_name: string }) => e.event_name === 'all_users').event_count).toBe(5);
    // 2 March only: asked by u3 and u1; events from u3, u1 and u4.
    const second = await report({ type: 'event_funnel', filter: day('2024-03-02', '2024-03-03') });
    expect(second.event_names).toEqual([
      { event_name: 'all_users', event_count: 3 },
      { event_name: 'recommendation_created', event_count: 2 },
      { event_name: 'cart_add', event_count: 1 },
      { event_name: 'click', event_count: 1 },
      { event_name: 'product_view', event_count: 1 },
      { event_name: 'purchase_done', event_count: 1 },
    ]);
  });
});

describe('a recommendation made through the API', () => {
  it('is reported right after its answer', async () => {
    const live = (await service.newDataset(orgId, 'live')).id;
    await createChunk({
      client: service.client(),
      headers: ds(live),
      body: [
        { tracking_id: 'kettle', chunk_html: '<p>The kettle boils water fast.</p>' },
        { tracking_id: 'teapot', chunk_html: '<p>The teapot keeps water hot.</p>' },
      ],
      throwOnError: true,
    });
    const made = await service.request('POST', '/api/chunk/recommend', {
      headers: { authorization: ADMIN_KEY, ...ds(live), 'X-API-Version': 'V2' },
      body: { positive_tracking_ids: ['kettle'], user_id: 'visitor', limit: 1 },
    });
    expect(made.status).toBe(200);
    const details = await report({ type: 'query_details', request_id: made.body.id }, live);
    expect(details).toMatchObject({
      id: made.body.id,
      recommendation_type: 'Chunk',
      positive_tracking_ids: ['kettle'],
      user_id: 'visitor',
      results: [{ chunk_id: made.body.chunks[0].chunk.id }],
    });
    expect((await report({ type: 'recommendation_usage_graph', granularity: 'day' }, live)).total_requests).toBe(1);
  });
});

describe('who may', () => {
  it("an admin key of the dataset's organization; a read key is refused", async () => {
    const key = async (role: 0 | 1) =>
      (
        await createOrganizationApiKey({
          client: service.client(),
          headers: { 'SVC-Organization': orgId },
          body: { name: `role ${role}`, role },
          throwOnError: true,
        })
      ).data.api_key;
    const [reader, admin] = [await key(0), await key(1)];
    const read = await getRecommendationAnalytics({ client: service.client(reader), headers: ds(main), body: { type: 'recommendation_usage_graph' } });
    expect([read.response.status, read.error?.message]).toEqual([403, expect.stringMatching(/admin/)]);
    const usage = await getRecommendationAnalytics({
      client: service.client(admin),
      headers: ds(main),
      body: { type: 'recommendation_usage_graph', granularity: 'month' },
    });
    expect([usage.response.status, (usage.data as { total_requests: number }).total_requests]).toEqual([200, 7]);
  });
});

describe('bad input', () => {
  const recorded = async () => ({
    recommendations: Number((await db()('recommendation_queries').count({ n: '*' }))[0].n),
    events: Number((await db()('analytics_events').count({ n: '*' }))[0].n),
  });
  let before: unknown;
  let foreign: string;
  beforeAll(async () => {
    const other = (await service.newDataset(orgId, 'other')).id;
    foreign = await seedRecommendation(db(), other, { created_at: '2024-03-01T10:00:00Z' });
    before = await recorded();
  });
  afterAll(async () => {
    expect(await recorded()).toEqual(before);
  });

  const post = (body: unknown) => service.request('POST', '/api/analytics/recommendations', { headers: { authorization: ADMIN_KEY, ...ds(main) }, body });

  it('an unknown type is named', async () => {
    const reply = await post({ type: 'recommendation_wishes' });
    expect(reply.status).toBe(400);
    expect(reply.body.message).toMatch(/'type' must be equal to one of the allowed values: .*recommendation_usage_graph/);
  });

  it('a range that ends before it starts, a bound that is no instant, a score range of nothing', async () => {
    let reply = await post({ type: 'recommendation_usage_graph', filter: { date_range: { gte: '2024-03-02', lt: '2024-03-01' } } });
    expect(reply.status).toBe(400);
    expect(reply.body.message).toMatch(/filter\.date_range: the range starts .* after it ends/);
    reply = await post({ type: 'recommendation_queries', filter: { date_range: { gt: 'yesterday' } } });
    expect(reply.status).toBe(400);
    expect(reply.body.message).toMatch(/filter\.date_range\.gt: yesterday is not a timestamp/);
    reply = await post({ type: 'low_confidence_recommendations', filter: { top_score: { gte: 0.8, lte: 0.2 } } });
    expect(reply.status).toBe(400);
    expect(reply.body.message).toMatch(/filter\.top_score/);
  });

  it('a graph of too many buckets', async () => {
    const reply = await post({ type: 'recommendations_per_user', granularity: 'second', filter: day('2024-03-01', '2024-03-03') });
    expect(reply.status).toBe(400);
    expect(reply.body.message).toMatch(/172800 buckets, more than 10000/);
  });

  it('fields the report does not take, or of the wrong shape', async () => {
    for (const body of [
      null,
      [],
      'event_funnel',
      { type: 'query_details' },
      { type: 'query_details', request_id: 'not-a-uuid' },
      { type: 'recommendation_usage_graph', granularity: 'week' },
      { type: 'recommendation_queries', sort_by: 'latency' },
      { type: 'recommendation_queries', filter: { recommendation_type: 'Topic' } },
      { type: 'low_confidence_recommendations', page: -1 },
    ]) {
      const reply = await post(body);
      expect(reply.status, JSON.stringify(body)).toBe(400);
      expect(reply.body.message).toBeTruthy();
    }
  });

  it('a recommendation of another dataset is not found, as an unknown one', async () => {
    for (const id of [foreign, randomUUID()]) {
      const reply = await post({ type: 'query_details', request_id: id });
      expect(reply.status).toBe(404);
      expect(reply.body.message).toBe(`recommendation ${id} not found`);
    }
  });
});
