// The recommendations part of the analytics suite: every recommendation analytics report (POST
// /api/analytics/recommendations) and the organization's top datasets (POST /api/analytics/top)
// over one dataset holding many recorded recommendations (100,000 by default), written straight into
// recommendation_queries (multi-row INSERT … SELECT, as a bench loader may), spread over the 90 days
// before the run, with users' events about them: clicks on 15 % (a conversion), views of 5 %, add to
// carts after 2 %. Each report is asked for `repeats` times through HTTP, one request at a time, in
// the suite's two scenarios (week: the last 7 days, graphs by the hour; all: no filter, graphs by the
// day). The answers are checked: the recommendations counted must be those written, the
// click-through rate about the one written.
import type { Knex } from 'knex';
import type { GetTopDatasetsRequestBody, RecommendationAnalytics } from '../sdk/src/generated/types.gen.js';
import { ADMIN_KEY } from './modes.js';
import { type Scenario, type Timing, timeReport } from './analytics-timing.js';
import { fmt, stopwatch, table } from './report.js';

export const DEFAULT_RECOMMENDATIONS = 100_000;

const DAYS = 90;
const LOAD_BATCH = 20_000;

export interface RecommendationsResult {
  recommendations: number;
  load_s: number;
  reports: Record<string, Record<Scenario, Timing>>;
}

/** The service the suite started, and the organization and dataset it made. */
export interface BenchTarget {
  url: string;
  db: Knex;
  /** Whether the store is PostgreSQL (vacuum analyze) rather than PGlite (analyze). */
  postgres: boolean;
  organizationId: string;
  datasetId: string;
}

/**
 * The recommendations: chunk and group recommendations (3 to 1), top scores uniform, users from
 * 20,000 (a fifth anonymous), one in ten from a component (of 20) on the page.
 */
function loadStatement(datasetId: string, first: number, count: number, total: number, end: Date): string {
  return `
    insert into recommendation_queries (id, dataset_id, recommendation_type, positive_ids, negative_ids, positive_tracking_ids,
      negative_tracking_ids, request_params, results, top_score, latency_ms, user_id, metadata, created_at)
    select gen_random_uuid(), '${datasetId}', case when random() < 0.75 then 'Chunk' else 'Group' end,
      array[md5((i % 5000)::text)::uuid], '{}', '{}', '{}',
      jsonb_build_object('positive_chunk_ids', jsonb_build_array(md5((i % 5000)::text)::uuid), 'limit', 10)
        || case when c is null then '{}'::jsonb else jsonb_build_object('metadata', jsonb_build_object('component_props', jsonb_build_object('componentName', c))) end,
      jsonb_build_array(jsonb_build_object('chunk_id', md5(((i + 1) % 5000)::text)::uuid, 'score', s)), s, 3 + random() * 20,
      case when random() < 0.2 then null else 'user ' || floor(random() * 20000)::int end, null,
      '${end.toISOString()}'::timestamptz - interval '${DAYS} days' + (i::float8 / ${total}) * interval '${DAYS} days'
    from (
      select i, random() as s, case when random() < 0.1 then 'component ' || floor(random() * 20)::int end as c
      from generate_series(${first}, ${first + count - 1}) as i
    ) as r`;
}

function requests(week: string, someIds: string[]): Record<string, (scenario: Scenario, n: number) => RecommendationAnalytics> {
  const filter = (s: Scenario) => (s === 'week' ? { filter: { date_range: { gte: week } } } : {});
  const graph = (type: string) => (s: Scenario) => ({ type, granularity: s === 'week' ? 'hour' : 'day', ...filter(s) }) as RecommendationAnalytics;
  const plain =
    (type: string, extra: Record<string, unknown> = {}) =>
    (s: Scenario) =>
      ({ type, ...filter(s), ...extra }) as RecommendationAnalytics;
  return {
    recommendation_usage_graph: graph('recommendation_usage_graph'),
    recommendations_per_user: graph('recommendations_per_user'),
    recommendations_ctr_rate: graph('recommendations_ctr_rate'),
    recommendation_conversion_rate: graph('recommendation_conversion_rate'),
    low_confidence_recommendations: plain('low_confidence_recommendations', { threshold: 0.5 }),
    recommendation_queries: plain('recommendation_queries'),
    'recommendation_queries (top_score, clicked)': plain('recommendation_queries', { sort_by: 'top_score', has_clicks: true }),
    'recommendation_queries (component)': (s) => ({ type: 'recommendation_queries', filter: { ...filter(s).filter, component_name: 'component 7' } }),
    event_funnel: plain('event_funnel'),
    query_details: (_s, n) => ({ type: 'query_details', request_id: someIds[n % someIds.length] }),
  };
}

export async function runRecommendationAnalytics(
  target: BenchTarget,
  options: { recommendations: number; repeats: number; seed: number },
  log: (line: string) => void,
): Promise<RecommendationsResult> {
  const { db, datasetId } = target;
  const end = new Date();
  const clock = stopwatch();
  for (let first = 0; first < options.recommendations; first += LOAD_BATCH) {
    await db.transaction(async (trx) => {
      await trx.raw('select setseed(?)', [(((options.seed + 7 + first / LOAD_BATCH) % 997) + 1) / 999]);
      await trx.raw(loadStatement(datasetId, first, Math.min(LOAD_BATCH, options.recommendations - first), options.recommendations, end));
    });
  }
  await db.transaction(async (trx) => {
    await trx.raw('select setseed(?)', [((options.seed % 997) + 3) / 999]);
    await trx.raw(
      `insert into analytics_events (id, dataset_id, event_type, event_name, request_id, request_type, items, clicked_chunk_id, position, user_id, is_conversion, created_at)
       select gen_random_uuid(), dataset_id, kind, kind, id, 'recommendation', '{}', case when kind = 'click' then positive_ids[1] end,
         case when kind = 'click' then floor(random() * 10)::int end, user_id, kind <> 'view', created_at + interval '15 seconds'
       from (select *, case when r < 0.15 then 'click' when r < 0.20 then 'view' when r < 0.22 then 'add_to_cart' end as kind
             from (select id, dataset_id, positive_ids, user_id, created_at, random() as r from recommendation_queries where dataset_id = ?) s) t
       where kind is not null`,
      [datasetId],
    );
  });
  await db.raw(`${target.postgres ? 'vacuum analyze' : 'analyze'} recommendation_queries, analytics_events`);
  const loadS = clock().wallMs / 1000;
  log(`${fmt(options.recommendations)} recommendations and their events in ${fmt(loadS, 1)} s`);

  const headers = { authorization: ADMIN_KEY, 'content-type': 'application/json' };
  const ask = async (path: string, scoping: Record<string, string>, body: unknown) => {
    const t0 = performance.now();
    const response = await fetch(target.url + path, { method: 'POST', headers: { ...headers, ...scoping }, body: JSON.stringify(body) });
    const text = await response.text();
    const ms = performance.now() - t0;
    if (response.status !== 200) throw new Error(`${path} ${JSON.stringify(body)}: ${response.status} ${text}`);
    return { ms, answer: JSON.parse(text) };
  };
  const dataset = { 'SVC-Dataset': datasetId };
  const organization = { 'SVC-Organization': target.organizationId };
  const report = (body: RecommendationAnalytics) => ask('/api/analytics/recommendations', dataset, body);
  const top = (body: GetTopDatasetsRequestBody) => ask('/api/analytics/top', organization, body);

  // Every recommendation written is counted; the click-through rate is about the 15 % written.
  const usage = (await report({ type: 'recommendation_usage_graph', granularity: 'month' })).answer;
  const topCount = (await top({ type: 'recommendation' })).answer[0]?.total_queries;
  if (usage.total_requests !== options.recommendations || topCount !== options.recommendations) {
    throw new Error(`the reports count ${usage.total_requests} and ${topCount} recommendations, not ${options.recommendations}`);
  }
  const ctr = (await report({ type: 'recommendations_ctr_rate', granularity: 'month' })).answer.total_ctr;
  if (Math.abs(ctr - 0.15) > 0.01) throw new Error(`the click-through rate is ${ctr}, not about 0.15`);

  const someIds = (await db('recommendation_queries').where({ dataset_id: datasetId }).orderByRaw('random()').limit(200).pluck('id')) as string[];
  const week = new Date(end.getTime() - 7 * 86_400_000).toISOString().replace('T', ' ').slice(0, 23);
  const calls: Record<string, (s: Scenario, n: number) => Promise<{ ms: number }>> = {};
  for (const [name, request] of Object.entries(requests(week, someIds))) calls[name] = (s, n) => report(request(s, n));
  for (const type of ['recommendation', 'search'] as const) {
    calls[`top datasets (${type})`] = (s) => top({ type, ...(s === 'week' && { date_range: { gte: week } }) });
  }

  const reports: RecommendationsResult['reports'] = {};
  for (const [name, call] of Object.entries(calls)) {
    reports[name] = await timeReport(call, options.repeats);
    log(`${name}: week p50 ${fmt(reports[name].week.p50_ms, 1)} ms, all p50 ${fmt(reports[name].all.p50_ms, 1)} ms`);
  }
  return { recommendations: options.recommendations, load_s: loadS, reports };
}

export function formatRecommendations(r: RecommendationsResult): string {
  const ms = (t: Timing) => [fmt(t.p50_ms, 1), fmt(t.p99_ms, 1)];
  const rows: (string | number)[][] = [['report', 'week p50 ms', 'week p99 ms', 'all p50 ms', 'all p99 ms']];
  for (const [name, t] of Object.entries(r.reports)) rows.push([name, ...ms(t.week), ...ms(t.all)]);
  return [`recommendations: ${fmt(r.recommendations)} over ${DAYS} days in one dataset (loaded in ${fmt(r.load_s, 1)} s)`, table(rows)].join('\n');
}
