// Analytics events and click-through over HTTP: events of every type recorded and read back (by id,
// and paged with each filter), clicks on searches, RAG calls and recommendations linked to their
// records (a search clicked right after it was made included), every CTR and component report
// exact over known data (graphs with their empty buckets), the admin role, and bad input refused
// with nothing recorded.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY, startTestService, type TestService } from '../support/service.js';

let service: TestService;
let orgId: string;
let datasetId: string;
let otherDatasetId: string;
const chunks: Record<string, string> = {};
const searches: Record<string, string> = {};
const recommendations: Record<string, string> = {};
let ragId: string;
const db = () => service.services.store.db;
const TIMESTAMP = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}$/;

const send = (method: string, path: string, body?: unknown, dataset = datasetId, key = ADMIN_KEY) =>
  service.request(method, path, { headers: { authorization: key, 'SVC-Dataset': dataset }, body });
const ok = async (method: string, path: string, body?: unknown, dataset = datasetId) => {
  const reply = await send(method, path, body, dataset);
  expect(reply.status, JSON.stringify(reply.body)).toBe(method === 'PUT' ? 204 : 200);
  return reply.body;
};
const ctr = (body: Record<string, unknown>) => ok('POST', '/api/analytics/events/ctr', body);
const component = (body: Record<string, unknown>) => ok('POST', '/api/analytics/events/component', body);
const allEvents = (body: Record<string, unknown>) => ok('POST', '/api/analytics/events/all', body);
const click = (body: Record<string, unknown>) => ok('PUT', '/api/analytics/ctr', body);
const event = (body: Record<string, unknown>) => ok('PUT', '/api/analytics/events', body);

async function insertSearch(query: string, at: string, fields: Record<string, unknown> = {}, dataset = datasetId): Promise<string> {
  const id = randomUUID();
  await db()('search_queries').insert({
    id,
    dataset_id: dataset,
    search_type: 'fulltext',
    query,
    request_params: JSON.stringify({ search_type: 'fulltext' }),
    latency_ms: 5,
    top_score: 0.5,
    results: [chunks['tea-green'], chunks['tea-black']],
    created_at: new Date(`${at}Z`),
    ...fields,
  });
  return id;
}

async function insertRecommendation(type: 'Chunk' | 'Group', at: string): Promise<string> {
  const id = randomUUID();
  await db()('recommendation_queries').insert({
    id,
    dataset_id: datasetId,
    recommendation_type: type,
    positive_ids: [chunks['tea-green']],
    negative_ids: [],
    positive_tracking_ids: [],
    negative_tracking_ids: ['bike-road'],
    request_params: '{}',
    results: JSON.stringify([chunks['tea-black']]),
    top_score: 0.7,
    latency_ms: 3,
    created_at: new Date(`${at}Z`),
  });
  return id;
}

/** Component events of the past, written as a loader would (their times are the point). */
async function insertEvent(name: string, userId: string, at: string, componentName = 'chat') {
  await db()('analytics_events').insert({
    id: randomUUID(),
    dataset_id: datasetId,
    event_type: 'view',
    event_name: name,
    items: [],
    metadata: JSON.stringify({ component_props: { componentName } }),
    user_id: userId,
    is_conversion: false,
    created_at: new Date(`${at}Z`),
  });
}

/** Every analytics record of the service, to show that a refused request recorded nothing. */
async function everything() {
  await service.services.deferred.flush();
  return {
    events: await db()('analytics_events').orderBy('id'),
    searches: await db()('search_queries').orderBy('id').select('id'),
    rag: await db()('rag_queries').orderBy('id'),
    recommendations: await db()('recommendation_queries').orderBy('id').select('id'),
  };
}

beforeAll(async () => {
  service = await startTestService();
  orgId = (await service.request('POST', '/api/organization', { headers: { authorization: ADMIN_KEY }, body: { name: 'Shop' } })).body.id;
  datasetId = (await service.newDataset(orgId, 'shop')).id;
  otherDatasetId = (await service.newDataset(orgId, 'other shop')).id;
  const created = await ok('POST', '/api/chunk', [
    { tracking_id: 'tea-green', chunk_html: '<p>Green tea leaves steep in hot water.</p>' },
    { tracking_id: 'tea-black', chunk_html: '<p>Black tea needs boiling water.</p>' },
    { tracking_id: 'bike-road', chunk_html: '<p>Road bike tyres need six bar.</p>' },
  ]);
  for (const chunk of created.chunk_metadata) chunks[chunk.tracking_id] = chunk.id;

  searches.s1 = await insertSearch('green tea', '2026-01-01 10:00:00');
  searches.s2 = await insertSearch('black tea', '2026-01-01 11:00:00', {
    search_type: 'semantic',
    request_params: JSON.stringify({ search_type: 'semantic' }),
    query_rating: 5,
  });
  searches.s3 = await insertSearch('bik', '2026-01-02 09:00:00', {
    search_type: 'autocomplete_hybrid',
    request_params: JSON.stringify({ search_type: 'hybrid' }),
  });
  searches.s4 = await insertSearch('kettle', '2026-01-03 09:00:00', { top_score: 0.1 });
  for (let i = 0; i < 12; i++) searches[`old${i}`] = await insertSearch(`old ${i}`, `2025-12-01 00:${String(i).padStart(2, '0')}:00`);
  searches.foreign = await insertSearch('green tea', '2026-01-01 10:00:00', {}, otherDatasetId);
  recommendations.r1 = await insertRecommendation('Chunk', '2026-01-01 10:00:00');
  recommendations.r2 = await insertRecommendation('Group', '2026-01-02 10:00:00');
  ragId = (
    await db()('rag_queries').insert({ dataset_id: datasetId, search_id: randomUUID(), topic_id: randomUUID(), user_message: 'which tea?' }).returning('id')
  )[0].id;

  // A search and a recommendation made through the API, clicked at once (their records may still be queued).
  const search = await service.request('POST', '/api/chunk/search', {
    headers: { authorization: ADMIN_KEY, 'SVC-Dataset': datasetId, 'X-API-Version': 'V2' },
    body: { query: 'tea', search_type: 'fulltext' },
  });
  searches.live = search.body.id;
  await click({ request_id: searches.live, ctr_type: 'search', position: 1, clicked_chunk_id: chunks['tea-green'] });
  const recommended = await service.request('POST', '/api/chunk/recommend', {
    headers: { authorization: ADMIN_KEY, 'SVC-Dataset': datasetId, 'X-API-Version': 'V2' },
    body: { positive_tracking_ids: ['tea-green'] },
  });
  recommendations.live = recommended.body.id;
  await click({ request_id: recommendations.live, ctr_type: 'recommendation', position: 0, clicked_chunk_tracking_id: 'tea-black' });

  await click({ request_id: searches.s1, ctr_type: 'search', position: 1, clicked_chunk_id: chunks['tea-green'], metadata: { source: 'test' } });
  await click({ request_id: searches.s1, ctr_type: 'search', position: 3, clicked_chunk_id: chunks['tea-black'] });
  await click({ request_id: searches.s2, ctr_type: 'search', position: 2, clicked_chunk_tracking_id: 'tea-black' });
  await click({ request_id: recommendations.r1, ctr_type: 'recommendation', position: 2, clicked_chunk_id: chunks['bike-road'] });
  await click({ request_id: ragId, ctr_type: 'rag', position: 0, clicked_chunk_id: chunks['tea-green'] });

  const component = (name: string) => ({ component_props: { componentName: name } });
  await event({
    event_type: 'view',
    event_name: 'search_view',
    items: [chunks['tea-green']],
    user_id: 'u1',
    location: '/home',
    metadata: component('search-bar'),
  });
  await event({
    event_type: 'add_to_cart',
    event_name: 'add_to_cart',
    items: ['tea-green'],
    user_id: 'u2',
    location: '/product',
    metadata: component('cart-button'),
  });
  await event({
    event_type: 'purchase',
    event_name: 'checkout_complete',
    items: [
      { tracking_id: 'tea-green', revenue: 10 },
      { tracking_id: 'tea-black', revenue: 5.5 },
    ],
    user_id: 'u2',
    location: '/checkout',
    metadata: component('cart-button'),
    request: { request_id: searches.s2, request_type: 'search' },
  });
  await event({ event_type: 'filter_clicked', event_name: 'filter', items: { brand: 'acme' }, user_id: 'u1', location: '/home', is_conversion: false });
  await event({ event_type: 'view', event_name: 'widget_load', items: [], user_id: 'u3', location: '/home', metadata: component('search-bar') });
  await event({
    event_type: 'click',
    event_name: 'result_click',
    user_id: 'u1',
    location: '/home',
    metadata: component('search-bar'),
    request: { request_id: searches.s1, request_type: 'search' },
    clicked_items: { chunk_id: chunks['tea-green'], position: 0 },
  });

  await insertEvent('component_open', 'u1', '2026-03-01 10:00:00');
  await insertEvent('component_close', 'u1', '2026-03-01 10:00:30');
  await insertEvent('component_open', 'u2', '2026-03-01 10:05:00');
  await insertEvent('component_close', 'u2', '2026-03-01 10:06:00');
  await insertEvent('chat_load', 'u4', '2026-03-01 10:10:00');
  await insertEvent('component_open', 'u1', '2026-03-01 11:00:00');
  await insertEvent('component_close', 'u1', '2026-03-01 11:00:10');
  await insertEvent('component_open', 'u3', '2026-03-01 11:30:00');
}, 120_000);

afterAll(async () => {
  await service?.stop();
});

describe('click-through on searches', () => {
  it('counts the searches with clicks, their share and the mean position of their clicks', async () => {
    // 17 searches; s1 (clicks at 1, 3 and 0), s2 (at 2) and the live one (at 1) were clicked.
    expect(await ctr({ type: 'search_ctr_metrics' })).toEqual({
      searches_with_clicks: 3,
      percent_searches_with_clicks: (3 * 100) / 17,
      percent_searches_without_clicks: (14 * 100) / 17,
      avg_position_of_click: 7 / 5,
    });
  });

  it('takes each filter', async () => {
    const metrics = (filter: Record<string, unknown>) => ctr({ type: 'search_ctr_metrics', filter });
    expect(await metrics({ date_range: { gte: '2026-01-01', lt: '2026-01-02' } })).toEqual({
      searches_with_clicks: 2,
      percent_searches_with_clicks: 100,
      percent_searches_without_clicks: 0,
      avg_position_of_click: 6 / 4,
    });
    expect(await metrics({ search_type: 'autocomplete' })).toEqual({
      searches_with_clicks: 0,
      percent_searches_with_clicks: 0,
      percent_searches_without_clicks: 100,
      avg_position_of_click: 0,
    });
    expect((await metrics({ search_method: 'semantic' })).searches_with_clicks).toBe(1);
    expect(await metrics({ query_rating: { gte: 3 } })).toEqual({
      searches_with_clicks: 1,
      percent_searches_with_clicks: 100,
      percent_searches_without_clicks: 0,
      avg_position_of_click: 2,
    });
    expect(await metrics({ query: 'TEA' })).toMatchObject({ searches_with_clicks: 3, percent_searches_with_clicks: 100 });
    expect(await metrics({ top_score: { lt: 0.2 } })).toMatchObject({ searches_with_clicks: 0, percent_searches_without_clicks: 100 });
    expect(await metrics({ date_range: { gte: '2030-01-01' } })).toEqual({
      searches_with_clicks: 0,
      percent_searches_with_clicks: 0,
      percent_searches_without_clicks: 0,
      avg_position_of_click: 0,
    });
  });

  it('lists the clicks with their search and the clicked chunk, newest first', async () => {
    const { queries } = await ctr({ type: 'searches_with_clicks' });
    const seen = queries.map((q: any) => [q.request_id, q.query, q.clicked_chunk.chunk.id, q.clicked_chunk.position]);
    expect(seen).toHaveLength(5);
    expect(seen).toEqual(
      expect.arrayContaining([
        [searches.live, 'tea', chunks['tea-green'], 1],
        [searches.s1, 'green tea', chunks['tea-green'], 1],
        [searches.s1, 'green tea', chunks['tea-black'], 3],
        [searches.s2, 'black tea', chunks['tea-black'], 2],
        [searches.s1, 'green tea', chunks['tea-green'], 0],
      ]),
    );
    const times = queries.map((q: any) => q.created_at);
    expect(times.every((t: string) => TIMESTAMP.test(t))).toBe(true);
    expect([...times].sort().reverse()).toEqual(times);
    expect(queries.find((q: any) => q.request_id === searches.s2).results).toEqual([chunks['tea-green'], chunks['tea-black']]);
    expect(queries[0].clicked_chunk.chunk).toMatchObject({ dataset_id: datasetId, tracking_id: expect.any(String) });
    const filtered = await ctr({ type: 'searches_with_clicks', filter: { search_method: 'semantic' } });
    expect(filtered.queries.map((q: any) => q.request_id)).toEqual([searches.s2]);
  });

  it('lists the searches without clicks, newest first, ten a page', async () => {
    const first = await ctr({ type: 'searches_without_clicks' });
    const second = await ctr({ type: 'searches_without_clicks', page: 2 });
    expect(first.queries.map((q: any) => q.request_id)).toEqual([searches.s4, searches.s3, ...[11, 10, 9, 8, 7, 6, 5, 4].map((i) => searches[`old${i}`])]);
    expect(second.queries.map((q: any) => q.request_id)).toEqual([3, 2, 1, 0].map((i) => searches[`old${i}`]));
    expect(first.queries[0]).toEqual({ query: 'kettle', request_id: searches.s4, created_at: '2026-01-03 09:00:00.000' });
    expect(await ctr({ type: 'searches_without_clicks', page: 0 })).toEqual(first);
  });
});

describe('click-through on recommendations', () => {
  it('counts, lists with and without clicks', async () => {
    expect(await ctr({ type: 'recommendation_ctr_metrics' })).toEqual({
      recommendations_with_clicks: 2,
      percent_recommendations_with_clicks: 200 / 3,
      percent_recommendations_without_clicks: 100 / 3,
      avg_position_of_click: 1,
    });
    expect(await ctr({ type: 'recommendation_ctr_metrics', filter: { recommendation_type: 'Group' } })).toEqual({
      recommendations_with_clicks: 0,
      percent_recommendations_with_clicks: 0,
      percent_recommendations_without_clicks: 100,
      avg_position_of_click: 0,
    });
    const withClicks = await ctr({ type: 'recommendations_with_clicks', filter: { date_range: { lte: '2026-06-01' } } });
    expect(withClicks.recommendations).toEqual([
      {
        request_id: recommendations.r1,
        positive_ids: [chunks['tea-green']],
        negative_ids: [],
        positive_tracking_ids: [],
        negative_tracking_ids: ['bike-road'],
        results: [chunks['tea-black']],
        clicked_chunk: { chunk: expect.objectContaining({ id: chunks['bike-road'] }), position: 2 },
        created_at: expect.stringMatching(TIMESTAMP),
      },
    ]);
    const all = await ctr({ type: 'recommendations_with_clicks' });
    expect(all.recommendations.map((r: any) => r.request_id).sort()).toEqual([recommendations.r1, recommendations.live].sort());
    const without = await ctr({ type: 'recommendations_without_clicks' });
    expect(without.recommendations).toEqual([
      {
        request_id: recommendations.r2,
        positive_ids: [chunks['tea-green']],
        negative_ids: [],
        positive_tracking_ids: [],
        negative_tracking_ids: ['bike-road'],
        created_at: '2026-01-02 10:00:00.000',
      },
    ]);
  });
});

describe('a click on a RAG call', () => {
  it('marks the call clicked in the RAG reports', async () => {
    const clicked = await ok('POST', '/api/analytics/rag', { type: 'rag_queries', has_clicks: true });
    expect(clicked.queries.map((q: any) => q.id)).toEqual([ragId]);
  });
});

describe('events', () => {
  it('reads an event back by id, in the spec shape', async () => {
    const { events } = await allEvents({ filter: { event_type: 'purchase' } });
    expect(events).toHaveLength(1);
    const purchase = await ok('GET', `/api/analytics/events/${events[0].id}`);
    expect(purchase).toEqual({
      id: events[0].id,
      dataset_id: datasetId,
      event_type: 'purchase',
      event_name: 'checkout_complete',
      items: [JSON.stringify({ tracking_id: 'tea-green', revenue: 10 }), JSON.stringify({ tracking_id: 'tea-black', revenue: 5.5 })],
      is_conversion: true,
      metadata: { component_props: { componentName: 'cart-button' } },
      request_id: searches.s2,
      request_type: 'search',
      user_id: 'u2',
      location: '/checkout',
      created_at: expect.stringMatching(TIMESTAMP),
      updated_at: expect.stringMatching(TIMESTAMP),
    });
    expect((await db()('analytics_events').where({ id: events[0].id }).first()).revenue).toBe(15.5);
    const foreign = await send('GET', `/api/analytics/events/${events[0].id}`, undefined, otherDatasetId);
    expect([foreign.status, foreign.body.message]).toEqual([404, `event ${events[0].id} not found`]);
  });

  it('lists events newest first, ten a page, with each filter', async () => {
    // 7 clicks sent as CTR, 6 events sent, 8 component events written as of 2026-03-01.
    const first = await allEvents({});
    const second = await allEvents({ page: 2 });
    expect(first.events).toHaveLength(10);
    expect(second.events).toHaveLength(10);
    expect((await allEvents({ page: 3 })).events).toHaveLength(1);
    const times = [...first.events, ...second.events].map((e: any) => e.created_at);
    expect([...times].sort().reverse()).toEqual(times);
    expect(second.events.slice(-8).map((e: any) => e.event_name)).toEqual(expect.arrayContaining(['component_open', 'component_close', 'chat_load']));

    const names = async (filter: Record<string, unknown>) => (await allEvents({ filter })).events.map((e: any) => e.event_name).sort();
    expect(await names({ event_type: 'click' })).toEqual([...Array(7).fill('click'), 'result_click'].sort());
    expect(await names({ event_type: 'view', date_range: { gte: '2026-11-01' } })).toEqual(['search_view', 'widget_load']);
    expect(await names({ is_conversion: false, date_range: { gt: '2026-03-02' } })).toEqual(['filter', 'search_view', 'widget_load']);
    expect(await names({ user_id: 'u2' })).toEqual(['add_to_cart', 'checkout_complete', 'component_close', 'component_open']);
    expect(await names({ metadata_filter: "component_props.componentName = 'cart-button'" })).toEqual(['add_to_cart', 'checkout_complete']);
    expect(await names({ metadata_filter: 'brand = "acme"' })).toEqual(['filter']);
    expect(await names({ metadata_filter: 'source = "test"', event_type: 'click' })).toEqual(['click']);
    expect(await names({ date_range: { gte: '2026-03-01 10:00', lt: '2026-03-01 10:06' } })).toEqual(['component_close', 'component_open', 'component_open']);
  });

  it('keeps what each type of event carries', async () => {
    const { events } = await allEvents({ filter: { date_range: { gte: '2026-11-01' }, user_id: 'u1' } });
    const byName = Object.fromEntries(events.map((e: any) => [e.event_name, e]));
    expect(byName.filter).toMatchObject({ event_type: 'filter_clicked', items: [], metadata: { brand: 'acme' }, is_conversion: false });
    expect(byName.search_view).toMatchObject({ event_type: 'view', items: [chunks['tea-green']], is_conversion: false, request_id: null });
    expect(byName.result_click).toMatchObject({
      event_type: 'click',
      items: [JSON.stringify({ chunk_id: chunks['tea-green'], position: 0 })],
      request_id: searches.s1,
      request_type: 'search',
      is_conversion: true,
    });
  });

  it('records searches, RAG calls and recommendations sent as events', async () => {
    await event({
      event_type: 'search',
      query: 'oolong',
      tokens: 3,
      search_type: 'autocomplete',
      request_params: { search_type: 'bm25' },
      results: [{ id: chunks['tea-green'] }],
      latency: 12,
      query_rating: { rating: 0, note: 'nothing useful' },
    });
    await event({
      event_type: 'rag',
      user_message: 'best oolong?',
      tokens: 40,
      llm_response: 'This one.',
      query_rating: { rating: 7, note: 'good' },
      user_id: 'u9',
    });
    await event({ event_type: 'recommendation', recommendation_type: 'Group', positive_tracking_ids: ['tea-green'], results: [], user_id: 'u9' });
    await service.services.deferred.flush();
    expect(
      await db()('search_queries')
        .where({ dataset_id: datasetId, query: 'oolong' })
        .first('search_type', 'kind', 'search_method', 'results', 'latency_ms', 'query_rating', 'query_rating_note'),
    ).toEqual({
      search_type: 'autocomplete_bm25',
      kind: 'autocomplete',
      search_method: 'bm25',
      results: [chunks['tea-green']],
      latency_ms: 12,
      query_rating: 0,
      query_rating_note: 'nothing useful',
    });
    expect(
      await db()('rag_queries')
        .where({ dataset_id: datasetId, user_message: 'best oolong?' })
        .first('llm_response', 'query_rating', 'query_rating_note', 'user_id'),
    ).toEqual({ llm_response: 'This one.', query_rating: 7, query_rating_note: 'good', user_id: 'u9' });
    expect(await db()('recommendation_queries').where({ dataset_id: datasetId, user_id: 'u9' }).first('recommendation_type', 'positive_tracking_ids')).toEqual({
      recommendation_type: 'Group',
      positive_tracking_ids: ['tea-green'],
    });
    await db()('search_queries').where({ dataset_id: datasetId, query: 'oolong' }).delete();
    await db()('rag_queries').where({ dataset_id: datasetId, user_message: 'best oolong?' }).delete();
    await db()('recommendation_queries').where({ dataset_id: datasetId, user_id: 'u9' }).delete();
  });
});

describe('component analytics', () => {
  const window = { date_range: { gte: '2026-03-01 09:00', lt: '2026-03-01 13:00' } };

  it('counts unique users per bucket, every bucket of the range shown', async () => {
    expect(await component({ type: 'total_unique_users', filter: window, granularity: 'hour' })).toEqual({
      total_unique_users: 3,
      points: [
        { time_stamp: '2026-03-01 09:00:00.000', point: 0 },
        { time_stamp: '2026-03-01 10:00:00.000', point: 2 },
        { time_stamp: '2026-03-01 11:00:00.000', point: 2 },
        { time_stamp: '2026-03-01 12:00:00.000', point: 0 },
      ],
    });
    const month = new Date().toISOString().slice(0, 7);
    expect(await component({ type: 'total_unique_users', filter: { component_name: 'search-bar' }, granularity: 'month' })).toEqual({
      total_unique_users: 1,
      points: [{ time_stamp: `${month}-01 00:00:00.000`, point: 1 }],
    });
  });

  it('ranks pages and components', async () => {
    expect(await component({ type: 'top_pages' })).toEqual({
      top_pages: [
        { page: '/home', count: 3 },
        { page: '/checkout', count: 1 },
        { page: '/product', count: 1 },
      ],
    });
    expect(await component({ type: 'top_components' })).toEqual({
      top_components: [
        { component_name: 'chat', count: 7, cart_count: 0, checkout_count: 0 },
        { component_name: 'cart-button', count: 2, cart_count: 1, checkout_count: 1 },
        { component_name: 'search-bar', count: 2, cart_count: 0, checkout_count: 0 },
      ],
    });
    expect(await component({ type: 'top_components', filter: window })).toEqual({
      top_components: [{ component_name: 'chat', count: 7, cart_count: 0, checkout_count: 0 }],
    });
    expect(await component({ type: 'top_components', page: 2 })).toEqual({ top_components: [] });
    expect(await component({ type: 'component_names' })).toEqual({ component_names: ['cart-button', 'chat', 'search-bar'] });
  });

  it('times the interactions from open to close', async () => {
    expect(await component({ type: 'component_interaction_time', filter: window, granularity: 'hour' })).toEqual({
      avg_interaction_time: 100 / 3,
      points: [
        { time_stamp: '2026-03-01 09:00:00.000', point: 0 },
        { time_stamp: '2026-03-01 10:00:00.000', point: 45 },
        { time_stamp: '2026-03-01 11:00:00.000', point: 10 },
        { time_stamp: '2026-03-01 12:00:00.000', point: 0 },
      ],
    });
    // u2's session (10:05 to 10:06) counts only when the range holds its close.
    const minutes = (lte: string) =>
      component({ type: 'component_interaction_time', filter: { date_range: { gte: '2026-03-01 10:00', lte } }, granularity: 'minute' });
    expect((await minutes('2026-03-01 10:06')).points.map((p: any) => p.point)).toEqual([30, 0, 0, 0, 0, 60, 0]);
    expect(await minutes('2026-03-01 10:05')).toMatchObject({ avg_interaction_time: 30, points: [{ point: 30 }, {}, {}, {}, {}, { point: 0 }] });
    expect(await component({ type: 'component_interaction_time', filter: { component_name: 'search-bar' } })).toEqual({ avg_interaction_time: 0, points: [] });
  });
});

describe('access', () => {
  it('needs the admin role', async () => {
    const key = await service.request('POST', '/api/organization/api_key', {
      headers: { authorization: ADMIN_KEY, 'SVC-Organization': orgId },
      body: { name: 'reader', role: 0 },
    });
    const before = await everything();
    const reader = key.body.api_key;
    for (const [method, path, body] of [
      ['PUT', '/api/analytics/events', { event_type: 'view', event_name: 'v', items: [] }],
      ['PUT', '/api/analytics/ctr', { request_id: searches.s3, ctr_type: 'search', position: 0, clicked_chunk_id: chunks['tea-green'] }],
      ['POST', '/api/analytics/events/all', {}],
      ['POST', '/api/analytics/events/ctr', { type: 'search_ctr_metrics' }],
      ['POST', '/api/analytics/events/component', { type: 'component_names' }],
    ] as const) {
      expect((await send(method, path, body, datasetId, reader)).status, path).toBe(403);
    }
    expect(await everything()).toEqual(before);
  });
});

describe('bad input', () => {
  const refused = async (method: string, path: string, body: unknown, status: number, message: RegExp) => {
    const before = await everything();
    const reply = await send(method, path, body);
    expect([reply.status, reply.body.message], JSON.stringify(reply.body)).toEqual([status, expect.stringMatching(message)]);
    expect(await everything()).toEqual(before);
  };

  it('refuses clicks on requests it does not have, with nothing recorded', async () => {
    const clickOn = (fields: Record<string, unknown>) => ({ ctr_type: 'search', position: 1, clicked_chunk_id: chunks['tea-green'], ...fields });
    await refused('PUT', '/api/analytics/ctr', clickOn({ request_id: searches.foreign }), 404, /^search .* not found$/);
    await refused('PUT', '/api/analytics/ctr', clickOn({ request_id: randomUUID() }), 404, /not found/);
    await refused('PUT', '/api/analytics/ctr', clickOn({ request_id: searches.s3, ctr_type: 'recommendation' }), 404, /^recommendation .* not found$/);
    await refused('PUT', '/api/analytics/ctr', clickOn({ request_id: searches.s3, clicked_chunk_id: randomUUID() }), 404, /^chunk .* not found$/);
    await refused('PUT', '/api/analytics/ctr', clickOn({ request_id: searches.s3, clicked_chunk_id: undefined }), 400, /clicked_chunk_id/);
    await refused('PUT', '/api/analytics/ctr', clickOn({ request_id: searches.s3, ctr_type: 'banner' }), 400, /ctr_type/);
    await refused('PUT', '/api/analytics/ctr', clickOn({ request_id: searches.s3, position: -1 }), 400, /position/);
  });

  it('refuses bad events, with nothing recorded', async () => {
    await refused('PUT', '/api/analytics/events', { event_type: 'dance', event_name: 'x', items: [] }, 400, /event_type/);
    await refused('PUT', '/api/analytics/events', { event_type: 'view', items: [] }, 400, /event_name/);
    await refused(
      'PUT',
      '/api/analytics/events',
      { event_type: 'view', event_name: 'v', items: [], request: { request_id: searches.foreign, request_type: 'search' } },
      404,
      /^search .* not found$/,
    );
    await refused(
      'PUT',
      '/api/analytics/events',
      { event_type: 'click', event_name: 'c', clicked_items: { chunk_id: randomUUID(), position: 1 } },
      404,
      /^chunk/,
    );
    await refused('PUT', '/api/analytics/events', { event_type: 'rag', user_message: 'm', tokens: 1, query_rating: { rating: 11 } }, 400, /rating/);
    await refused('PUT', '/api/analytics/events', { event_type: 'search', query: 'q', tokens: 1, query_rating: { rating: -1 } }, 400, /rating/);
    await refused('PUT', '/api/analytics/events', { event_type: 'search', query: 'q', tokens: 1, results: ['not an id'] }, 400, /results\[0\]/);
    await refused('PUT', '/api/analytics/events', { event_type: 'purchase', event_name: 'p', items: [{ tracking_id: 't' }] }, 400, /revenue/);
  });

  it('refuses bad report requests', async () => {
    await refused('POST', '/api/analytics/events/ctr', { type: 'no_such_report' }, 400, /type/);
    await refused('POST', '/api/analytics/events/component', { type: 'no_such_report' }, 400, /type/);
    await refused(
      'POST',
      '/api/analytics/events/ctr',
      { type: 'search_ctr_metrics', filter: { date_range: { gt: '2026-02-01', lt: '2026-01-01' } } },
      400,
      /filter\.date_range: the range starts .* after it ends/,
    );
    await refused(
      'POST',
      '/api/analytics/events/component',
      { type: 'top_pages', filter: { date_range: { gte: 'soon' } } },
      400,
      /filter\.date_range\.gte: soon is not a timestamp/,
    );
    await refused('POST', '/api/analytics/events/all', { filter: { date_range: { gte: '2026-02-01', lte: '2026-01-01' } } }, 400, /filter\.date_range/);
    await refused('POST', '/api/analytics/events/all', { filter: { event_type: 'search' } }, 400, /event_type/);
    await refused(
      'POST',
      '/api/analytics/events/all',
      { filter: { metadata_filter: 'no equals sign' } },
      400,
      /filter\.metadata_filter: .* is not `path = value`/,
    );
    await refused('POST', '/api/analytics/events/all', { filter: { metadata_filter: 'a = {"b": 1}' } }, 400, /filter\.metadata_filter/);
    await refused('POST', '/api/analytics/events/ctr', { type: 'search_ctr_metrics', filter: { top_score: { gt: 0.9, lt: 0.1 } } }, 400, /filter\.top_score/);
    await refused(
      'POST',
      '/api/analytics/events/component',
      { type: 'total_unique_users', granularity: 'second', filter: { date_range: { gte: '2026-01-01', lt: '2026-01-02' } } },
      400,
      /more than 10000/,
    );
    await refused('GET', '/api/analytics/events/not-a-uuid', undefined, 400, /event_id/);
    await refused('GET', `/api/analytics/events/${randomUUID()}`, undefined, 404, /^event .* not found$/);
  });
});
