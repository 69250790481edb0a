// Analytics recorded after the answer (store/deferred.ts) survive a clean stop: searches,
// recommendations, events of every kind and clicks are sent, the service is stopped at once (some
// requests still in flight), and the service started again on the same data (embedded: the same
// DATA_DIR; full: the same database) holds every record whose request was answered.
import { afterAll, expect, it } from 'vitest';
import { ADMIN_KEY, serviceOn, type TestService } from '../support/service.js';
import { testEnvironment } from '../support/env.js';

let reopened: TestService | undefined;

afterAll(async () => {
  await reopened?.stop();
});

it('a clean stop writes every analytics record whose request was answered', async () => {
  const environment = await testEnvironment();
  const service = await serviceOn(environment);
  const send = async (method: string, path: string, body: unknown) => {
    const reply = await service.request(method, path, { headers: { authorization: ADMIN_KEY, 'SVC-Dataset': datasetId, 'X-API-Version': 'V2' }, body });
    expect(reply.status, JSON.stringify(reply.body)).toBeLessThan(300);
    return reply.body;
  };
  const orgId = (await service.request('POST', '/api/organization', { headers: { authorization: ADMIN_KEY }, body: { name: 'Shop' } })).body.id;
  const datasetId = (await service.newDataset(orgId, 'shop')).id;
  const created = await send('POST', '/api/chunk', [
    { tracking_id: 'tea-green', chunk_html: '<p>Green tea leaves steep in hot water.</p>' },
    { tracking_id: 'tea-black', chunk_html: '<p>Black tea needs boiling water.</p>' },
  ]);
  const chunkId = created.chunk_metadata[0].id as string;

  // Answered before the stop: searches, a recommendation, clicks on them, events of every kind.
  const searchIds: string[] = [];
  for (const query of ['green tea', 'black tea', 'water']) searchIds.push((await send('POST', '/api/chunk/search', { query, search_type: 'fulltext' })).id);
  searchIds.push((await send('POST', '/api/chunk/autocomplete', { query: 'te', search_type: 'fulltext' })).id);
  const recommendationId = (await send('POST', '/api/chunk/recommend', { positive_tracking_ids: ['tea-green'] })).id;
  await send('PUT', '/api/analytics/ctr', { request_id: searchIds[0], ctr_type: 'search', position: 0, clicked_chunk_id: chunkId });
  await send('PUT', '/api/analytics/ctr', { request_id: recommendationId, ctr_type: 'recommendation', position: 1, clicked_chunk_tracking_id: 'tea-black' });
  const events = [
    { event_type: 'view', event_name: 'product_view', items: ['tea-green'], user_id: 'u1' },
    { event_type: 'add_to_cart', event_name: 'added', items: ['tea-green'], user_id: 'u1' },
    { event_type: 'purchase', event_name: 'bought', items: [{ tracking_id: 'tea-green', revenue: 12.5 }], user_id: 'u1' },
    { event_type: 'filter_clicked', event_name: 'filter', items: { brand: 'acme' }, user_id: 'u2' },
    {
      event_type: 'click',
      event_name: 'result_click',
      request: { request_id: searchIds[1], request_type: 'search' },
      clicked_items: { chunk_id: chunkId, position: 2 },
    },
    { event_type: 'search', query: 'oolong', tokens: 3, search_type: 'search', request_params: { search_type: 'bm25' }, results: [chunkId], latency: 12 },
    { event_type: 'rag', user_message: 'best oolong?', tokens: 40, llm_response: 'This one.', user_id: 'u9' },
    { event_type: 'recommendation', recommendation_type: 'Chunk', positive_ids: [chunkId], results: [], user_id: 'u9' },
  ];
  for (const event of events) await send('PUT', '/api/analytics/events', event);

  // Sent all at once, the stop called as they go: every one answered must be recorded.
  const late = Array.from({ length: 20 }, (_, i) =>
    service.request('POST', '/api/chunk/search', {
      headers: { authorization: ADMIN_KEY, 'SVC-Dataset': datasetId, 'X-API-Version': 'V2' },
      body: { query: `late ${i}`, search_type: 'fulltext' },
    }),
  );
  const lateEvents = Array.from({ length: 20 }, (_, i) =>
    service.request('PUT', '/api/analytics/events', {
      headers: { authorization: ADMIN_KEY, 'SVC-Dataset': datasetId },
      body: { event_type: 'view', event_name: `late_view_${i}`, items: [], user_id: 'u3' },
    }),
  );
  const lateReplies = Promise.allSettled(late);
  const lateEventReplies = Promise.allSettled(lateEvents);
  // Stopped once the first is answered: the others are in flight, or refused at the door.
  await Promise.race(late);
  await service.stop();
  const [searchesSettled, eventsSettled] = await Promise.all([lateReplies, lateEventReplies]);
  const answered = searchesSettled.flatMap((r) => (r.status === 'fulfilled' && r.value.status === 200 ? [r.value.body.id as string] : []));
  const answeredEvents = eventsSettled.flatMap((r, i) => (r.status === 'fulfilled' && r.value.status === 204 ? [`late_view_${i}`] : []));

  expect(answered.length).toBeGreaterThan(0);

  reopened = await serviceOn(environment);
  const db = reopened.services.store.db;
  const searches = await db('search_queries').where({ dataset_id: datasetId }).pluck('id');
  expect(searches).toEqual(expect.arrayContaining([...searchIds, ...answered]));
  // Each search answered, and the one sent as an event.
  expect(searches).toHaveLength(searchIds.length + answered.length + 1);
  expect(await db('search_queries').where({ dataset_id: datasetId, query: 'oolong' }).pluck('latency_ms')).toEqual([12]);
  expect(await db('recommendation_queries').where({ dataset_id: datasetId }).orderBy('created_at').pluck('id')).toEqual([recommendationId, expect.any(String)]);
  expect(await db('rag_queries').where({ dataset_id: datasetId }).pluck('user_message')).toEqual(['best oolong?']);
  const names: string[] = await db('analytics_events').where({ dataset_id: datasetId }).pluck('event_name');
  expect(names.sort()).toEqual(['added', 'bought', 'click', 'click', 'filter', 'product_view', 'result_click', ...answeredEvents].sort());
  const clicks = await db('analytics_events').where({ dataset_id: datasetId, event_type: 'click' }).orderBy('position').pluck('request_id');
  expect(clicks).toEqual([searchIds[0], recommendationId, searchIds[1]]);
});
