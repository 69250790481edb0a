// RAG analytics over HTTP: every report of POST /api/analytics/rag over RAG queries, topics and
// events recorded at chosen instants (exact counts, averages and rates, empty buckets filled, order,
// pages, each filter), rating a RAG query (PUT) and the reports seeing it, and bad input refused
// with nothing changed.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrganization, getRagAnalytics, setRagQueryRating } from '../../sdk/src/generated/sdk.gen.js';
import type { RagAnalytics } from '../../sdk/src/generated/types.gen.js';
import { ADMIN_KEY, startTestService, type TestService } from '../support/service.js';

let service: TestService;
let orgId: string;
let main: string;
let other: string;
const db = () => service.services.store.db;
const ds = (id: string) => ({ 'SVC-Dataset': id });
const NO_TOPIC = '00000000-0000-0000-0000-000000000000';

/** Topics T1…T5 of the main dataset, and one of the other dataset. */
const topic: Record<string, string> = {};
/** RAG queries q1…q6 of the main dataset, and one of the other dataset. */
const query: Record<string, string> = {};
/** Events e1…e10 of the main dataset. */
const event: Record<string, string> = {};

async function addTopic(datasetId: string, name: string, owner: string, at: string, metadata: unknown = null): Promise<string> {
  const [row] = await db()('topics')
    .insert({ dataset_id: datasetId, name, owner_id: owner, metadata: metadata && JSON.stringify(metadata), created_at: `${at}Z`, updated_at: `${at}Z` })
    .returning('id');
  return row.id;
}

interface Rag {
  topic: string;
  at: string;
  user: string;
  type: 'all_chunks' | 'chosen_chunks';
  message: string;
  top: number;
  hallucination: number;
  rating?: number;
  component?: string;
}

async function addRag(datasetId: string, r: Rag): Promise<string> {
  const id = randomUUID();
  await db()('rag_queries').insert({
    id,
    dataset_id: datasetId,
    search_id: randomUUID(),
    topic_id: r.topic,
    user_id: r.user,
    rag_type: r.type,
    user_message: r.message,
    llm_response: `answer to ${r.message}`,
    results: JSON.stringify([{ id: randomUUID() }]),
    top_score: r.top,
    hallucination_score: r.hallucination,
    detected_hallucinations: r.hallucination > 0 ? ['Oslo'] : [],
    metadata: r.component ? JSON.stringify({ component_props: { componentName: r.component } }) : null,
    query_rating: r.rating ?? null,
    created_at: `${r.at}Z`,
  });
  return id;
}

interface Event {
  type: 'view' | 'click' | 'add_to_cart' | 'purchase';
  name: string;
  at: string;
  user: string;
  about?: string;
  conversion: boolean;
  revenue?: number;
  metadata?: unknown;
}

async function addEvent(datasetId: string, e: Event): Promise<string> {
  const id = randomUUID();
  await db()('analytics_events').insert({
    id,
    dataset_id: datasetId,
    event_type: e.type,
    event_name: e.name,
    request_id: e.about ?? null,
    request_type: e.about ? 'rag' : null,
    items: [],
    position: e.type === 'click' ? 0 : null,
    revenue: e.revenue ?? null,
    metadata: e.metadata ? JSON.stringify(e.metadata) : null,
    user_id: e.user,
    is_conversion: e.conversion,
    created_at: `${e.at}Z`,
    updated_at: `${e.at}Z`,
  });
  return id;
}

async function report(body: RagAnalytics, datasetId = main): Promise<any> {
  const { data } = await getRagAnalytics({ client: service.client(), headers: ds(datasetId), body, throwOnError: true });
  return data;
}

/** 1 and 2 May 2024, by the day. */
const twoDays = { date_range: { gte: '2024-05-01', lt: '2024-05-03' } };
const points = (r: { points: { time_stamp: string; point: number }[] }) => r.points.map((p) => [p.time_stamp.slice(0, 10), p.point]);
const queryNames = (r: { queries: { id: string }[] }) => r.queries.map((q) => Object.keys(query).find((k) => query[k] === q.id));
const topicNames = (r: { topics: { id: string }[] }) => r.topics.map((t) => Object.keys(topic).find((k) => topic[k] === t.id));
const eventNames = (r: { events: { id: string }[] }) => r.events.map((e) => Object.keys(event).find((k) => event[k] === e.id));

beforeAll(async () => {
  service = await startTestService();
  orgId = (await createOrganization({ client: service.client(), body: { name: 'RAG analytics' } })).data!.id;
  main = (await service.newDataset(orgId, 'help')).id;
  other = (await service.newDataset(orgId, 'other')).id;

  topic.T1 = await addTopic(main, 'Refunds', 'o1', '2024-05-01 09:00:00', { component_props: { componentName: 'chat-widget' } });
  topic.T2 = await addTopic(main, 'Shipping', 'o2', '2024-05-01 10:30:00');
  topic.T3 = await addTopic(main, 'Refunds', 'o2', '2024-05-02 08:00:00');
  topic.T4 = await addTopic(main, ' ', 'o3', '2024-05-01 11:00:00'); // no name: not counted
  topic.T5 = await addTopic(main, 'Sizes', 'o4', '2024-05-02 09:00:00'); // no RAG query: not counted
  topic.foreign = await addTopic(other, 'Refunds', 'o9', '2024-05-01 09:00:00');

  query.q1 = await addRag(main, {
    topic: topic.T1,
    at: '2024-05-01 09:00:10',
    user: 'u1',
    type: 'all_chunks',
    message: 'How do refunds work?',
    top: 0.9,
    hallucination: 0.1,
    rating: 1,
    component: 'chat-widget',
  });
  query.q2 = await addRag(main, {
    topic: topic.T1,
    at: '2024-05-01 09:05:00',
    user: 'u1',
    type: 'all_chunks',
    message: 'A refund to my card?',
    top: 0.7,
    hallucination: 0.3,
    rating: 0,
  });
  query.q3 = await addRag(main, {
    topic: topic.T2,
    at: '2024-05-01 10:30:05',
    user: 'u2',
    type: 'all_chunks',
    message: 'Shipping to Norway',
    top: 0.5,
    hallucination: 0,
  });
  query.q4 = await addRag(main, {
    topic: topic.T3,
    at: '2024-05-02 08:00:05',
    user: 'u2',
    type: 'chosen_chunks',
    message: 'Refund again',
    top: 0.2,
    hallucination: 0.5,
    rating: 4,
  });
  query.q5 = await addRag(main, { topic: topic.T4, at: '2024-05-01 11:00:05', user: 'u3', type: 'all_chunks', message: 'Hello', top: 0.1, hallucination: 0.9 });
  query.q6 = await addRag(main, {
    topic: NO_TOPIC,
    at: '2024-05-02 08:30:00',
    user: '',
    type: 'chosen_chunks',
    message: 'Generated',
    top: 0,
    hallucination: 0.2,
  });
  query.foreign = await addRag(other, {
    topic: topic.foreign,
    at: '2024-05-01 09:00:10',
    user: 'u1',
    type: 'all_chunks',
    message: 'Refunds?',
    top: 1,
    hallucination: 0,
  });

  const followup = (text: string) => ({ followup_query: text });
  event.e1 = await addEvent(main, { type: 'click', name: 'Click', at: '2024-05-01 09:01:00', user: 'u1', about: query.q1, conversion: true });
  event.e2 = await addEvent(main, { type: 'click', name: 'Click', at: '2024-05-01 10:31:00', user: 'u2', about: query.q3, conversion: false });
  event.e3 = await addEvent(main, { type: 'view', name: 'View', at: '2024-05-01 10:32:00', user: 'u2', about: query.q3, conversion: false });
  event.e4 = await addEvent(main, { type: 'add_to_cart', name: 'site-add_to_cart', at: '2024-05-02 08:01:00', user: 'u2', about: query.q4, conversion: true });
  event.e5 = await addEvent(main, {
    type: 'view',
    name: 'site-followup_query',
    at: '2024-05-01 09:02:00',
    user: 'u1',
    about: query.q1,
    conversion: false,
    metadata: followup('Can I get store credit?'),
  });
  event.e6 = await addEvent(main, {
    type: 'view',
    name: 'site-followup_query',
    at: '2024-05-02 08:02:00',
    user: 'u2',
    about: query.q4,
    conversion: false,
    metadata: followup('Can I get store credit?'),
  });
  event.e7 = await addEvent(main, {
    type: 'view',
    name: 'site-followup_query',
    at: '2024-05-01 12:00:00',
    user: 'u5',
    conversion: false,
    metadata: followup('What sizes?'),
  });
  event.e8 = await addEvent(main, {
    type: 'purchase',
    name: 'site-checkout_end',
    at: '2024-05-01 09:10:00',
    user: 'u1',
    about: query.q2,
    conversion: true,
    revenue: 30,
  });
  event.e9 = await addEvent(main, { type: 'purchase', name: 'site-checkout_end', at: '2024-05-02 09:00:00', user: 'u4', conversion: true, revenue: 12.5 });
  event.e10 = await addEvent(main, {
    type: 'purchase',
    name: 'site-checkout_end',
    at: '2024-05-02 08:03:00',
    user: 'u2',
    about: query.q4,
    conversion: true,
    revenue: 20,
  });
  await addEvent(other, { type: 'click', name: 'Click', at: '2024-05-01 09:01:00', user: 'u1', about: query.foreign, conversion: true });
});

afterAll(async () => {
  await service?.stop();
});

describe('RAG queries', () => {
  it('rag_queries: a page in the order asked, by each filter, clicked or not', async () => {
    expect(queryNames(await report({ type: 'rag_queries' }))).toEqual(['q6', 'q4', 'q5', 'q3', 'q2', 'q1']);
    expect(queryNames(await report({ type: 'rag_queries', sort_by: 'top_score', sort_order: 'asc' }))).toEqual(['q6', 'q5', 'q4', 'q3', 'q2', 'q1']);
    expect(queryNames(await report({ type: 'rag_queries', sort_by: 'hallucination_score' }))).toEqual(['q5', 'q4', 'q2', 'q6', 'q1', 'q3']);
    expect(queryNames(await report({ type: 'rag_queries', filter: { rag_type: 'chosen_chunks' } }))).toEqual(['q6', 'q4']);
    expect(queryNames(await report({ type: 'rag_queries', filter: { component_name: 'chat-widget' } }))).toEqual(['q1']);
    expect(queryNames(await report({ type: 'rag_queries', filter: { query: 'REFUND' } }))).toEqual(['q4', 'q2', 'q1']);
    expect(queryNames(await report({ type: 'rag_queries', filter: { query_rating: { gte: 1 } } }))).toEqual(['q4', 'q1']);
    expect(queryNames(await report({ type: 'rag_queries', filter: { date_range: { gt: '2024-05-01 09:00:10', lte: '2024-05-01 11:00:05' } } }))).toEqual([
      'q5',
      'q3',
      'q2',
    ]);
    // Clicks (e1 on q1, e2 on q3) mark their queries clicked, by a trigger.
    expect(queryNames(await report({ type: 'rag_queries', has_clicks: true }))).toEqual(['q3', 'q1']);
    expect(queryNames(await report({ type: 'rag_queries', has_clicks: false }))).toEqual(['q6', 'q4', 'q5', 'q2']);
    expect((await report({ type: 'rag_queries', page: 2 })).queries).toEqual([]);
  });

  it('rag_query_details: one query, as recorded', async () => {
    expect(await report({ type: 'rag_query_details', request_id: query.q4 })).toMatchObject({
      id: query.q4,
      dataset_id: main,
      topic_id: topic.T3,
      user_id: 'u2',
      rag_type: 'chosen_chunks',
      user_message: 'Refund again',
      llm_response: 'answer to Refund again',
      top_score: 0.2,
      hallucination_score: 0.5,
      detected_hallucinations: ['Oslo'],
      query_rating: { rating: 4, note: null, metadata: null },
      created_at: '2024-05-02 08:00:05.000',
    });
  });

  it('rag_usage and rag_query_ratings: counts of the queries the filter keeps', async () => {
    expect(await report({ type: 'rag_usage' })).toEqual({ total_queries: 6 });
    expect(await report({ type: 'rag_usage', filter: { rag_type: 'all_chunks' } })).toEqual({ total_queries: 4 });
    expect(await report({ type: 'rag_usage', filter: { query_rating: { lte: 0 } } })).toEqual({ total_queries: 1 });
    expect(await report({ type: 'rag_query_ratings' })).toEqual({ total_positive_ratings: 2, total_negative_ratings: 1 });
    expect(await report({ type: 'rag_query_ratings', filter: { rag_type: 'all_chunks' } })).toEqual({ total_positive_ratings: 1, total_negative_ratings: 1 });
  });

  it('rag_usage_graph: queries per bucket, empty buckets 0', async () => {
    expect(points(await report({ type: 'rag_usage_graph', granularity: 'day', filter: twoDays }))).toEqual([
      ['2024-05-01', 4],
      ['2024-05-02', 2],
    ]);
    const hours = await report({ type: 'rag_usage_graph', filter: { date_range: { gte: '2024-05-01 09:00', lt: '2024-05-01 13:00' } } });
    expect(hours.points).toEqual([
      { time_stamp: '2024-05-01 09:00:00.000', point: 2 },
      { time_stamp: '2024-05-01 10:00:00.000', point: 1 },
      { time_stamp: '2024-05-01 11:00:00.000', point: 1 },
      { time_stamp: '2024-05-01 12:00:00.000', point: 0 },
    ]);
  });

  it('ctr_metrics_over_time: clicks per query of each bucket, their mean over buckets with queries', async () => {
    // 1 May: 4 queries, 2 clicks; 2 May: 2 queries, none.
    expect(await report({ type: 'ctr_metrics_over_time', granularity: 'day', filter: twoDays })).toMatchObject({
      total_ctr: 0.25,
      points: [
        { time_stamp: '2024-05-01 00:00:00.000', point: 0.5 },
        { time_stamp: '2024-05-02 00:00:00.000', point: 0 },
      ],
    });
    // All 2 May's queries are chosen_chunks: that bucket has no query of all_chunks, and is left out of the mean.
    const allChunks = await report({ type: 'ctr_metrics_over_time', granularity: 'day', filter: { ...twoDays, rag_type: 'all_chunks' } });
    expect([allChunks.total_ctr, points(allChunks)]).toEqual([
      0.5,
      [
        ['2024-05-01', 0.5],
        ['2024-05-02', 0],
      ],
    ]);
  });

  it('messages_per_user and chat_average_rating: per bucket, and their mean', async () => {
    const perUser = await report({ type: 'messages_per_user', granularity: 'day', filter: twoDays });
    // 1 May: 4 queries of u1, u2, u3; 2 May: one of u2 and one without a user.
    expect(perUser.avg_messages_per_user).toBeCloseTo((4 / 3 + 1) / 2, 12);
    expect(points(perUser).map(([d, p]) => [d, Number((p as number).toFixed(6))])).toEqual([
      ['2024-05-01', 1.333333],
      ['2024-05-02', 1],
    ]);
    const rating = await report({ type: 'chat_average_rating', granularity: 'day', filter: twoDays });
    expect([rating.avg_chat_rating, points(rating)]).toEqual([
      2.25,
      [
        ['2024-05-01', 0.5],
        ['2024-05-02', 4],
      ],
    ]);
  });

  it('followup_queries: the follow-up questions chosen most, narrowed through the queries they are about', async () => {
    expect(await report({ type: 'followup_queries' })).toEqual({
      top_queries: [
        { query: 'Can I get store credit?', count: 2 },
        { query: 'What sizes?', count: 1 },
      ],
    });
    expect(await report({ type: 'followup_queries', filter: { rag_type: 'chosen_chunks' } })).toEqual({
      top_queries: [{ query: 'Can I get store credit?', count: 1 }],
    });
    expect(await report({ type: 'followup_queries', filter: { date_range: { gte: '2024-05-01 10:00' } } })).toEqual({
      top_queries: [
        { query: 'Can I get store credit?', count: 1 },
        { query: 'What sizes?', count: 1 },
      ],
    });
    expect((await report({ type: 'followup_queries', page: 2 })).top_queries).toEqual([]);
  });
});

describe('topics', () => {
  it('topic_queries: the topics with a name and RAG queries, summarised, in the order asked', async () => {
    const all = await report({ type: 'topic_queries' });
    expect(topicNames(all)).toEqual(['T3', 'T2', 'T1']);
    expect(all.topics[2]).toEqual({
      id: topic.T1,
      topic_id: topic.T1,
      name: 'Refunds',
      owner_id: 'o1',
      created_at: '2024-05-01 09:00:00.000',
      updated_at: '2024-05-01 09:00:00.000',
      message_count: 2,
      avg_top_score: expect.closeTo(0.8, 12),
      avg_hallucination_score: expect.closeTo(0.2, 12),
      avg_query_rating: 0.5,
      event_names: ['Click', 'site-checkout_end', 'site-followup_query'],
    });
    expect(all.topics[1]).toMatchObject({ message_count: 1, avg_top_score: 0.5, avg_query_rating: null, event_names: ['Click', 'View'] });
    expect(all.topics[0].event_names).toEqual(['site-add_to_cart', 'site-checkout_end', 'site-followup_query']);

    expect(topicNames(await report({ type: 'topic_queries', sort_by: 'top_score', sort_order: 'asc' }))).toEqual(['T3', 'T2', 'T1']);
    expect(topicNames(await report({ type: 'topic_queries', sort_by: 'hallucination_score' }))).toEqual(['T3', 'T1', 'T2']);
    expect((await report({ type: 'topic_queries', page: 2 })).topics).toEqual([]);
  });

  it('topic_queries: each filter, and the events filter', async () => {
    const names = async (body: Partial<Extract<RagAnalytics, { type: 'topic_queries' }>>) => topicNames(await report({ type: 'topic_queries', ...body }));
    expect(await names({ filter: { rag_type: 'chosen_chunks' } })).toEqual(['T3']);
    expect(await names({ filter: { query_rating: { gte: 1 } } })).toEqual(['T3']);
    expect(await names({ filter: { top_score: { gte: 0.5 } } })).toEqual(['T2', 'T1']);
    expect(await names({ filter: { hallucination_score: { gt: 0, lt: 0.5 } } })).toEqual(['T1']);
    expect(await names({ filter: { component_name: 'chat-widget' } })).toEqual(['T1']);
    expect(await names({ filter: { query: 'refund' } })).toEqual(['T3', 'T1']);
    expect(await names({ filter: { date_range: { gte: '2024-05-02' } } })).toEqual(['T3']);
    expect(await names({ topic_events_filter: { event_names: ['Click'], inverted: false } })).toEqual(['T2', 'T1']);
    expect(await names({ topic_events_filter: { event_names: ['Click'], inverted: true } })).toEqual(['T3']);
    expect(await names({ topic_events_filter: { event_names: ['site-checkout_end', 'View'], inverted: false } })).toEqual(['T3', 'T2', 'T1']);
  });

  it('topic_details and events_for_topic: one topic, its queries and the events about them, oldest first', async () => {
    const details = await report({ type: 'topic_details', topic_id: topic.T1 });
    expect(details.topic).toEqual({
      id: topic.T1,
      topic_id: topic.T1,
      dataset_id: main,
      name: 'Refunds',
      owner_id: 'o1',
      metadata: { component_props: { componentName: 'chat-widget' } },
      created_at: '2024-05-01 09:00:00.000',
      updated_at: '2024-05-01 09:00:00.000',
    });
    expect(details.messages.map((m: { id: string }) => m.id)).toEqual([query.q1, query.q2]);
    expect(eventNames(await report({ type: 'events_for_topic', topic_id: topic.T1 }))).toEqual(['e1', 'e5', 'e8']);
    const t3 = await report({ type: 'events_for_topic', topic_id: topic.T3 });
    expect(eventNames(t3)).toEqual(['e4', 'e6', 'e10']);
    expect(t3.events[2]).toMatchObject({ event_type: 'purchase', event_name: 'site-checkout_end', request_id: query.q4, request_type: 'rag', user_id: 'u2' });
    expect(await report({ type: 'events_for_topic', topic_id: topic.T5 })).toEqual({ events: [] });
  });

  it('topics_over_time and chat_conversion_rate: topics per bucket of their creation, and the share that converted', async () => {
    const topics = await report({ type: 'topics_over_time', granularity: 'day', filter: twoDays });
    expect([topics.total_topics, points(topics)]).toEqual([
      3,
      [
        ['2024-05-01', 2],
        ['2024-05-02', 1],
      ],
    ]);
    // T1 converted (e1, e8), T2 did not (its click is no conversion), T3 did (e4, e10).
    const rate = await report({ type: 'chat_conversion_rate', granularity: 'day', filter: twoDays });
    expect(rate.conversion_rate).toBeCloseTo(2 / 3, 12);
    expect(points(rate)).toEqual([
      ['2024-05-01', 0.5],
      ['2024-05-02', 1],
    ]);
    const shipping = await report({ type: 'chat_conversion_rate', granularity: 'month', filter: { ...twoDays, query: 'shipping' } });
    expect([shipping.conversion_rate, points(shipping)]).toEqual([0, [['2024-05-01', 0]]]);
  });

  it('popular_chats: topic names by how many topics have them', async () => {
    expect(await report({ type: 'popular_chats' })).toEqual({
      chats: [
        { name: 'Refunds', count: 2 },
        { name: 'Shipping', count: 1 },
      ],
    });
    expect(await report({ type: 'popular_chats', filter: { date_range: { gte: '2024-05-02' } } })).toEqual({ chats: [{ name: 'Refunds', count: 1 }] });
  });

  it('event_funnel: users per event, all users, and the owners who started the topics', async () => {
    expect((await report({ type: 'event_funnel', filter: twoDays })).event_names).toEqual([
      { event_name: 'all_users', event_count: 4 },
      { event_name: 'site-checkout_end', event_count: 3 },
      { event_name: 'site-followup_query', event_count: 3 },
      { event_name: 'Click', event_count: 2 },
      { event_name: 'conversation_started', event_count: 2 },
      { event_name: 'site-add_to_cart', event_count: 1 },
      { event_name: 'View', event_count: 1 },
    ]);
    expect((await report({ type: 'event_funnel', filter: { date_range: { gte: '2024-05-02' } } })).event_names).toEqual([
      { event_name: 'all_users', event_count: 2 },
      { event_name: 'site-checkout_end', event_count: 2 },
      { event_name: 'conversation_started', event_count: 1 },
      { event_name: 'site-add_to_cart', event_count: 1 },
      { event_name: 'site-followup_query', event_count: 1 },
    ]);
  });

  it('chat_revenue: purchases about RAG queries (direct) or about nothing, per bucket', async () => {
    const direct = await report({ type: 'chat_revenue', direct: true, granularity: 'day', filter: twoDays });
    expect([direct.revenue, points(direct)]).toEqual([
      50,
      [
        ['2024-05-01', 30],
        ['2024-05-02', 20],
      ],
    ]);
    const indirect = await report({ type: 'chat_revenue', granularity: 'day', filter: twoDays });
    expect([indirect.revenue, points(indirect)]).toEqual([
      12.5,
      [
        ['2024-05-01', 0],
        ['2024-05-02', 12.5],
      ],
    ]);
    const ofUser = await report({ type: 'chat_revenue', direct: true, granularity: 'month', filter: { ...twoDays, user_id: 'u2' } });
    expect([ofUser.revenue, points(ofUser)]).toEqual([20, [['2024-05-01', 20]]]);
  });
});

describe('bad input', () => {
  const ratings = () => db()('rag_queries').orderBy('id').select('id', 'query_rating', 'query_rating_note', 'query_rating_metadata');
  let before: unknown;
  beforeAll(async () => {
    before = await ratings();
  });
  afterAll(async () => {
    expect(await ratings()).toEqual(before);
  });

  const headers = () => ({ authorization: ADMIN_KEY, ...ds(main) });
  const post = (body: unknown) => service.request('POST', '/api/analytics/rag', { headers: headers(), body });
  const put = (body: unknown) => service.request('PUT', '/api/analytics/rag', { headers: headers(), body });

  it('an unknown type is named', async () => {
    const reply = await post({ type: 'rag_wishes' });
    expect(reply.status).toBe(400);
    expect(reply.body.message).toMatch(/'type' must be equal to one of the allowed values: rag_queries, .*popular_chats/);
  });

  it('a range that ends before it starts, bounds that leave nothing, too many buckets', async () => {
    let reply = await post({ type: 'rag_usage', filter: { date_range: { gte: '2024-05-02', lt: '2024-05-01' } } });
    expect([reply.status, reply.body.message]).toEqual([400, expect.stringMatching(/filter\.date_range: the range starts .* after it ends/)]);
    reply = await post({ type: 'topics_over_time', filter: { date_range: { gt: 'yesterday' } } });
    expect([reply.status, reply.body.message]).toEqual([400, 'filter.date_range.gt: yesterday is not a timestamp (YYYY-MM-DD HH:MM:SS.mmm)']);
    reply = await post({ type: 'topic_queries', filter: { top_score: { gte: 0.8, lte: 0.2 } } });
    expect([reply.status, reply.body.message]).toEqual([400, expect.stringMatching(/filter\.top_score/)]);
    reply = await post({ type: 'rag_usage_graph', granularity: 'second', filter: twoDays });
    expect([reply.status, reply.body.message]).toEqual([400, expect.stringMatching(/172800 buckets, more than 10000/)]);
    reply = await post({ type: 'chat_revenue', filter: { metadata_filter: 'no equals sign' } });
    expect([reply.status, reply.body.message]).toEqual([400, expect.stringMatching(/filter\.metadata_filter/)]);
  });

  it('fields the report does not take, or of the wrong shape', async () => {
    for (const body of [
      null,
      'rag_usage',
      { type: 'rag_query_details' },
      { type: 'topic_details', topic_id: 'not-a-uuid' },
      { type: 'rag_usage_graph', granularity: 'week' },
      { type: 'topic_queries', topic_events_filter: { event_names: ['Purchase'], inverted: false } },
      { type: 'popular_chats', page: -1 },
    ]) {
      const reply = await post(body);
      expect(reply.status, JSON.stringify(body)).toBe(400);
      expect(reply.body.message).toBeTruthy();
    }
  });

  it('a query or topic of another dataset is not found, as an unknown one', async () => {
    for (const id of [query.foreign, randomUUID()]) {
      const details = await post({ type: 'rag_query_details', request_id: id });
      expect([details.status, details.body.message]).toEqual([404, `RAG query ${id} not found`]);
      const rated = await put({ query_id: id, rating: 3 });
      expect([rated.status, rated.body.message]).toEqual([404, `RAG query ${id} not found`]);
    }
    for (const id of [topic.foreign, randomUUID()]) {
      for (const type of ['topic_details', 'events_for_topic']) {
        const reply = await post({ type, topic_id: id });
        expect([reply.status, reply.body.message]).toEqual([404, `topic ${id} not found`]);
      }
    }
  });

  it('a rating out of range', async () => {
    for (const [rating, message] of [
      [-1, 'request/body/rating must be >= 0'],
      [11, 'request/body/rating must be <= 10'],
    ] as const) {
      const reply = await put({ query_id: query.q3, rating });
      expect([reply.status, reply.body.message]).toEqual([400, message]);
    }
  });
});

describe('rating a RAG query', () => {
  it('sets and replaces the rating, which the reports then see', async () => {
    const rate = (body: { query_id: string; rating: number; note?: string; metadata?: unknown }) =>
      setRagQueryRating({ client: service.client(), headers: ds(main), body, throwOnError: true });
    expect((await rate({ query_id: query.q3, rating: 2, note: 'slow' })).response.status).toBe(204);
    expect((await rate({ query_id: query.q3, rating: 3, note: 'fine after all', metadata: { by: 'lead' } })).response.status).toBe(204);
    expect((await report({ type: 'rag_query_details', request_id: query.q3 })).query_rating).toEqual({
      rating: 3,
      note: 'fine after all',
      metadata: { by: 'lead' },
    });
    expect(await report({ type: 'rag_query_ratings' })).toEqual({ total_positive_ratings: 3, total_negative_ratings: 1 });
    expect(queryNames(await report({ type: 'rag_queries', filter: { query_rating: { gte: 3 } } }))).toEqual(['q4', 'q3']);
    const shipping = (await report({ type: 'topic_queries', filter: { query: 'shipping' } })).topics[0];
    expect(shipping.avg_query_rating).toBe(3);
    // 1 May's ratings are now 1, 0 and 3.
    expect(points(await report({ type: 'chat_average_rating', granularity: 'day', filter: twoDays }))).toEqual([
      ['2024-05-01', 4 / 3],
      ['2024-05-02', 4],
    ]);
  });
});
