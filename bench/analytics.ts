// The analytics suite: every search analytics report (POST /api/analytics/search) over one dataset
// holding many recorded searches (1,000,000 by default), written straight into search_queries as
// the service's deferred writer would write them (multi-row inserts, so the roll-up triggers run as
// they do for the service), spread over the 90 days before the run. Each report is then asked for
// `repeats` times through HTTP, one request at a time, in two scenarios:
//   week  the reference dashboard's default filter, the last 7 days (graphs by the hour);
//   all   no filter: every search (graphs by the day).
// Users' events about them are written too (clicks on 12 % of the searches, views of 5 %, purchases
// after 1 % and as many after none). Reported: p50 / p99 per report and scenario, the load's rate,
// the tables' sizes, and what recording a search costs the database over the loaded tables (the
// deferred writer's statements: batches of 500 rows, and single rows as a quiet service writes
// them). The answers are checked: the searches counted must be the searches written, the
// click-through rate the one written. The recommendations part (analytics-recommendations.ts)
// follows in the same dataset.
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { createClient } from '../sdk/src/generated/client/index.js';
import { createDataset, createOrganization } from '../sdk/src/generated/sdk.gen.js';
import type { SearchAnalytics } from '../sdk/src/generated/types.gen.js';
import { loadConfig } from '../server/config.js';
import { startService } from '../server/main.js';
import { type ClusterBenchResult, DEFAULT_CLUSTER_SEARCHES, formatClusterBench, runClusterBench } from './analytics-clusters.js';
import { DEFAULT_RECOMMENDATIONS, formatRecommendations, type RecommendationsResult, runRecommendationAnalytics } from './analytics-recommendations.js';
import { ADMIN_KEY, type ModeEnvironment } from './modes.js';
import { type Scenario, type Timing, timeReport } from './analytics-timing.js';
import { fmt, percentile, stopwatch, table } from './report.js';

export interface AnalyticsOptions {
  searches: number;
  /** Searches of the dataset clustered (analytics-clusters.ts); 0: none. */
  clusterSearches?: number;
  repeats: number;
  seed: number;
}

export const DEFAULT_SEARCHES = 1_000_000;
export const DEFAULT_REPEATS = 50;

const DAYS = 90;
/** Rows per insert statement of the load. */
const LOAD_BATCH = 20_000;
/** Distinct chunks the searches found (they exist, so list reports read them). */
const CHUNKS = 5_000;
/** Statements timed for the write cost: of a full deferred batch, and of one row. */
const WRITE_BATCH = 500;
const WRITE_BATCHES = 20;
const WRITE_SINGLES = 200;

export interface AnalyticsResult {
  mode: string;
  searches: number;
  days: number;
  repeats: number;
  load: { wall_s: number; searches_per_s: number; analyze_s: number };
  sizes_mib: Record<string, number>;
  reports: Record<string, Record<Scenario, Timing>>;
  clusters: ClusterBenchResult | null;
  recommendations: RecommendationsResult;
  /** Database time of recording searches, per search (µs), at p50 of the statements timed. */
  write_cost: { batch_us_per_search: number; single_us_per_search: number };
  target: { p50_ms: number; p99_ms: number };
}

/**
 * The searches, made in order over DAYS days: kinds and methods in fixed shares, queries from a
 * head-heavy list of 20,000, users from 30,000 (a fifth anonymous), latencies log-uniform from
 * 5 ms to 270 ms, 4 % finding nothing, 15 % filtered by tag (a few also by range), 1 % rated.
 */
function loadStatement(datasetId: string, first: number, count: number, total: number, end: Date): string {
  return `
    insert into search_queries (id, dataset_id, search_type, query, request_params, latency_ms, top_score, results, user_id, created_at, query_rating)
    select gen_random_uuid(), '${datasetId}',
      case when k < 0.75 then m when k < 0.85 then 'autocomplete_' || m when k < 0.93 then 'search_over_groups_' || m
           when k < 0.97 then 'search_within_groups_' || m else 'rag_chunks' end,
      'query ' || floor(20000 * power(random(), 3))::int,
      jsonb_build_object('search_type', m, 'page_size', 10)
        || case when u is null then '{}'::jsonb else jsonb_build_object('user_id', u) end
        || case when f < 0.12 then jsonb_build_object('filters', jsonb_build_object('must', jsonb_build_array(jsonb_build_object('field', 'tag_set', 'match_any', jsonb_build_array('tag ' || floor(30 * power(random(), 2))::int)))))
                when f < 0.15 then jsonb_build_object('filters', jsonb_build_object('must', jsonb_build_array(jsonb_build_object('field', 'num_value', 'range', jsonb_build_object('gte', floor(random() * 10)::int)))))
                else '{}'::jsonb end,
      5 * exp(4 * random()),
      case when empty then 0 else random() end,
      case when empty then '{}'::uuid[] else array(select md5((floor(random() * ${CHUNKS}) + i * 0)::int::text)::uuid from generate_series(1, 10)) end,
      u,
      '${end.toISOString()}'::timestamptz - interval '${DAYS} days' + (i::float8 / ${total}) * interval '${DAYS} days',
      case when random() < 0.01 then floor(random() * 6)::int end
    from (
      select i, random() as k, random() as f, random() < 0.04 as empty,
        (array['hybrid', 'hybrid', 'semantic', 'fulltext'])[1 + floor(random() * 4)::int] as m,
        case when random() < 0.2 then null else 'user ' || floor(random() * 30000)::int end as u
      from generate_series(${first}, ${first + count - 1}) as i
    ) as s`;
}

/** The requests of each report, per scenario. */
function requests(week: string, someIds: string[]): Record<string, (scenario: Scenario, n: number) => SearchAnalytics> {
  const filter = (s: Scenario) => (s === 'week' ? { filter: { date_range: { gte: week } } } : {});
  const graph = (type: string) => (s: Scenario) => ({ type, granularity: s === 'week' ? 'hour' : 'day', ...filter(s) }) as SearchAnalytics;
  const plain =
    (type: string, extra: Record<string, unknown> = {}) =>
    (s: Scenario) =>
      ({ type, ...filter(s), ...extra }) as SearchAnalytics;
  return {
    latency_graph: graph('latency_graph'),
    search_usage_graph: graph('search_usage_graph'),
    searches_per_user: graph('searches_per_user'),
    search_average_rating: graph('search_average_rating'),
    ctr_metrics_over_time: graph('ctr_metrics_over_time'),
    search_conversion_rate: graph('search_conversion_rate'),
    search_revenue: graph('search_revenue'),
    search_metrics: plain('search_metrics'),
    count_queries: plain('count_queries'),
    popular_filters: plain('popular_filters'),
    event_funnel: plain('event_funnel'),
    head_queries: plain('head_queries'),
    low_confidence_queries: plain('low_confidence_queries'),
    no_result_queries: plain('no_result_queries'),
    search_queries: plain('search_queries'),
    query_details: (_s, n) => ({ type: 'query_details', request_id: someIds[n % someIds.length] }),
  };
}

export async function runAnalytics(modeEnv: ModeEnvironment, options: AnalyticsOptions, log: (line: string) => void): Promise<AnalyticsResult> {
  const service = await startService(loadConfig(await modeEnv.freshEnv()));
  const db = service.services.store.db;
  try {
    const admin = createClient({ baseUrl: service.url, auth: () => ADMIN_KEY });
    const org = (await createOrganization({ client: admin, body: { name: 'analytics bench' }, throwOnError: true })).data;
    const dataset = (await createDataset({ client: admin, headers: { 'SVC-Organization': org.id }, body: { dataset_name: 'analytics' }, throwOnError: true }))
      .data;

    // The chunks the searches found, and the searches.
    await db.raw(
      `insert into chunks (id, dataset_id, chunk_html, tracking_id)
       select md5(k::text)::uuid, ?, '<p>Chunk ' || k || '</p>', 'chunk-' || k from generate_series(0, ${CHUNKS - 1}) k`,
      [dataset.id],
    );
    const end = new Date();
    const clock = stopwatch();
    for (let first = 0; first < options.searches; first += LOAD_BATCH) {
      // Each batch seeded, in a transaction of its own (one session): the same seed writes the same searches.
      await db.transaction(async (trx) => {
        await trx.raw('select setseed(?)', [(((options.seed + first / LOAD_BATCH) % 997) + 1) / 999]);
        await trx.raw(loadStatement(dataset.id, first, Math.min(LOAD_BATCH, options.searches - first), options.searches, end));
      });
      if ((first / LOAD_BATCH) % 10 === 9) log(`${fmt(first + LOAD_BATCH)} searches written`);
    }
    // What users did: clicks on 12 % of the searches, views of 5 %, purchases after 1 % and as many
    // after no search.
    await db.transaction(async (trx) => {
      await trx.raw('select setseed(?)', [((options.seed % 997) + 2) / 999]);
      await trx.raw(
        `insert into analytics_events (id, dataset_id, event_type, event_name, request_id, request_type, items, position, revenue, user_id, is_conversion, created_at)
         select gen_random_uuid(), dataset_id, kind, name, id, 'search', '{}', case when kind = 'click' then floor(random() * 10)::int end,
           case when kind = 'purchase' then round((random() * 100)::numeric, 2)::float8 end, user_id, kind <> 'view', created_at + interval '20 seconds'
         from (select *, case when r < 0.12 then 'click' when r < 0.17 then 'view' when r < 0.18 then 'purchase' end as kind,
                 case when r < 0.12 then 'click' when r < 0.17 then 'product_view' else 'purchase_done' end as name
               from (select id, dataset_id, user_id, created_at, random() as r from search_queries where dataset_id = ?) s) t
         where kind is not null`,
        [dataset.id],
      );
      await trx.raw(
        `insert into analytics_events (id, dataset_id, event_type, event_name, items, revenue, user_id, is_conversion, created_at)
         select gen_random_uuid(), ?, 'purchase', 'purchase_done', '{}', round((random() * 100)::numeric, 2)::float8, 'user ' || floor(random() * 30000)::int, true,
           ?::timestamptz - interval '${DAYS} days' + random() * interval '${DAYS} days'
         from generate_series(1, ?)`,
        [dataset.id, end.toISOString(), Math.round(options.searches / 100)],
      );
    });
    const loadS = clock().wallMs / 1000;
    log(`${fmt(options.searches)} searches in ${fmt(loadS, 1)} s (${fmt(options.searches / loadS)}/s)`);
    // Statistics for the planner and (PostgreSQL) the visibility map, as autovacuum would leave them.
    const analyzed = stopwatch();
    const tables = ['search_queries', 'search_rollup_hours', 'search_rollup_days', 'analytics_events', 'chunks'];
    await db.raw(`${service.services.store.kind === 'postgres' ? 'vacuum analyze' : 'analyze'} ${tables.join(', ')}`);
    const analyzeS = analyzed().wallMs / 1000;
    const sizes: Record<string, number> = {};
    for (const t of tables.slice(0, 4)) {
      const [row] = (await db.raw('select pg_total_relation_size(?::regclass) as bytes', [t])).rows;
      sizes[t] = Math.round((Number(row.bytes) / 2 ** 20) * 10) / 10;
    }

    const someIds: string[] = (await db('search_queries').where({ dataset_id: dataset.id }).orderByRaw('random()').limit(200).pluck('id')) as string[];
    const week = new Date(end.getTime() - 7 * 86_400_000).toISOString().replace('T', ' ').slice(0, 23);
    const url = `${service.url}/api/analytics/search`;
    const headers = { authorization: ADMIN_KEY, 'SVC-Dataset': dataset.id, 'content-type': 'application/json' };
    const ask = async (body: SearchAnalytics) => {
      const t0 = performance.now();
      const response = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body) });
      const text = await response.text();
      const ms = performance.now() - t0;
      if (response.status !== 200) throw new Error(`${body.type}: ${response.status} ${text}`);
      return { ms, answer: JSON.parse(text) };
    };

    // The answers must count every search written (all) and about 7 / 90 of them (week).
    const usage = (await ask({ type: 'search_usage_graph', granularity: 'day' })).answer;
    const metrics = (await ask({ type: 'search_metrics' })).answer;
    const counts = (await ask({ type: 'count_queries' })).answer;
    const counted = counts.total_queries.reduce((n: number, c: { search_count: number }) => n + c.search_count, 0);
    if (usage.total_searches !== options.searches || metrics.total_queries !== options.searches || counted !== options.searches) {
      throw new Error(`the reports count ${usage.total_searches}, ${metrics.total_queries} and ${counted} searches, not ${options.searches}`);
    }
    const weekly = (await ask({ type: 'search_metrics', filter: { date_range: { gte: week } } })).answer.total_queries;
    if (Math.abs(weekly / options.searches - 7 / DAYS) > 0.01) throw new Error(`the last 7 days hold ${weekly} of ${options.searches} searches`);
    const ctr = (await ask({ type: 'ctr_metrics_over_time', granularity: 'month' })).answer.total_ctr;
    if (Math.abs(ctr - 0.12) > 0.01) throw new Error(`the click-through rate is ${ctr}, not about 0.12`);

    const reports: AnalyticsResult['reports'] = {};
    for (const [type, request] of Object.entries(requests(week, someIds))) {
      reports[type] = await timeReport((scenario, n) => ask(request(scenario, n)), options.repeats);
      log(`${type}: week p50 ${fmt(reports[type].week.p50_ms, 1)} ms, all p50 ${fmt(reports[type].all.p50_ms, 1)} ms`);
    }
    const clusterSearches = options.clusterSearches ?? DEFAULT_CLUSTER_SEARCHES;
    const clusters = clusterSearches > 0 ? await runClusterBench(service, org.id, clusterSearches, options.seed, log) : null;
    const recommendations = await runRecommendationAnalytics(
      { url: service.url, db, postgres: service.services.store.kind === 'postgres', organizationId: org.id, datasetId: dataset.id },
      { recommendations: DEFAULT_RECOMMENDATIONS, repeats: options.repeats, seed: options.seed },
      log,
    );
    // Last, as it adds searches the checks above do not expect.
    const writeCost = await measureWriteCost(db, dataset.id);
    log(`recording a search: ${fmt(writeCost.batch_us_per_search)} µs in batches of ${WRITE_BATCH}, ${fmt(writeCost.single_us_per_search)} µs alone`);
    return {
      mode: modeEnv.mode,
      searches: options.searches,
      days: DAYS,
      repeats: options.repeats,
      load: { wall_s: loadS, searches_per_s: options.searches / loadS, analyze_s: analyzeS },
      sizes_mib: sizes,
      reports,
      clusters,
      recommendations,
      write_cost: writeCost,
      target: { p50_ms: 100, p99_ms: 300 },
    };
  } finally {
    await service.stop();
  }
}

/** A search as the service records it (search/record), made now, drawn as the load draws them. */
function searchRow(datasetId: string): Record<string, unknown> {
  const method = ['hybrid', 'hybrid', 'semantic', 'fulltext'][Math.floor(Math.random() * 4)];
  const user = Math.random() < 0.2 ? null : `user ${Math.floor(Math.random() * 30000)}`;
  const filters = Math.random() < 0.15 ? { filters: { must: [{ field: 'tag_set', match_any: [`tag ${Math.floor(30 * Math.random() ** 2)}`] }] } } : {};
  return {
    id: randomUUID(),
    dataset_id: datasetId,
    search_type: method,
    query: `query ${Math.floor(20000 * Math.random() ** 3)}`,
    request_params: JSON.stringify({ search_type: method, page_size: 10, ...(user && { user_id: user }), ...filters }),
    latency_ms: 5 * Math.exp(4 * Math.random()),
    top_score: Math.random(),
    results: [],
    user_id: user,
  };
}

/** The database's time per search recorded, over the loaded tables: p50 of the insert statements timed. */
async function measureWriteCost(db: Knex, datasetId: string): Promise<AnalyticsResult['write_cost']> {
  const time = async (rows: number, statements: number) => {
    const times: number[] = [];
    for (let n = 0; n < statements; n++) {
      const batch = Array.from({ length: rows }, () => searchRow(datasetId));
      const t0 = performance.now();
      await db('search_queries').insert(batch);
      times.push(performance.now() - t0);
    }
    return (percentile(times, 50) * 1000) / rows;
  };
  await time(WRITE_BATCH, 2);
  return { batch_us_per_search: await time(WRITE_BATCH, WRITE_BATCHES), single_us_per_search: await time(1, WRITE_SINGLES) };
}

export function formatAnalytics(mode: string, r: AnalyticsResult): string {
  const ms = (t: Timing) => [fmt(t.p50_ms, 1), fmt(t.p99_ms, 1)];
  const rows: (string | number)[][] = [['report', 'week p50 ms', 'week p99 ms', 'all p50 ms', 'all p99 ms']];
  for (const [type, t] of Object.entries(r.reports)) rows.push([type, ...ms(t.week), ...ms(t.all)]);
  return [
    `analytics (${mode}): ${fmt(r.searches)} searches over ${r.days} days in one dataset, ${r.repeats} requests per report and scenario`,
    `loaded at ${fmt(r.load.searches_per_s)} searches/s (${fmt(r.load.wall_s, 1)} s, then ${fmt(r.load.analyze_s, 1)} s of analyze); sizes MiB: ${Object.entries(
      r.sizes_mib,
    )
      .map(([t, s]) => `${t} ${fmt(s, 1)}`)
      .join(', ')}`,
    `recording a search costs the database ${fmt(r.write_cost.batch_us_per_search)} µs in batches of ${WRITE_BATCH}, ${fmt(r.write_cost.single_us_per_search)} µs alone (p50)`,
    'week: the last 7 days (graphs by the hour); all: every search (graphs by the day)',
    table(rows),
    ...(r.clusters ? [formatClusterBench(r.clusters)] : []),
    formatRecommendations(r.recommendations),
  ].join('\n');
}
