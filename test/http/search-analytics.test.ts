// Search analytics over HTTP: every report of POST /api/analytics/search over searches recorded at
// chosen instants (exact counts, averages, percentiles within the histogram's precision, empty
// buckets filled, order, pages, each filter), the roll-ups answering as the searches themselves
// would, rating a search (PUT), and bad input refused with nothing changed.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createChunk,
  createOrganization,
  createOrganizationApiKey,
  getSearchAnalytics,
  searchChunks,
  setSearchQueryRating,
} from '../../sdk/src/generated/sdk.gen.js';
import type { SearchAnalytics, SearchResponseBody } from '../../sdk/src/generated/types.gen.js';
import { seedChunk } from '../support/seed.js';
import { ADMIN_KEY, startTestService, type TestService } from '../support/service.js';

let service: TestService;
let orgId: string;
const db = () => service.services.store.db;
const ds = (id: string) => ({ 'SVC-Dataset': id });

/** The main dataset's searches, in the order they were made; `ids[n]` is the id of search n + 1. */
let main: string;
const ids: string[] = [];
let chunkA: string;
let chunkB: string;
const deletedChunk = randomUUID();

interface Seeded {
  at: string;
  search_type: string;
  method: string;
  query: string;
  latency: number;
  score: number;
  results: string[];
  user?: string;
  extra?: Record<string, unknown>;
}

async function record(datasetId: string, s: Seeded): Promise<string> {
  const id = randomUUID();
  await db()('search_queries').insert({
    id,
    dataset_id: datasetId,
    search_type: s.search_type,
    query: s.query,
    request_params: JSON.stringify({ search_type: s.method, page_size: 10, ...s.extra }),
    latency_ms: s.latency,
    top_score: s.score,
    results: s.results,
    user_id: s.user ?? null,
    created_at: `${s.at}Z`,
  });
  return id;
}

async function report(body: SearchAnalytics, datasetId = main): Promise<any> {
  const { data } = await getSearchAnalytics({ client: service.client(), headers: ds(datasetId), body, throwOnError: true });
  return data;
}

const day = (from: string, to: string) => ({ date_range: { gte: from, lt: to } });
const points = (r: { points: { time_stamp: string; point: number }[] }) => r.points.map((p) => [p.time_stamp, p.point]);
const queryIds = (r: { queries: { id: string }[] }) => r.queries.map((q) => ids.indexOf(q.id) + 1);

beforeAll(async () => {
  service = await startTestService();
  orgId = (await createOrganization({ client: service.client(), body: { name: 'Analytics' } })).data!.id;
  main = (await service.newDataset(orgId, 'shop')).id;
  chunkA = await seedChunk(db(), main, { tracking_id: 'a', chunk_html: '<p>Red shoes</p>' });
  chunkB = await seedChunk(db(), main, { tracking_id: 'b', chunk_html: '<p>Blue hat</p>' });
  const tagFilter = (values: string[]) => ({ filters: { must: [{ field: 'tag_set', match_any: values }] } });
  const seeded: Seeded[] = [
    {
      at: '2024-03-01 10:05:00',
      search_type: 'hybrid',
      method: 'hybrid',
      query: 'red shoes',
      latency: 10,
      score: 0.9,
      results: [chunkA, chunkB],
      user: 'u1',
      extra: tagFilter(['red', 'blue']),
    },
    {
      at: '2024-03-01 10:20:00',
      search_type: 'hybrid',
      method: 'hybrid',
      query: 'red shoes',
      latency: 20,
      score: 0.8,
      results: [chunkA],
      user: 'u1',
      extra: tagFilter(['red']),
    },
    { at: '2024-03-01 10:40:00', search_type: 'semantic', method: 'semantic', query: 'blue hat', latency: 30, score: 0.2, results: [chunkB], user: 'u2' },
    { at: '2024-03-01 12:10:00', search_type: 'autocomplete_fulltext', method: 'fulltext', query: 'red', latency: 40, score: 0, results: [], user: 'u2' },
    {
      at: '2024-03-01 12:50:00',
      search_type: 'search_over_groups_hybrid',
      method: 'hybrid',
      query: 'red shoes',
      latency: 50,
      score: 0.5,
      results: [chunkA],
      extra: { filters: { must_not: [{ field: 'num_value', range: { gte: 10 } }] } },
    },
    { at: '2024-03-02 09:00:00', search_type: 'hybrid', method: 'hybrid', query: 'green scarf', latency: 60, score: 0, results: [], user: 'u3' },
    {
      at: '2024-03-02 09:30:00',
      search_type: 'rag_chunks',
      method: 'semantic',
      query: 'what is red',
      latency: 70,
      score: 0.7,
      results: [deletedChunk],
      user: 'u1',
    },
    {
      at: '2024-03-02 11:00:00',
      search_type: 'search_within_groups_bm25',
      method: 'bm25',
      query: 'blue hat',
      latency: 80,
      score: 0.1,
      results: [chunkB],
      user: 'u3',
      extra: { metadata: { component_props: { componentName: 'widget' } } },
    },
  ];
  // One statement each, as the service records them in batches: the roll-ups add up statement by statement.
  for (const s of seeded) ids.push(await record(main, s));
  const rate = (n: number, rating: number) =>
    setSearchQueryRating({ client: service.client(), headers: ds(main), body: { query_id: ids[n - 1], rating }, throwOnError: true });
  await rate(1, 1);
  await rate(3, 0);
  await rate(6, 5);
  // What users did: clicks on searches 1 (twice), 3 and 6, a purchase after search 2 and one after
  // no search, a view (no conversion) and an add to cart after search 8.
  const event = (at: string, type: string, name: string, search: number | null, user: string, extra: Record<string, unknown> = {}) => ({
    id: randomUUID(),
    dataset_id: main,
    event_type: type,
    event_name: name,
    request_id: search ? ids[search - 1] : null,
    request_type: search ? 'search' : null,
    items: [],
    user_id: user,
    is_conversion: type !== 'view',
    created_at: `${at}Z`,
    ...extra,
  });
  await db()('analytics_events').insert([
    event('2024-03-01 10:06:00', 'click', 'click', 1, 'u1', { clicked_chunk_id: chunkA, position: 0 }),
    event('2024-03-01 10:07:00', 'click', 'click', 1, 'u1', { clicked_chunk_id: chunkB, position: 1 }),
    event('2024-03-01 10:41:00', 'click', 'click', 3, 'u2', { clicked_chunk_id: chunkB, position: 0 }),
    event('2024-03-02 09:01:00', 'click', 'click', 6, 'u3'),
    event('2024-03-01 10:30:00', 'purchase', 'purchase_done', 2, 'u1', { revenue: 30 }),
    event('2024-03-02 12:00:00', 'purchase', 'purchase_done', null, 'u4', { revenue: 12.5 }),
    event('2024-03-02 11:05:00', 'view', 'product_view', 8, 'u3'),
    event('2024-03-02 11:06:00', 'add_to_cart', 'cart_add', 8, 'u3'),
  ]);
});
afterAll(async () => {
  await service?.stop();
});

describe('graphs', () => {
  it('search_usage_graph counts each hour, the hours without searches as 0', async () => {
    const r = await report({ type: 'search_usage_graph', filter: day('2024-03-01 10:00', '2024-03-01 14:00') });
    expect(r.total_searches).toBe(5);
    expect(points(r)).toEqual([
      ['2024-03-01 10:00:00.000', 3],
      ['2024-03-01 11:00:00.000', 0],
      ['2024-03-01 12:00:00.000', 2],
      ['2024-03-01 13:00:00.000', 0],
    ]);
  });

  it('search_usage_graph by minute, day and month', async () => {
    const minutes = await report({ type: 'search_usage_graph', granularity: 'minute', filter: day('2024-03-01 10:00', '2024-03-01 10:30') });
    expect(minutes.points).toHaveLength(30);
    expect(minutes.points.filter((p: { point: number }) => p.point > 0).map((p: { time_stamp: string }) => p.time_stamp)).toEqual([
      '2024-03-01 10:05:00.000',
      '2024-03-01 10:20:00.000',
    ]);
    const days = await report({
      type: 'search_usage_graph',
      granularity: 'day',
      filter: { date_range: { gte: '2024-02-29', lte: '2024-03-02 23:59:59.999' } },
    });
    expect(points(days)).toEqual([
      ['2024-02-29 00:00:00.000', 0],
      ['2024-03-01 00:00:00.000', 5],
      ['2024-03-02 00:00:00.000', 3],
    ]);
    const months = await report({ type: 'search_usage_graph', granularity: 'month', filter: day('2024-01-15', '2024-04-01') });
    expect(points(months)).toEqual([
      ['2024-01-01 00:00:00.000', 0],
      ['2024-02-01 00:00:00.000', 0],
      ['2024-03-01 00:00:00.000', 8],
    ]);
  });

  it('without a start, begins at the first search; without an end, runs to now', async () => {
    const r = await report({ type: 'search_usage_graph', granularity: 'month' });
    expect(r.points[0]).toEqual({ time_stamp: '2024-03-01 00:00:00.000', point: 8 });
    const now = new Date();
    const thisMonth = `${now.getUTCFullYear()}-${String(now.getUTCMonth() + 1).padStart(2, '0')}-01 00:00:00.000`;
    expect(r.points.at(-1)).toEqual({ time_stamp: thisMonth, point: 0 });
    expect(r.total_searches).toBe(8);
  });

  it('latency_graph averages the latency of each bucket', async () => {
    const r = await report({ type: 'latency_graph', filter: day('2024-03-01 10:00', '2024-03-01 14:00') });
    expect(points(r)).toEqual([
      ['2024-03-01 10:00:00.000', 20],
      ['2024-03-01 11:00:00.000', 0],
      ['2024-03-01 12:00:00.000', 45],
      ['2024-03-01 13:00:00.000', 0],
    ]);
  });

  it('searches_per_user divides the searches of each bucket by their users (no user id is one user)', async () => {
    const r = await report({ type: 'searches_per_user', granularity: 'day', filter: day('2024-03-01', '2024-03-03') });
    // 1 March: u1 twice, u2 twice, one without a user; 2 March: u3 twice, u1 once.
    expect(points(r)).toEqual([
      ['2024-03-01 00:00:00.000', 5 / 3],
      ['2024-03-02 00:00:00.000', 3 / 2],
    ]);
    expect(r.avg_searches_per_user).toBeCloseTo((5 / 3 + 3 / 2) / 2, 10);
  });

  it('search_average_rating averages the ratings of each bucket', async () => {
    const r = await report({ type: 'search_average_rating', granularity: 'day', filter: day('2024-02-29', '2024-03-03') });
    expect(points(r)).toEqual([
      ['2024-02-29 00:00:00.000', 0],
      ['2024-03-01 00:00:00.000', 0.5],
      ['2024-03-02 00:00:00.000', 5],
    ]);
    expect(r.avg_search_rating).toBe(2.75);
  });

  it('ctr_metrics_over_time: clicks over searches in each bucket', async () => {
    const r = await report({ type: 'ctr_metrics_over_time', granularity: 'day', filter: day('2024-02-29', '2024-03-03') });
    // 1 March: 3 clicks, 5 searches; 2 March: 1 click, 3 searches.
    expect(points(r)).toEqual([
      ['2024-02-29 00:00:00.000', 0],
      ['2024-03-01 00:00:00.000', 0.6],
      ['2024-03-02 00:00:00.000', 1 / 3],
    ]);
    expect(r.total_ctr).toBeCloseTo((0.6 + 1 / 3) / 2, 10);
    // Only chunk searches: searches 1 to 3 on 1 March, 6 on 2 March, and their clicks.
    const searchesOnly = await report({
      type: 'ctr_metrics_over_time',
      granularity: 'day',
      filter: { ...day('2024-03-01', '2024-03-03'), search_type: 'search' },
    });
    expect(points(searchesOnly)).toEqual([
      ['2024-03-01 00:00:00.000', 1],
      ['2024-03-02 00:00:00.000', 1],
    ]);
  });

  it('search_conversion_rate: conversion events about searches over searches', async () => {
    const r = await report({ type: 'search_conversion_rate', granularity: 'day', filter: day('2024-03-01', '2024-03-03') });
    // 1 March: 3 clicks and a purchase; 2 March: a click and an add to cart (the view is no conversion).
    expect(points(r)).toEqual([
      ['2024-03-01 00:00:00.000', 4 / 5],
      ['2024-03-02 00:00:00.000', 2 / 3],
    ]);
    expect(r.conversion_rate).toBe(6 / 8);
  });

  it('search_revenue: purchases after a search (direct) or after none', async () => {
    const filter = day('2024-03-01', '2024-03-03');
    const direct = await report({ type: 'search_revenue', granularity: 'day', filter, direct: true });
    expect([points(direct), direct.avg_revenue]).toEqual([
      [
        ['2024-03-01 00:00:00.000', 30],
        ['2024-03-02 00:00:00.000', 0],
      ],
      30,
    ]);
    const other = await report({ type: 'search_revenue', granularity: 'day', filter });
    expect([points(other), other.avg_revenue]).toEqual([
      [
        ['2024-03-01 00:00:00.000', 0],
        ['2024-03-02 00:00:00.000', 12.5],
      ],
      12.5,
    ]);
  });
});

describe('figures', () => {
  it('search_metrics: count, average and percentiles of latency, shares rated positive and negative', async () => {
    const r = await report({ type: 'search_metrics' });
    expect(r).toMatchObject({ total_queries: 8, avg_latency: 45, total_positive_ratings: 25, total_negative_ratings: 12.5 });
    // Latencies 10, 20, ... 80 ms: percentile_cont gives 45, 76.5 and 79.3; the histogram is within 6 %.
    for (const [p, exact] of [
      ['p50', 45],
      ['p95', 76.5],
      ['p99', 79.3],
    ] as const) {
      expect(Math.abs(r[p] / exact - 1), p).toBeLessThan(0.06);
    }
  });

  it('search_metrics of nothing is all 0', async () => {
    const r = await report({ type: 'search_metrics', filter: day('2020-01-01', '2020-01-02') });
    expect(r).toEqual({ total_queries: 0, avg_latency: 0, p50: 0, p95: 0, p99: 0, total_positive_ratings: 0, total_negative_ratings: 0 });
  });

  it('count_queries counts each kind and method of search, most first', async () => {
    const r = await report({ type: 'count_queries', count_collapsed_queries: true });
    expect(r.total_queries).toEqual([
      { search_type: 'search', search_method: 'hybrid', search_count: 3 },
      { search_type: 'autocomplete', search_method: 'fulltext', search_count: 1 },
      { search_type: 'rag', search_method: 'semantic', search_count: 1 },
      { search_type: 'search', search_method: 'semantic', search_count: 1 },
      { search_type: 'search_over_groups', search_method: 'hybrid', search_count: 1 },
      { search_type: 'search_within_groups', search_method: 'bm25', search_count: 1 },
    ]);
  });

  it('popular_filters counts conditions and their values', async () => {
    const r = await report({ type: 'popular_filters' });
    expect(r.popular_filters).toEqual([
      { clause: 'must', field: 'tag_set', filter_type: 'match_any', count: 2, common_values: { red: 2, blue: 1 } },
      { clause: 'must_not', field: 'num_value', filter_type: 'range', count: 1, common_values: { '{"gte": 10}': 1 } },
    ]);
    const later = await report({ type: 'popular_filters', filter: { date_range: { gt: '2024-03-01 10:05' } } });
    expect(later.popular_filters.map((f: { count: number; common_values: object }) => [f.count, f.common_values])).toEqual([
      [1, { red: 1 }],
      [1, { '{"gte": 10}': 1 }],
    ]);
  });

  it('event_funnel counts the users who searched, sent any event, and sent each', async () => {
    const r = await report({ type: 'event_funnel' });
    expect(r.event_names).toEqual([
      { event_name: 'all_users', event_count: 4 },
      { event_name: 'searched', event_count: 4 },
      { event_name: 'click', event_count: 3 },
      { event_name: 'purchase_done', event_count: 2 },
      { event_name: 'cart_add', event_count: 1 },
      { event_name: 'product_view', event_count: 1 },
    ]);
    const secondDay = await report({ type: 'event_funnel', filter: day('2024-03-02', '2024-03-03') });
    expect(secondDay.event_names).toEqual([
      { event_name: 'all_users', event_count: 2 },
      { event_name: 'searched', event_count: 2 },
      { event_name: 'cart_add', event_count: 1 },
      { event_name: 'click', event_count: 1 },
      { event_name: 'product_view', event_count: 1 },
      { event_name: 'purchase_done', event_count: 1 },
    ]);
  });
});

describe('lists', () => {
  it('head_queries: the most searched queries, most first, ties by query', async () => {
    const r = await report({ type: 'head_queries' });
    expect(r.queries).toEqual([
      { query: 'red shoes', count: 3 },
      { query: 'blue hat', count: 2 },
      { query: 'green scarf', count: 1 },
      { query: 'red', count: 1 },
      { query: 'what is red', count: 1 },
    ]);
    expect((await report({ type: 'head_queries', page: 2 })).queries).toEqual([]);
  });

  it('low_confidence_queries: lowest top score first, below the threshold', async () => {
    expect(queryIds(await report({ type: 'low_confidence_queries' }))).toEqual([6, 4, 8, 3, 5, 7, 2, 1]);
    expect(queryIds(await report({ type: 'low_confidence_queries', threshold: 0.15 }))).toEqual([6, 4, 8]);
  });

  it('no_result_queries: the searches that found nothing, newest first', async () => {
    expect(queryIds(await report({ type: 'no_result_queries' }))).toEqual([6, 4]);
  });

  it('search_queries: sorted as asked, with or without clicks', async () => {
    expect(queryIds(await report({ type: 'search_queries' }))).toEqual([8, 7, 6, 5, 4, 3, 2, 1]);
    expect(queryIds(await report({ type: 'search_queries', sort_by: 'latency', sort_order: 'asc' }))).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(queryIds(await report({ type: 'search_queries', sort_by: 'top_score' }))).toEqual([1, 2, 7, 5, 3, 8, 6, 4]);
    expect(queryIds(await report({ type: 'search_queries', has_clicks: true }))).toEqual([6, 3, 1]);
    expect(queryIds(await report({ type: 'search_queries', has_clicks: false }))).toEqual([8, 7, 5, 4, 2]);
  });

  it('query_details: one search, with the chunks it found', async () => {
    const first = await report({ type: 'query_details', request_id: ids[0] });
    expect(first).toMatchObject({
      id: ids[0],
      dataset_id: main,
      search_type: 'search',
      query: 'red shoes',
      latency: 10,
      top_score: 0.9,
      user_id: 'u1',
      created_at: '2024-03-01 10:05:00.000',
      metadata: null,
      query_rating: { rating: 1, note: null, metadata: null },
    });
    expect(first.request_params).toMatchObject({ search_type: 'hybrid', filters: { must: [{ field: 'tag_set', match_any: ['red', 'blue'] }] } });
    expect(first.results).toEqual([
      { id: chunkA, tracking_id: 'a', link: null, metadata: null, chunk_html: '<p>Red shoes</p>' },
      { id: chunkB, tracking_id: 'b', link: null, metadata: null, chunk_html: '<p>Blue hat</p>' },
    ]);
    const rag = await report({ type: 'query_details', request_id: ids[6] });
    expect(rag).toMatchObject({ search_type: 'rag', results: [{ id: deletedChunk }], query_rating: null });
    const widget = await report({ type: 'query_details', request_id: ids[7] });
    expect(widget).toMatchObject({ search_type: 'search', metadata: { component_props: { componentName: 'widget' } } });
  });

  it('pages through ten at a time', async () => {
    const paged = (await service.newDataset(orgId, 'paged')).id;
    const made: string[] = [];
    for (let i = 0; i < 23; i++) {
      made.push(
        await record(paged, {
          at: `2024-05-01 10:${String(i).padStart(2, '0')}:00`,
          search_type: 'hybrid',
          method: 'hybrid',
          query: `query ${String(i % 12).padStart(2, '0')}`,
          latency: 5,
          score: 0.5,
          results: [],
        }),
      );
    }
    const newestFirst = [...made].reverse();
    for (const [page, expected] of [
      [0, newestFirst.slice(0, 10)],
      [1, newestFirst.slice(0, 10)],
      [2, newestFirst.slice(10, 20)],
      [3, newestFirst.slice(20)],
      [4, []],
    ] as const) {
      const r = await report({ type: 'search_queries', page }, paged);
      expect(r.queries.map((q: { id: string }) => q.id)).toEqual(expected);
    }
    // 12 queries: 00 to 10 twice each (i and i + 12), 11 once.
    const heads = await report({ type: 'head_queries', page: 2 }, paged);
    expect(heads.queries).toEqual([
      { query: 'query 10', count: 2 },
      { query: 'query 11', count: 1 },
    ]);
  });
});

describe('filters', () => {
  const filtered = async (filter: NonNullable<Extract<SearchAnalytics, { type: 'search_queries' }>['filter']>) =>
    queryIds(await report({ type: 'search_queries', sort_order: 'asc', filter }));

  it('by date range, each bound exclusive or inclusive', async () => {
    expect(await filtered({ date_range: { gte: '2024-03-01 10:20', lte: '2024-03-02 09:00' } })).toEqual([2, 3, 4, 5, 6]);
    expect(await filtered({ date_range: { gt: '2024-03-01 10:20', lt: '2024-03-02 09:00' } })).toEqual([3, 4, 5]);
    expect(await filtered({ date_range: { gte: '2024-03-01T10:20:00Z', gt: '2024-03-01 10:20' } })).toEqual([3, 4, 5, 6, 7, 8]);
  });

  it('by kind and method of search', async () => {
    expect(await filtered({ search_type: 'search' })).toEqual([1, 2, 3, 6]);
    expect(await filtered({ search_type: 'autocomplete' })).toEqual([4]);
    expect(await filtered({ search_type: 'search_over_groups' })).toEqual([5]);
    expect(await filtered({ search_type: 'search_within_groups' })).toEqual([8]);
    expect(await filtered({ search_method: 'semantic' })).toEqual([3, 7]);
    expect(await filtered({ search_type: 'search', search_method: 'hybrid' })).toEqual([1, 2, 6]);
  });

  it('by rating, top score, component and query text', async () => {
    expect(await filtered({ query_rating: { gte: 1 } })).toEqual([1, 6]);
    expect(await filtered({ query_rating: { lte: 0 } })).toEqual([3]);
    expect(await filtered({ query_rating: { gt: 0, lt: 5 } })).toEqual([1]);
    expect(await filtered({ top_score: { gte: 0.5 } })).toEqual([1, 2, 5, 7]);
    expect(await filtered({ top_score: { gt: 0, lte: 0.2 } })).toEqual([3, 8]);
    expect(await filtered({ component_name: 'widget' })).toEqual([8]);
    expect(await filtered({ query: 'RED' })).toEqual([1, 2, 4, 5, 7]);
    expect(await filtered({ query: '%' })).toEqual([]);
  });

  it('apply to graphs and figures too', async () => {
    const r = await report({ type: 'search_usage_graph', granularity: 'day', filter: { ...day('2024-03-01', '2024-03-03'), query_rating: { gte: 0 } } });
    expect(points(r)).toEqual([
      ['2024-03-01 00:00:00.000', 2],
      ['2024-03-02 00:00:00.000', 1],
    ]);
    const metrics = await report({ type: 'search_metrics', filter: { search_type: 'search', search_method: 'hybrid' } });
    expect(metrics).toMatchObject({ total_queries: 3, avg_latency: 30, total_positive_ratings: 66.67, total_negative_ratings: 0 });
    const heads = await report({ type: 'head_queries', filter: { search_type: 'search' } });
    expect(heads.queries).toEqual([
      { query: 'red shoes', count: 2 },
      { query: 'blue hat', count: 1 },
      { query: 'green scarf', count: 1 },
    ]);
  });
});

describe('roll-ups', () => {
  // The roll-ups answer for whole hours and days, the searches themselves for the parts at either
  // end; a filter on the top score (here one that keeps every search) makes every search be read.
  const everyScore = { top_score: { gte: -1 } };
  const ranges = [
    {},
    { date_range: { gte: '2024-03-01 10:10', lt: '2024-03-01 12:50' } },
    { date_range: { gt: '2024-03-01 10:05', lte: '2024-03-02 09:00' } },
    { date_range: { gte: '2024-02-29 23:30', lte: '2024-03-02 09:00' } },
    { date_range: { gt: '2024-03-01 00:00', lt: '2024-03-02 00:00' } },
    // Search 6 is at 09:00 sharp: excluded, its hour is not whole.
    { date_range: { gt: '2024-03-02 09:00', lte: '2024-03-02 12:00' } },
    { date_range: { gte: '2024-03-01 00:00', lte: '2024-03-02 00:00' }, search_type: 'search' as const },
  ];

  it.each(ranges.map((filter) => [JSON.stringify(filter), filter]))('answer as the searches do: %s', async (_name, filter) => {
    const reports: SearchAnalytics[] = [
      // (An hourly graph from March 2024 to now would have too many buckets.)
      { type: 'search_usage_graph', granularity: 'date_range' in filter ? 'hour' : 'day', filter },
      { type: 'latency_graph', granularity: 'day', filter },
      { type: 'search_usage_graph', granularity: 'month', filter },
      { type: 'search_metrics', filter },
      { type: 'count_queries', filter },
    ];
    for (const body of reports) {
      const rolled = await report(body);
      const read = await report({ ...body, filter: { ...filter, ...everyScore } } as SearchAnalytics);
      expect(rolled, body.type).toEqual(read);
    }
  });

  it('hold every search once: per hour and per day, by kind and method', async () => {
    const hours = await db()('search_rollup_hours').where({ dataset_id: main }).sum({ searches: 'searches', latency: 'latency_sum' });
    const days = await db()('search_rollup_days').where({ dataset_id: main }).orderBy('bucket').select('bucket', 'searches', 'latency_histogram');
    expect(hours.map((h) => [Number(h.searches), Number(h.latency)])).toEqual([[8, 360]]);
    expect(days.map((d) => d.bucket.toISOString())).toEqual(expect.arrayContaining(['2024-03-01T00:00:00.000Z', '2024-03-02T00:00:00.000Z']));
    expect(days.reduce((n, d) => n + d.latency_histogram.reduce((a: number, b: number) => a + b, 0), 0)).toBe(8);
  });

  it('are taken away with the searches of a deleted dataset; a search changes only in its rating', async () => {
    const doomed = (await service.newDataset(orgId, 'doomed')).id;
    const id = await record(doomed, { at: '2024-03-01 10:00:00', search_type: 'hybrid', method: 'hybrid', query: 'x', latency: 1, score: 1, results: [] });
    await expect(db()('search_queries').where({ id }).update({ latency_ms: 2 })).rejects.toThrow(/changes only in its rating/);
    expect(await db()('search_rollup_hours').where({ dataset_id: doomed }).count({ n: '*' })).toEqual([{ n: '1' }]);
    await db()('search_queries').where({ id }).del();
    expect(await db()('search_rollup_hours').where({ dataset_id: doomed }).count({ n: '*' })).toEqual([{ n: '0' }]);
    expect(await db()('search_rollup_days').where({ dataset_id: doomed }).count({ n: '*' })).toEqual([{ n: '0' }]);
    await record(doomed, { at: '2024-03-01 10:00:00', search_type: 'hybrid', method: 'hybrid', query: 'x', latency: 1, score: 1, results: [] });
    await db()('datasets').where({ id: doomed }).del();
    expect(await db()('search_rollup_days').where({ dataset_id: doomed }).count({ n: '*' })).toEqual([{ n: '0' }]);
  });
});

describe('a search made through the API', () => {
  it('is reported at once, and can be rated at once', async () => {
    const live = await service.newDataset(orgId, 'live');
    await createChunk({
      client: service.client(),
      headers: ds(live.id),
      body: [{ tracking_id: 'kettle', chunk_html: '<p>The kettle boils water fast.</p>' }],
      throwOnError: true,
    });
    const { data } = await searchChunks({
      client: service.client(),
      headers: { ...ds(live.id), 'X-API-Version': 'V2' },
      body: { query: 'kettle water', search_type: 'fulltext', user_id: 'visitor' },
      throwOnError: true,
    });
    const id = (data as SearchResponseBody).id;
    // Rated before the search's record is written (it is written after the answer): the rating waits for it.
    await setSearchQueryRating({
      client: service.client(),
      headers: ds(live.id),
      body: { query_id: id, rating: 4, note: 'spot on', metadata: { by: 'qa' } },
      throwOnError: true,
    });
    const details = await report({ type: 'query_details', request_id: id }, live.id);
    expect(details).toMatchObject({
      id,
      search_type: 'search',
      query: 'kettle water',
      user_id: 'visitor',
      query_rating: { rating: 4, note: 'spot on', metadata: { by: 'qa' } },
      results: [{ tracking_id: 'kettle', chunk_html: '<p>The kettle boils water fast.</p>' }],
    });
    expect(details.latency).toBeGreaterThan(0);
    expect(details.request_params).toMatchObject({ search_type: 'fulltext', user_id: 'visitor' });
    const rated = await report({ type: 'search_queries', filter: { query_rating: { gte: 4, lte: 4 } } }, live.id);
    expect(rated.queries.map((q: { id: string }) => q.id)).toEqual([id]);
    const usage = await report({ type: 'search_usage_graph', granularity: 'day' }, live.id);
    expect(usage.total_searches).toBe(1);
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
    const asKey = (apiKey: string) => ({ client: service.client(apiKey), headers: ds(main) });
    const read = await getSearchAnalytics({ ...asKey(reader), body: { type: 'search_metrics' } });
    expect([read.response.status, read.error?.message]).toEqual([403, expect.stringMatching(/admin/)]);
    const rate = await setSearchQueryRating({ ...asKey(reader), body: { query_id: ids[1], rating: 9 } });
    expect(rate.response.status).toBe(403);
    const metrics = await getSearchAnalytics({ ...asKey(admin), body: { type: 'search_metrics' } });
    expect([metrics.response.status, (metrics.data as { total_queries: number }).total_queries]).toEqual([200, 8]);
  });
});

describe('bad input', () => {
  const ratings = () =>
    db()('search_queries').where({ dataset_id: main }).orderBy('id').select('id', 'query_rating', 'query_rating_note', 'query_rating_metadata');
  let before: unknown;
  beforeAll(async () => {
    before = await ratings();
  });
  afterAll(async () => {
    expect(await ratings()).toEqual(before);
  });

  const headers = () => ({ authorization: ADMIN_KEY, ...ds(main) });
  const post = (body: unknown) => service.request('POST', '/api/analytics/search', { headers: headers(), body });
  const put = (body: unknown) => service.request('PUT', '/api/analytics/search', { headers: headers(), body });

  it('an unknown type is named', async () => {
    const reply = await post({ type: 'search_wishes' });
    expect(reply.status).toBe(400);
    expect(reply.body.message).toMatch(/'type' must be equal to one of the allowed values: latency_graph, .*search_revenue/);
  });

  it('a range that ends before it starts, a bound that is no instant', async () => {
    let reply = await post({ type: 'search_metrics', filter: { date_range: { gte: '2024-03-02', lt: '2024-03-01' } } });
    expect(reply.status).toBe(400);
    expect(reply.body.message).toMatch(/filter\.date_range: the range starts .* after it ends/);
    reply = await post({ type: 'head_queries', filter: { date_range: { gt: 'yesterday' } } });
    expect(reply.status).toBe(400);
    expect(reply.body.message).toMatch(/filter\.date_range\.gt: yesterday is not a timestamp/);
    reply = await post({ type: 'search_queries', filter: { query_rating: { gte: 4, lte: 2 } } });
    expect(reply.status).toBe(400);
    expect(reply.body.message).toMatch(/filter\.query_rating/);
  });

  it('a graph of too many buckets', async () => {
    const reply = await post({ type: 'latency_graph', granularity: 'second', filter: day('2024-03-01', '2024-03-03') });
    expect(reply.status).toBe(400);
    expect(reply.body.message).toMatch(/172800 buckets, more than 10000/);
  });

  it('fields the report does not take, or of the wrong shape', async () => {
    for (const body of [
      null,
      [],
      'search_metrics',
      { type: 'query_details' },
      { type: 'query_details', request_id: 'not-a-uuid' },
      { type: 'latency_graph', granularity: 'week' },
      { type: 'search_queries', sort_by: 'query' },
      { type: 'head_queries', page: -1 },
    ]) {
      const reply = await post(body);
      expect(reply.status, JSON.stringify(body)).toBe(400);
      expect(reply.body.message).toBeTruthy();
    }
  });

  it('a rating out of range', async () => {
    for (const [rating, message] of [
      [-1, 'request/body/rating must be >= 0'],
      [11, 'request/body/rating must be <= 10'],
      [2.5, 'request/body/rating must be integer'],
    ] as const) {
      const reply = await put({ query_id: ids[1], rating });
      expect(reply.status).toBe(400);
      expect(reply.body.message).toBe(message);
    }
  });

  it('a search of another dataset is not found, as an unknown one; nothing of it changes', async () => {
    const other = (await service.newDataset(orgId, 'other')).id;
    const foreign = await record(other, { at: '2024-03-01 10:00:00', search_type: 'hybrid', method: 'hybrid', query: 'x', latency: 1, score: 1, results: [] });
    for (const id of [foreign, randomUUID()]) {
      const rated = await put({ query_id: id, rating: 3 });
      expect(rated.status).toBe(404);
      expect(rated.body.message).toBe(`search ${id} not found`);
      const details = await post({ type: 'query_details', request_id: id });
      expect(details.status).toBe(404);
      expect(details.body.message).toBe(`search ${id} not found`);
    }
    expect(await db()('search_queries').where({ id: foreign }).first('query_rating')).toEqual({ query_rating: null });
  });
});
