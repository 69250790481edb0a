// Analytics events and click-through at volume: `npx tsx bench/analytics-events.ts [--mode embedded,full]
// [--records 100000] [--requests 50]`. One dataset is loaded straight into the database (as a bench
// loader may: one INSERT … SELECT per table): searches, recommendations and RAG calls, and analytics
// events (clicks on them, views and carts of front-end components on pages, component open/close
// sessions), `--records` rows in all, spread over 90 days. Then each report type of
// get_ctr_analytics and get_component_analytics, get_all_events (plain and filtered),
// get_event_by_id, send_event_data and send_ctr_data is timed over HTTP, one request at a time:
// p50 and p99 of `--requests` requests after 5 not counted. Results in
// bench/results/analytics-events-<mode>.json. Target (issue 15): p50 ≤ 100 ms, p99 ≤ 300 ms in full mode.
import { parseArgs } from 'node:util';
import { loadConfig } from '../server/config.js';
import { startService } from '../server/main.js';
import { ADMIN_KEY, MODES, type Mode, openMode } from './modes.js';
import { fmt, percentile, table, writeResult } from './report.js';

const { values: args } = parseArgs({
  options: { mode: { type: 'string', default: MODES.join(',') }, records: { type: 'string', default: '100000' }, requests: { type: 'string', default: '50' } },
});
const RECORDS = Number(args.records);
const REQUESTS = Number(args.requests);
const WARMUP = 5;
const DAY_MS = 86_400_000;

/** Shares of the records: searches, recommendations, RAG calls; the rest are events. */
const SHARES = { searches: 0.25, recommendations: 0.05, rag: 0.2 };

type Call = { name: string; method: string; path: string; body?: () => unknown };

async function load(db: import('knex').Knex, datasetId: string, chunkIds: string[]): Promise<Record<string, number>> {
  const n = {
    searches: Math.round(RECORDS * SHARES.searches),
    recommendations: Math.round(RECORDS * SHARES.recommendations),
    rag: Math.round(RECORDS * SHARES.rag),
  };
  const events = RECORDS - n.searches - n.recommendations - n.rag;
  const since = `now() - interval '90 days'`;
  const at = (count: number) => `${since} + (i::double precision / ${count}) * interval '90 days'`;
  const chunks = `(array[${chunkIds.map((id) => `'${id}'::uuid`).join(',')}])`;
  await db.raw(
    `insert into search_queries (id, dataset_id, search_type, query, request_params, latency_ms, top_score, results, user_id, created_at)
     select gen_random_uuid(), ?, (array['hybrid','fulltext','semantic','autocomplete_hybrid'])[1 + i % 4], 'query ' || (i % 500),
       jsonb_build_object('search_type', (array['hybrid','fulltext','semantic','hybrid'])[1 + i % 4]), 5 + i % 50, (i % 100) / 100.0,
       ${chunks}, 'user-' || (i % 3000), ${at(n.searches)}
     from generate_series(1, ${n.searches}) i`,
    [datasetId],
  );
  await db.raw(
    `insert into recommendation_queries (id, dataset_id, recommendation_type, positive_ids, negative_ids, positive_tracking_ids, negative_tracking_ids,
       request_params, results, top_score, latency_ms, user_id, created_at)
     select gen_random_uuid(), ?, (array['Chunk','Group'])[1 + i % 2], array[${chunks}[1]], '{}', '{}', '{}', '{}', '[]', (i % 100) / 100.0, 4,
       'user-' || (i % 3000), ${at(n.recommendations)}
     from generate_series(1, ${n.recommendations}) i`,
    [datasetId],
  );
  await db.raw(
    `insert into rag_queries (id, dataset_id, search_id, topic_id, user_message, llm_response, user_id, created_at)
     select gen_random_uuid(), ?, gen_random_uuid(), gen_random_uuid(), 'question ' || (i % 300), 'answer', 'user-' || (i % 3000), ${at(n.rag)}
     from generate_series(1, ${n.rag}) i`,
    [datasetId],
  );
  // Clicks: on one search in three, one recommendation in four, one RAG call in five.
  const clicks = async (table: string, type: string, every: number) => {
    await db.raw(
      `insert into analytics_events (id, dataset_id, event_type, event_name, request_id, request_type, items, clicked_chunk_id, position, user_id, is_conversion, created_at, updated_at)
       select gen_random_uuid(), r.dataset_id, 'click', 'click', r.id, ?, '{}', ${chunks}[1 + (abs(hashtext(r.id::text)) % ${chunkIds.length})],
         abs(hashtext(r.id::text)) % 10, r.user_id, true, r.created_at + interval '5 seconds', r.created_at + interval '5 seconds'
       from (select *, row_number() over (order by created_at) k from ${table} where dataset_id = ?) r where r.k % ${every} = 0`,
      [type, datasetId],
    );
  };
  await clicks('search_queries', 'search', 3);
  await clicks('recommendation_queries', 'recommendation', 4);
  await clicks('rag_queries', 'rag', 5);
  const written = Number((await db('analytics_events').where({ dataset_id: datasetId }).count({ n: '*' }))[0].n);
  const rest = Math.max(0, events - written);
  // The other events: views, carts, checkouts and component sessions, from 40 components on 200 pages.
  await db.raw(
    `insert into analytics_events (id, dataset_id, event_type, event_name, items, location, metadata, user_id, is_conversion, created_at, updated_at)
     select gen_random_uuid(), ?, (array['view','add_to_cart','view','view','purchase','view'])[1 + i % 6],
       (array['component_open','add_to_cart','component_close','widget_load','checkout','search_view'])[1 + i % 6], '{}',
       '/page/' || (i % 200), jsonb_build_object('component_props', jsonb_build_object('componentName', 'component-' || (i % 40))),
       'user-' || ((i / 6) % 3000), i % 6 in (1, 4), ${at(rest)}, ${at(rest)}
     from generate_series(1, ${rest}) i`,
    [datasetId],
  );
  await db.raw('analyze');
  return { ...n, events: written + rest };
}

async function runMode(mode: Mode): Promise<Record<string, unknown>> {
  const log = (line: string) => console.error(`[${mode}] ${line}`);
  const env = await openMode(mode, log);
  const service = await startService(loadConfig(await env.freshEnv('builtin')));
  try {
    const call = async (method: string, path: string, body: unknown, headers: Record<string, string> = {}) => {
      const response = await fetch(service.url + path, {
        method,
        headers: { authorization: ADMIN_KEY, 'content-type': 'application/json', ...headers },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await response.text();
      if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${text}`);
      return text ? JSON.parse(text) : undefined;
    };
    const org = await call('POST', '/api/organization', { name: 'bench' });
    const dataset = await call('POST', '/api/dataset', { dataset_name: 'analytics' }, { 'SVC-Organization': org.id });
    const ds = { 'SVC-Dataset': dataset.id };
    const created = await call(
      'POST',
      '/api/chunk',
      Array.from({ length: 20 }, (_, i) => ({ chunk_html: `<p>chunk ${i}</p>`, tracking_id: `c${i}` })),
      ds,
    );
    const chunkIds: string[] = created.chunk_metadata.map((c: { id: string }) => c.id);
    const db = service.services.store.db;
    const t0 = performance.now();
    const loaded = await load(db, dataset.id, chunkIds);
    log(`loaded ${JSON.stringify(loaded)} in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    const someSearch = (await db('search_queries').where({ dataset_id: dataset.id }).orderBy('created_at', 'desc').first('id')).id;
    const someEvent = (await db('analytics_events').where({ dataset_id: dataset.id }).orderBy('created_at', 'desc').first('id')).id;
    const lastWeek = { date_range: { gte: new Date(Date.now() - 7 * DAY_MS).toISOString() } };

    const calls: Call[] = [
      ...[
        'search_ctr_metrics',
        'searches_with_clicks',
        'searches_without_clicks',
        'recommendation_ctr_metrics',
        'recommendations_with_clicks',
        'recommendations_without_clicks',
      ].map((type) => ({ name: `ctr ${type}`, method: 'POST', path: '/api/analytics/events/ctr', body: () => ({ type }) })),
      {
        name: 'ctr search_ctr_metrics, last week',
        method: 'POST',
        path: '/api/analytics/events/ctr',
        body: () => ({ type: 'search_ctr_metrics', filter: lastWeek }),
      },
      {
        name: 'ctr searches_with_clicks, page 50',
        method: 'POST',
        path: '/api/analytics/events/ctr',
        body: () => ({ type: 'searches_with_clicks', page: 50 }),
      },
      {
        name: 'component total_unique_users (day)',
        method: 'POST',
        path: '/api/analytics/events/component',
        body: () => ({ type: 'total_unique_users', granularity: 'day' }),
      },
      ...['top_pages', 'top_components', 'component_names'].map((type) => ({
        name: `component ${type}`,
        method: 'POST',
        path: '/api/analytics/events/component',
        body: () => ({ type }),
      })),
      {
        name: 'component component_interaction_time (day)',
        method: 'POST',
        path: '/api/analytics/events/component',
        body: () => ({ type: 'component_interaction_time', granularity: 'day' }),
      },
      {
        name: 'component top_pages, one component, last week',
        method: 'POST',
        path: '/api/analytics/events/component',
        body: () => ({ type: 'top_pages', filter: { ...lastWeek, component_name: 'component-7' } }),
      },
      { name: 'get_all_events', method: 'POST', path: '/api/analytics/events/all', body: () => ({}) },
      {
        name: 'get_all_events, purchases, page 20',
        method: 'POST',
        path: '/api/analytics/events/all',
        body: () => ({ filter: { event_type: 'purchase' }, page: 20 }),
      },
      {
        name: 'get_all_events, metadata_filter',
        method: 'POST',
        path: '/api/analytics/events/all',
        body: () => ({ filter: { metadata_filter: "component_props.componentName = 'component-3'" } }),
      },
      { name: 'get_event_by_id', method: 'GET', path: `/api/analytics/events/${someEvent}` },
      {
        name: 'send_event_data (view)',
        method: 'PUT',
        path: '/api/analytics/events',
        body: () => ({ event_type: 'view', event_name: 'view', items: ['c1'], user_id: 'u' }),
      },
      {
        name: 'send_ctr_data (search)',
        method: 'PUT',
        path: '/api/analytics/ctr',
        body: () => ({ request_id: someSearch, ctr_type: 'search', position: 1, clicked_chunk_id: chunkIds[0] }),
      },
    ];
    const rows: Record<string, unknown>[] = [];
    for (const c of calls) {
      const times: number[] = [];
      for (let i = 0; i < WARMUP + REQUESTS; i++) {
        const started = performance.now();
        await call(c.method, c.path, c.body?.(), ds);
        if (i >= WARMUP) times.push(performance.now() - started);
      }
      rows.push({ name: c.name, p50_ms: percentile(times, 50), p99_ms: percentile(times, 99) });
    }
    console.log(`\nanalytics events, ${mode}: ${RECORDS} records in one dataset, ${REQUESTS} requests each\n`);
    console.log(table([['request', 'p50 ms', 'p99 ms'], ...rows.map((r) => [r.name as string, fmt(r.p50_ms as number, 1), fmt(r.p99_ms as number, 1)])]));
    const result = { mode, records: RECORDS, loaded, requests: REQUESTS, rows };
    await writeResult('analytics-events', mode, result);
    return result;
  } finally {
    await service.stop();
    await env.close();
  }
}

for (const mode of args.mode.split(',') as Mode[]) await runMode(mode);
