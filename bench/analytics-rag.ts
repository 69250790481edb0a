// The RAG part of the analytics suite: every RAG analytics report (POST /api/analytics/rag) over one
// dataset holding many RAG queries (100,000 by default), written straight into the tables as a
// bench loader may (one INSERT … SELECT per table), spread over the 90 days before the run: the
// topics they belong to (five queries each, names from a head-heavy list), ratings of 10 %, and
// users' events about them (clicks on 10 %, carts after 3 %, purchases after 2 % and as many after
// none, follow-up questions chosen after 5 %). Each report is asked for `repeats` times through
// HTTP, one request at a time, in two scenarios:
//   week  the last 7 days (graphs by the hour);
//   all   no filter (graphs by the day).
// Reported: p50 / p99 per report and scenario, the tables' sizes. The answers are checked: the
// queries and topics counted must be those written. Target (issue 15): p50 ≤ 100 ms, p99 ≤ 300 ms
// in full mode.
import { createClient } from '../sdk/src/generated/client/index.js';
import { createDataset, createOrganization } from '../sdk/src/generated/sdk.gen.js';
import type { RagAnalytics } from '../sdk/src/generated/types.gen.js';
import { loadConfig } from '../server/config.js';
import { startService } from '../server/main.js';
import { ADMIN_KEY, type ModeEnvironment } from './modes.js';
import { type Scenario, type Timing, timeReport } from './analytics-timing.js';
import { fmt, stopwatch, table } from './report.js';

export interface RagAnalyticsOptions {
  records: number;
  repeats: number;
  seed: number;
}

export const DEFAULT_RAG_RECORDS = 100_000;

const DAYS = 90;
/** RAG queries per topic. */
const PER_TOPIC = 5;

export interface RagAnalyticsResult {
  mode: string;
  records: number;
  topics: number;
  events: number;
  days: number;
  repeats: number;
  load: { wall_s: number; analyze_s: number };
  sizes_mib: Record<string, number>;
  reports: Record<string, Record<Scenario, Timing>>;
  target: { p50_ms: number; p99_ms: number };
}

/** The topics and their RAG queries, made in order over DAYS days; returns how many topics. */
async function loadQueries(db: import('knex').Knex, datasetId: string, records: number, end: Date): Promise<number> {
  const topics = Math.ceil(records / PER_TOPIC);
  const since = `'${end.toISOString()}'::timestamptz - interval '${DAYS} days'`;
  // Topic k: named from a head-heavy list of 500 names, owned by one of 5,000 owners, 30 % from the chat widget.
  await db.raw(
    `insert into topics (id, dataset_id, owner_id, name, metadata, created_at, updated_at)
     select md5('topic ' || k)::uuid, ?, 'owner ' || floor(random() * 5000)::int, 'Conversation ' || floor(500 * power(random(), 3))::int,
       case when random() < 0.3 then '{"component_props": {"componentName": "chat-widget"}}'::jsonb end,
       ${since} + (k::float8 / ${topics}) * interval '${DAYS} days', ${since} + (k::float8 / ${topics}) * interval '${DAYS} days'
     from generate_series(0, ${topics - 1}) k`,
    [datasetId],
  );
  // Query i: of topic floor(i / 5), a minute after the one before it; users from 10,000 (a tenth anonymous).
  await db.raw(
    `insert into rag_queries (id, dataset_id, search_id, topic_id, user_id, rag_type, user_message, llm_response, results, top_score,
       hallucination_score, detected_hallucinations, metadata, query_rating, created_at)
     select gen_random_uuid(), ?, gen_random_uuid(), md5('topic ' || (i / ${PER_TOPIC}))::uuid,
       case when random() < 0.1 then '' else 'user ' || floor(random() * 10000)::int end,
       case when random() < 0.7 then 'all_chunks' else 'chosen_chunks' end,
       'question ' || floor(20000 * power(random(), 3))::int, 'An answer of a few words.', '[]'::jsonb, random(), random() * 0.5,
       '{}', case when random() < 0.3 then '{"component_props": {"componentName": "chat-widget"}}'::jsonb end,
       case when random() < 0.1 then floor(random() * 6)::int end,
       ${since} + ((i / ${PER_TOPIC})::float8 / ${topics}) * interval '${DAYS} days' + (i % ${PER_TOPIC}) * interval '1 minute'
     from generate_series(0, ${records - 1}) i`,
    [datasetId],
  );
  return topics;
}

/** Users' events about the RAG queries, and purchases after none; returns how many. */
async function loadEvents(db: import('knex').Knex, datasetId: string, records: number, end: Date): Promise<number> {
  await db.raw(
    `insert into analytics_events (id, dataset_id, event_type, event_name, request_id, request_type, items, position, revenue, metadata, user_id,
       is_conversion, created_at, updated_at)
     select gen_random_uuid(), dataset_id, kind, name, id, 'rag', '{}', case when kind = 'click' then floor(random() * 10)::int end,
       case when kind = 'purchase' then round((random() * 100)::numeric, 2)::float8 end,
       case when name = 'site-followup_query' then jsonb_build_object('followup_query', 'follow-up ' || floor(200 * power(random(), 2))::int) end,
       nullif(user_id, ''), kind <> 'view', created_at + interval '20 seconds', created_at + interval '20 seconds'
     from (select *, case when r < 0.10 then 'click' when r < 0.13 then 'add_to_cart' when r < 0.15 then 'purchase' when r < 0.20 then 'view' end as kind,
             case when r < 0.10 then 'Click' when r < 0.13 then 'site-add_to_cart' when r < 0.15 then 'site-checkout_end' else 'site-followup_query' end as name
           from (select id, dataset_id, user_id, created_at, random() as r from rag_queries where dataset_id = ?) q) t
     where kind is not null`,
    [datasetId],
  );
  await db.raw(
    `insert into analytics_events (id, dataset_id, event_type, event_name, items, revenue, user_id, is_conversion, created_at, updated_at)
     select gen_random_uuid(), ?, 'purchase', 'site-checkout_end', '{}', round((random() * 100)::numeric, 2)::float8, 'user ' || floor(random() * 10000)::int,
       true, t, t
     from (select ?::timestamptz - interval '${DAYS} days' + random() * interval '${DAYS} days' as t from generate_series(1, ?)) s`,
    [datasetId, end.toISOString(), Math.round(records / 50)],
  );
  const [row] = await db('analytics_events').where({ dataset_id: datasetId }).count({ n: '*' });
  return Number(row.n);
}

/** The requests of each report, per scenario. */
function requests(week: string, queryIds: string[], topicIds: string[]): Record<string, (scenario: Scenario, n: number) => RagAnalytics> {
  const filter = (s: Scenario) => (s === 'week' ? { filter: { date_range: { gte: week } } } : {});
  const graph = (type: string) => (s: Scenario) => ({ type, granularity: s === 'week' ? 'hour' : 'day', ...filter(s) }) as RagAnalytics;
  const plain =
    (type: string, extra: Record<string, unknown> = {}) =>
    (s: Scenario) =>
      ({ type, ...filter(s), ...extra }) as RagAnalytics;
  return {
    rag_queries: plain('rag_queries'),
    rag_usage: plain('rag_usage'),
    rag_usage_graph: graph('rag_usage_graph'),
    rag_query_details: (_s, n) => ({ type: 'rag_query_details', request_id: queryIds[n % queryIds.length] }),
    rag_query_ratings: plain('rag_query_ratings'),
    followup_queries: plain('followup_queries'),
    topic_queries: plain('topic_queries'),
    'topic_queries by top_score': plain('topic_queries', { sort_by: 'top_score' }),
    topic_details: (_s, n) => ({ type: 'topic_details', topic_id: topicIds[n % topicIds.length] }),
    topics_over_time: graph('topics_over_time'),
    ctr_metrics_over_time: graph('ctr_metrics_over_time'),
    messages_per_user: graph('messages_per_user'),
    chat_average_rating: graph('chat_average_rating'),
    chat_conversion_rate: graph('chat_conversion_rate'),
    event_funnel: plain('event_funnel'),
    events_for_topic: (_s, n) => ({ type: 'events_for_topic', topic_id: topicIds[n % topicIds.length] }),
    chat_revenue: (s) => ({ type: 'chat_revenue', direct: true, granularity: s === 'week' ? 'hour' : 'day', ...filter(s) }),
    popular_chats: plain('popular_chats'),
  };
}

export async function runRagAnalytics(modeEnv: ModeEnvironment, options: RagAnalyticsOptions, log: (line: string) => void): Promise<RagAnalyticsResult> {
  const service = await startService(loadConfig(await modeEnv.freshEnv()));
  const db = service.services.store.db;
  try {
    const admin = createClient({ baseUrl: service.url, auth: () => ADMIN_KEY });
    const org = (await createOrganization({ client: admin, body: { name: 'rag analytics bench' }, throwOnError: true })).data;
    const dataset = (
      await createDataset({ client: admin, headers: { 'SVC-Organization': org.id }, body: { dataset_name: 'rag analytics' }, throwOnError: true })
    ).data;

    const end = new Date();
    const clock = stopwatch();
    // One session, seeded: the same seed writes the same records.
    const { topics, events } = await db.transaction(async (trx) => {
      await trx.raw('select setseed(?)', [((options.seed % 997) + 3) / 999]);
      const topics = await loadQueries(trx, dataset.id, options.records, end);
      return { topics, events: await loadEvents(trx, dataset.id, options.records, end) };
    });
    const loadS = clock().wallMs / 1000;
    log(`${fmt(options.records)} RAG queries, ${fmt(topics)} topics and ${fmt(events)} events in ${fmt(loadS, 1)} s`);
    // Statistics for the planner and (PostgreSQL) the visibility map, as autovacuum would leave them.
    const analyzed = stopwatch();
    const tables = ['rag_queries', 'topics', 'analytics_events'];
    await db.raw(`${service.services.store.kind === 'postgres' ? 'vacuum analyze' : 'analyze'} ${tables.join(', ')}`);
    const analyzeS = analyzed().wallMs / 1000;
    const sizes: Record<string, number> = {};
    for (const t of tables) {
      const [row] = (await db.raw('select pg_total_relation_size(?::regclass) as bytes', [t])).rows;
      sizes[t] = Math.round((Number(row.bytes) / 2 ** 20) * 10) / 10;
    }

    const queryIds = (await db('rag_queries').where({ dataset_id: dataset.id }).orderByRaw('random()').limit(200).pluck('id')) as string[];
    const topicIds = (await db('topics').where({ dataset_id: dataset.id }).orderByRaw('random()').limit(200).pluck('id')) as string[];
    const week = new Date(end.getTime() - 7 * 86_400_000).toISOString().replace('T', ' ').slice(0, 23);
    const url = `${service.url}/api/analytics/rag`;
    const headers = { authorization: ADMIN_KEY, 'SVC-Dataset': dataset.id, 'content-type': 'application/json' };
    const ask = async (body: RagAnalytics) => {
      const t0 = performance.now();
      const response = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body) });
      const text = await response.text();
      const ms = performance.now() - t0;
      if (response.status !== 200) throw new Error(`${body.type}: ${response.status} ${text}`);
      return { ms, answer: JSON.parse(text) };
    };

    // The answers must count every query and topic written (all) and about 7 / 90 of them (week).
    const usage = (await ask({ type: 'rag_usage' })).answer.total_queries;
    const topicCount = (await ask({ type: 'topics_over_time', granularity: 'month' })).answer.total_topics;
    if (usage !== options.records || topicCount !== topics)
      throw new Error(`the reports count ${usage} queries and ${topicCount} topics, not ${options.records} and ${topics}`);
    const weekly = (await ask({ type: 'rag_usage', filter: { date_range: { gte: week } } })).answer.total_queries;
    if (Math.abs(weekly / options.records - 7 / DAYS) > 0.01) throw new Error(`the last 7 days hold ${weekly} of ${options.records} RAG queries`);

    const reports: RagAnalyticsResult['reports'] = {};
    for (const [type, request] of Object.entries(requests(week, queryIds, topicIds))) {
      reports[type] = await timeReport((scenario, n) => ask(request(scenario, n)), options.repeats);
      log(`${type}: week p50 ${fmt(reports[type].week.p50_ms, 1)} ms, all p50 ${fmt(reports[type].all.p50_ms, 1)} ms`);
    }
    return {
      mode: modeEnv.mode,
      records: options.records,
      topics,
      events,
      days: DAYS,
      repeats: options.repeats,
      load: { wall_s: loadS, analyze_s: analyzeS },
      sizes_mib: sizes,
      reports,
      target: { p50_ms: 100, p99_ms: 300 },
    };
  } finally {
    await service.stop();
  }
}

export function formatRagAnalytics(mode: string, r: RagAnalyticsResult): string {
  const ms = (t: Timing) => [fmt(t.p50_ms, 1), fmt(t.p99_ms, 1)];
  const rows: (string | number)[][] = [['report', 'week p50 ms', 'week p99 ms', 'all p50 ms', 'all p99 ms']];
  for (const [type, t] of Object.entries(r.reports)) rows.push([type, ...ms(t.week), ...ms(t.all)]);
  return [
    `RAG analytics (${mode}): ${fmt(r.records)} RAG queries in ${fmt(r.topics)} topics, ${fmt(r.events)} events, over ${r.days} days in one dataset, ${r.repeats} requests per report and scenario`,
    `loaded in ${fmt(r.load.wall_s, 1)} s, then ${fmt(r.load.analyze_s, 1)} s of analyze; sizes MiB: ${Object.entries(r.sizes_mib)
      .map(([t, s]) => `${t} ${fmt(s, 1)}`)
      .join(', ')}`,
    'week: the last 7 days (graphs by the hour); all: every query (graphs by the day)',
    table(rows),
  ].join('\n');
}
