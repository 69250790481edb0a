// The roll-ups over a whole dataset (migration 033) answer exactly what the searches and events
// themselves answer: head_queries, popular_filters, event_funnel and searches_per_user by day, asked
// without a filter (the roll-ups) and with a filter that keeps every search but makes the service
// read the searches (a top score of at least -1, a date range from 2000), after inserts of several
// statements (queries, users, days and filter values met again), after deletions, and next to
// another dataset's records. The figures are checked against the data written too.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY, startTestService, type TestService } from '../support/service.js';

let service: TestService;
let orgId: string;
let datasetId: string;
let otherId: string;
const db = () => service.services.store.db;

const report = async (body: Record<string, unknown>, dataset = datasetId) => {
  const reply = await service.request('POST', '/api/analytics/search', { headers: { authorization: ADMIN_KEY, 'SVC-Dataset': dataset }, body });
  expect(reply.status, JSON.stringify(reply.body)).toBe(200);
  return reply.body;
};

/** Read from the searches themselves: every search kept, but not a scope the roll-ups answer. */
const UNROLLED = { top_score: { gte: -1 }, date_range: { gte: '2000-01-01 00:00:00' } };

interface Search {
  query: string;
  user: string | null;
  at: string;
  filters?: unknown;
}

function searchRow(dataset: string, s: Search) {
  return {
    id: randomUUID(),
    dataset_id: dataset,
    search_type: 'hybrid',
    query: s.query,
    request_params: JSON.stringify({ search_type: 'hybrid', ...(s.filters !== undefined && { filters: s.filters }) }),
    latency_ms: 10,
    top_score: 0.5,
    results: [],
    user_id: s.user,
    created_at: new Date(`${s.at}Z`),
  };
}

const insertSearches = async (dataset: string, searches: Search[]) => {
  const rows = searches.map((s) => searchRow(dataset, s));
  await db()('search_queries').insert(rows);
  return rows.map((r) => r.id);
};

const insertEvents = async (dataset: string, events: [name: string, user: string | null][]) => {
  const rows = events.map(([name, user]) => ({
    id: randomUUID(),
    dataset_id: dataset,
    event_type: 'view',
    event_name: name,
    items: [],
    user_id: user,
    is_conversion: false,
  }));
  await db()('analytics_events').insert(rows);
  return rows.map((r) => r.id);
};

const tag = (clause: string, ...values: string[]) => ({ [clause]: [{ field: 'tag_set', match_any: values }] });

/** Every report the roll-ups answer, asked with and without UNROLLED: they must agree. */
async function expectRollupsExact(dataset = datasetId) {
  for (const [type, extra] of [
    ['head_queries', { page: 1 }],
    ['head_queries', { page: 2 }],
    ['popular_filters', {}],
    ['event_funnel', {}],
  ] as const) {
    const rolled = await report({ type, ...extra }, dataset);
    const unrolled = await report({ type, ...extra, filter: UNROLLED }, dataset);
    expect(rolled, type).toEqual(unrolled);
  }
  // By day: the graph starts with the first search either way; mid-day ranges mix roll-ups and searches.
  const perUser = (filter: Record<string, unknown>) => report({ type: 'searches_per_user', granularity: 'day', filter }, dataset);
  const rolled = await perUser({});
  const unrolled = await perUser({ top_score: { gte: -1 } });
  expect(rolled).toEqual(unrolled);
  const range = { date_range: { gte: '2024-03-01 12:00:00', lt: '2024-03-04 06:00:00' } };
  expect(await perUser(range)).toEqual(await perUser({ ...range, top_score: { gte: -1 } }));
  return rolled;
}

beforeAll(async () => {
  service = await startTestService();
  orgId = (await service.request('POST', '/api/organization', { headers: { authorization: ADMIN_KEY }, body: { name: 'Shop' } })).body.id;
  datasetId = (await service.newDataset(orgId, 'shop')).id;
  otherId = (await service.newDataset(orgId, 'other')).id;
});

afterAll(async () => {
  await service?.stop();
});

describe('roll-ups over a whole dataset', () => {
  const first: Search[] = [
    { query: 'tea', user: 'ann', at: '2024-03-01 09:00:00', filters: { ...tag('must', 'green', 'black'), should: [{ field: 'price', range: { lt: 10 } }] } },
    { query: 'tea', user: 'ann', at: '2024-03-01 10:00:00', filters: tag('must', 'green') },
    { query: 'tea', user: 'bob', at: '2024-03-01 23:59:59', filters: tag('must_not', 'decaf') },
    { query: 'kettle', user: null, at: '2024-03-02 00:00:00', filters: { must: [{ field: 'brand' }] } },
    { query: 'kettle', user: 'cid', at: '2024-03-03 08:00:00' },
    { query: 'mug', user: 'ann', at: '2024-03-03 09:00:00', filters: tag('must', 'green') },
    ...Array.from({ length: 12 }, (_, i) => ({ query: `rare ${String(i).padStart(2, '0')}`, user: `u${i % 4}`, at: '2024-03-04 12:00:00' })),
  ];

  it('answer as the searches do, after a first statement', async () => {
    await insertSearches(datasetId, first);
    await insertEvents(datasetId, [
      ['product_view', 'ann'],
      ['product_view', 'ann'],
      ['product_view', null],
      ['checkout', 'bob'],
    ]);
    // The other dataset: the same queries and users, many more of them.
    await insertSearches(otherId, [...first, ...first, ...first]);
    await insertEvents(otherId, [['checkout', 'zed']]);
    const perUser = await expectRollupsExact();
    // The roll-ups hold them: 15 queries, 8 users over 4 days.
    expect(await db()('search_query_counts').where({ dataset_id: datasetId }).sum({ n: 'searches' })).toEqual([{ n: '18' }]);
    expect(await db()('search_user_day_counts').where({ dataset_id: datasetId }).sum({ n: 'users' })).toEqual([{ n: '9' }]);
    expect((await report({ type: 'head_queries' })).queries.slice(0, 3)).toEqual([
      { query: 'tea', count: 3 },
      { query: 'kettle', count: 2 },
      { query: 'mug', count: 1 },
    ]);
    const filters = (await report({ type: 'popular_filters' })).popular_filters;
    expect(filters[0]).toEqual({ clause: 'must', field: 'tag_set', filter_type: 'match_any', count: 3, common_values: { green: 3, black: 1 } });
    expect(filters).toHaveLength(4);
    // Users: ann, bob, cid, no user, u0..u3 searched; ann, no user and bob sent events.
    expect((await report({ type: 'event_funnel' })).event_names).toEqual([
      { event_name: 'searched', event_count: 8 },
      { event_name: 'all_users', event_count: 3 },
      { event_name: 'product_view', event_count: 2 },
      { event_name: 'checkout', event_count: 1 },
    ]);
    // 1 March: 3 searches by ann and bob; 2 March: one without a user; 3 March: cid and ann; 4 March: 12 by 4 users.
    const days = Object.fromEntries(
      perUser.points.filter((p: { point: number }) => p.point > 0).map((p: { time_stamp: string; point: number }) => [p.time_stamp.slice(0, 10), p.point]),
    );
    expect(days).toEqual({ '2024-03-01': 1.5, '2024-03-02': 1, '2024-03-03': 1, '2024-03-04': 3 });
  });

  it('answer as the searches do after more statements meet the same queries, users, days and values', async () => {
    await insertSearches(datasetId, [
      { query: 'mug', user: 'ann', at: '2024-03-01 11:00:00', filters: tag('must', 'black', 'white') },
      { query: 'mug', user: 'dan', at: '2024-03-02 13:00:00', filters: tag('must', 'white') },
    ]);
    await insertSearches(datasetId, [{ query: 'kettle', user: null, at: '2024-03-02 14:00:00', filters: { should: [{ field: 'price', range: { lt: 10 } }] } }]);
    await insertEvents(datasetId, [
      ['checkout', 'ann'],
      ['checkout', 'eve'],
    ]);
    await expectRollupsExact();
    expect((await report({ type: 'head_queries' })).queries.slice(0, 3)).toEqual([
      { query: 'kettle', count: 3 },
      { query: 'mug', count: 3 },
      { query: 'tea', count: 3 },
    ]);
    await expectRollupsExact(otherId);
  });

  it('answer as the searches do after searches and events are deleted', async () => {
    // Every search of ann's on 1 March, and the only search without a user on 2 March but one.
    await db()('search_queries').where({ dataset_id: datasetId, user_id: 'ann' }).where('created_at', '<', new Date('2024-03-02T00:00:00Z')).del();
    await db()('search_queries')
      .where({ dataset_id: datasetId, query: 'kettle' })
      .whereNull('user_id')
      .where('created_at', '<', new Date('2024-03-02T01:00:00Z'))
      .del();
    await db()('analytics_events').where({ dataset_id: datasetId, event_name: 'product_view', user_id: 'ann' }).del();
    await expectRollupsExact();
    expect((await report({ type: 'event_funnel' })).event_names).toEqual([
      { event_name: 'searched', event_count: 9 },
      { event_name: 'all_users', event_count: 4 },
      { event_name: 'checkout', event_count: 3 },
      { event_name: 'product_view', event_count: 1 },
    ]);
    await expectRollupsExact(otherId);
  });

  it('go with their dataset', async () => {
    await db()('datasets').where({ id: otherId }).del();
    for (const table of [
      'search_query_counts',
      'search_users',
      'search_user_days',
      'search_user_day_counts',
      'search_filter_conditions',
      'analytics_event_users',
    ]) {
      expect(await db()(table).where({ dataset_id: otherId }).count({ n: '*' }), table).toEqual([{ n: '0' }]);
    }
    await expectRollupsExact();
  });
});
