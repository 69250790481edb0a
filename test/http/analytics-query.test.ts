// The generic analytics query (POST /api/analytics) over HTTP: counts, group-bys, aggregates,
// filters, order, limit and offset, a join and a common table expression, each exact over searches
// and events written here; another dataset's rows never appear (not even through a join or the
// CTE); names from the body that are not allowed (injection attempts in every field that names
// something) are refused with 400, values are only ever compared as values.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY, startTestService, type TestService } from '../support/service.js';

let service: TestService;
let datasetId: string;
let otherDatasetId: string;
let orgId: string;
const db = () => service.services.store.db;

const send = (body: unknown, dataset = datasetId) =>
  service.request('POST', '/api/analytics', { headers: { authorization: ADMIN_KEY, 'SVC-Dataset': dataset }, body });
const rows = async (body: Record<string, unknown>, dataset = datasetId) => {
  const reply = await send(body, dataset);
  expect(reply.status, JSON.stringify(reply.body)).toBe(200);
  return reply.body as Record<string, unknown>[];
};
const refused = async (body: Record<string, unknown>, words: RegExp) => {
  const reply = await send(body);
  expect(reply.status, JSON.stringify(reply.body)).toBe(400);
  expect(reply.body.message).toMatch(words);
};

/** The searches of the dataset: query, latency, user, minutes after 2026-01-01 00:00 UTC. */
const SEARCHES: [string, number, string | null, number][] = [
  ['green tea', 10, 'ann', 0],
  ['green tea', 30, 'bob', 5],
  ['green tea', 20, 'ann', 1440],
  ['black tea', 40, 'cid', 60],
  ['black tea', 60, null, 1500],
  ['kettle', 5, 'ann', 2900],
];
const ids: string[] = [];

async function insertSearch(dataset: string, [query, latency, user, minutes]: (typeof SEARCHES)[number]): Promise<string> {
  const id = randomUUID();
  await db()('search_queries').insert({
    id,
    dataset_id: dataset,
    search_type: 'fulltext',
    query,
    request_params: JSON.stringify({ search_type: 'fulltext' }),
    latency_ms: latency,
    top_score: 0.5,
    results: [],
    user_id: user,
    created_at: new Date(Date.UTC(2026, 0, 1) + minutes * 60_000),
  });
  return id;
}

async function insertClick(dataset: string, searchId: string, position: number): Promise<void> {
  await db()('analytics_events').insert({
    id: randomUUID(),
    dataset_id: dataset,
    event_type: 'click',
    event_name: 'click',
    request_id: searchId,
    request_type: 'search',
    items: [],
    position,
    is_conversion: true,
  });
}

beforeAll(async () => {
  service = await startTestService();
  orgId = (await service.request('POST', '/api/organization', { headers: { authorization: ADMIN_KEY }, body: { name: 'Shop' } })).body.id;
  datasetId = (await service.newDataset(orgId, 'shop')).id;
  otherDatasetId = (await service.newDataset(orgId, 'other shop')).id;
  for (const search of SEARCHES) ids.push(await insertSearch(datasetId, search));
  // Clicks: two on the first green tea search, one on a black tea search.
  await insertClick(datasetId, ids[0], 1);
  await insertClick(datasetId, ids[0], 3);
  await insertClick(datasetId, ids[3], 2);
  // Another dataset: the same queries, more of them, and a click of its own that names one of our
  // searches (a join must not find it).
  const foreign: string[] = [];
  for (const search of [...SEARCHES, ...SEARCHES]) foreign.push(await insertSearch(otherDatasetId, search));
  await insertClick(otherDatasetId, foreign[0], 7);
  await insertClick(otherDatasetId, ids[0], 9);
});

afterAll(async () => {
  await service?.stop();
});

const count = { name: '*', aggregation: 'COUNT', alias: 'n' };

describe('answers over the dataset, exactly', () => {
  it('counts', async () => {
    expect(await rows({ table: 'search_queries', columns: [count] })).toEqual([{ n: 6 }]);
    expect(await rows({ table: 'events', columns: [count] })).toEqual([{ n: 3 }]);
    expect(await rows({ table: 'search_queries', columns: [count] }, otherDatasetId)).toEqual([{ n: 12 }]);
  });

  it('groups, with having, ordered by an output name', async () => {
    const body = { table: 'search_queries', columns: [{ name: 'query' }, count], group_by: { columns: ['query'] }, order_by: { columns: ['n'] } };
    expect(await rows(body)).toEqual([
      { query: 'green tea', n: 3 },
      { query: 'black tea', n: 2 },
      { query: 'kettle', n: 1 },
    ]);
    const having = { ...body, group_by: { columns: ['query'], having: { type: 'aggregate', function: 'COUNT', column: '*', operator: '>=', value: 2 } } };
    expect(await rows(having)).toEqual([
      { query: 'green tea', n: 3 },
      { query: 'black tea', n: 2 },
    ]);
  });

  it('aggregates: sum, avg, min, max and distinct counts, by day', async () => {
    const answer = await rows({
      table: 'search_queries',
      columns: [
        { name: 'latency', aggregation: 'SUM', alias: 'total' },
        { name: 'latency', aggregation: 'AVG', alias: 'mean' },
        { name: 'latency', aggregation: 'MIN', alias: 'least' },
        { name: 'latency', aggregation: 'MAX', alias: 'most' },
        { name: 'user_id', aggregation: 'COUNT', distinct: true, alias: 'users' },
      ],
      expressions: [{ expression: { type: 'function', name: 'toDate', args: [{ type: 'column', name: 'created_at' }] }, alias: 'day' }],
      group_by: { columns: ['day'] },
      order_by: { columns: ['day'], direction: 'asc' },
    });
    // Day 1: 10, 30, 40 (ann, bob, cid); day 2: 20, 60 (ann, and one without a user); day 3: 5 (ann).
    expect(answer).toEqual([
      { total: 80, mean: 80 / 3, least: 10, most: 40, users: 3, day: '2026-01-01' },
      { total: 80, mean: 40, least: 20, most: 60, users: 1, day: '2026-01-02' },
      { total: 5, mean: 5, least: 5, most: 5, users: 1, day: '2026-01-03' },
    ]);
  });

  it('filters: comparisons, like, in, null, and nested or / and', async () => {
    const queries = async (filter_conditions: unknown[]) =>
      (await rows({ table: 'search_queries', columns: [{ name: 'latency' }], filter_conditions, order_by: { columns: ['latency'], direction: 'asc' } })).map(
        (r) => r.latency,
      );
    expect(await queries([{ column: 'latency', operator: '>=', value: 30 }])).toEqual([30, 40, 60]);
    expect(await queries([{ column: 'query', operator: 'like', value: '%tea' }])).toEqual([10, 20, 30, 40, 60]);
    expect(await queries([{ column: 'query', operator: 'not in', value: ['green tea', 'black tea'] }])).toEqual([5]);
    expect(await queries([{ column: 'user_id', operator: 'is null', value: '' }])).toEqual([60]);
    expect(await queries([{ column: 'created_at', operator: '<', value: '2026-01-02T00:00:00Z' }])).toEqual([10, 30, 40]);
    // (query = kettle or latency > 50) and user_id is not null: only kettle (the 60 ms one has no user).
    expect(
      await queries([
        {
          column: 'query',
          operator: '=',
          value: 'kettle',
          or_filter: [{ column: 'latency', operator: '>', value: 50 }],
          and_filter: [{ column: 'user_id', operator: 'is not null', value: '' }],
        },
      ]),
    ).toEqual([5]);
    expect(
      await queries([
        { column: 'user_id', operator: '=', value: 'ann' },
        { column: 'latency', operator: '!=', value: 20 },
      ]),
    ).toEqual([5, 10]);
  });

  it('orders, limits and offsets; 20 rows unless asked', async () => {
    const page = await rows({ table: 'search_queries', columns: [{ name: 'latency' }], order_by: { columns: ['latency'] }, limit: 2, offset: 1 });
    expect(page).toEqual([{ latency: 40 }, { latency: 30 }]);
    expect(await rows({ table: 'search_queries', columns: [{ name: 'id' }] }, otherDatasetId)).toHaveLength(12);
    expect(await rows({ table: 'search_queries', columns: [{ name: 'id' }], limit: 5 })).toHaveLength(5);
  });

  it('joins: clicks per query, only this dataset’s on both sides', async () => {
    const body = {
      table: 'events',
      columns: [
        { name: 'search_queries.query', alias: 'query' },
        { ...count, alias: 'clicks' },
        { name: 'position', aggregation: 'SUM', alias: 'positions' },
      ],
      joins: [{ table: 'search_queries', condition: { type: 'column_equals', left_column: 'events.request_id', right_column: 'search_queries.id' } }],
      filter_conditions: [{ column: 'event_type', operator: '=', value: 'click' }],
      group_by: { columns: ['search_queries.query'] },
      order_by: { columns: ['clicks'] },
    };
    expect(await rows(body)).toEqual([
      { query: 'green tea', clicks: 2, positions: 4 },
      { query: 'black tea', clicks: 1, positions: 2 },
    ]);
    // The other dataset's own click only: its click naming our search finds nothing there.
    expect(await rows(body, otherDatasetId)).toEqual([{ query: 'green tea', clicks: 1, positions: 7 }]);
    // Searches nobody clicked (an anti join), and every search with its clicks (a left join).
    const unclicked = await rows({
      table: 'search_queries',
      columns: [{ name: 'query' }, { name: 'latency' }],
      joins: [
        { table: 'events', join_type: 'anti', condition: { type: 'column_equals', left_column: 'search_queries.id', right_column: 'events.request_id' } },
      ],
      order_by: { columns: ['latency'], direction: 'asc' },
    });
    expect(unclicked.map((r) => r.latency)).toEqual([5, 20, 30, 60]);
    const left = await rows({
      table: 'search_queries',
      columns: [
        { name: 'search_queries.latency', alias: 'latency' },
        { name: 'events.id', aggregation: 'COUNT', alias: 'clicks' },
      ],
      joins: [
        { table: 'events', join_type: 'left', condition: { type: 'column_equals', left_column: 'search_queries.id', right_column: 'events.request_id' } },
      ],
      group_by: { columns: ['search_queries.latency'] },
      order_by: { columns: ['latency'], direction: 'asc' },
    });
    expect(left.map((r) => [r.latency, r.clicks])).toEqual([
      [5, 0],
      [10, 2],
      [20, 0],
      [30, 0],
      [40, 1],
      [60, 0],
    ]);
  });

  it('a common table expression: searches per user, then users by how much they searched', async () => {
    const body = {
      cte_query: {
        alias: 'per_user',
        query: {
          table: 'search_queries',
          columns: [{ name: 'user_id' }, { name: '*', aggregation: 'COUNT', alias: 'searches' }],
          filter_conditions: [{ column: 'user_id', operator: 'is not null', value: '' }],
          group_by: { columns: ['user_id'] },
        },
      },
      table: { Custom: 'per_user' },
      columns: [{ name: 'searches' }, { ...count, alias: 'users' }],
      group_by: { columns: ['searches'] },
      order_by: { columns: ['searches'] },
    };
    // ann searched 3 times; bob and cid once.
    expect(await rows(body)).toEqual([
      { searches: 3, users: 1 },
      { searches: 1, users: 2 },
    ]);
    // In the other dataset, each searched twice as much.
    expect(await rows(body, otherDatasetId)).toEqual([
      { searches: 6, users: 1 },
      { searches: 2, users: 2 },
    ]);
  });

  it('search clusters: searches per topic, through the memberships', async () => {
    const cluster = async (dataset: string, topic: string, members: string[]) => {
      const id = randomUUID();
      await db()('search_clusters').insert({ id, dataset_id: dataset, topic, density: members.length, avg_score: 0.5 });
      await db()('search_cluster_members').insert(members.map((search_id, i) => ({ cluster_id: id, search_id, distance: i / 10 })));
    };
    await cluster(datasetId, 'tea', [ids[0], ids[1], ids[3]]);
    await cluster(datasetId, 'kitchen', [ids[5]]);
    const [foreignSearch] = await db()('search_queries').where({ dataset_id: otherDatasetId }).pluck('id');
    await cluster(otherDatasetId, 'elsewhere', [foreignSearch]);
    const body = {
      table: 'search_cluster_memberships',
      columns: [
        { name: 'cluster_topics.topic', alias: 'topic' },
        { ...count, alias: 'searches' },
        { name: 'search_queries.latency', aggregation: 'MAX', alias: 'slowest' },
      ],
      joins: [
        {
          table: 'cluster_topics',
          condition: { type: 'column_equals', left_column: 'search_cluster_memberships.cluster_id', right_column: 'cluster_topics.id' },
        },
        {
          table: 'search_queries',
          condition: { type: 'column_equals', left_column: 'search_cluster_memberships.search_id', right_column: 'search_queries.id' },
        },
      ],
      group_by: { columns: ['cluster_topics.topic'] },
      order_by: { columns: ['searches'] },
    };
    expect(await rows(body)).toEqual([
      { topic: 'tea', searches: 3, slowest: 40 },
      { topic: 'kitchen', searches: 1, slowest: 5 },
    ]);
    expect(await rows({ table: 'search_cluster_memberships', columns: [count] }, otherDatasetId)).toEqual([{ n: 1 }]);
  });

  it('every column when none is named', async () => {
    const [event] = await rows({ table: 'events', columns: [], filter_conditions: [{ column: 'position', operator: '=', value: 2 }] });
    expect(event).toMatchObject({ event_type: 'click', request_id: ids[3], request_type: 'search', position: 2, dataset_id: datasetId });
  });
});

describe('refused', () => {
  it('tables it does not keep or that do not exist, columns they lack', async () => {
    await refused({ table: { Custom: 'users' }, columns: [count] }, /"users" is neither a table nor/);
    await refused({ table: { Custom: 'pg_catalog.pg_user' }, columns: [count] }, /neither a table/);
    await refused({ table: 'search_queries', columns: [{ name: 'api_key' }] }, /no table of the query has a column "api_key"/);
    await refused({ table: 'search_queries', columns: [{ name: 'events.id' }] }, /names table "events", which the query does not read/);
    await refused({ table: 'search_queries', columns: [{ name: 'search_queries.secret' }] }, /table "search_queries" has no column "secret"/);
    await refused(
      {
        table: 'events',
        columns: [{ name: 'id' }],
        joins: [{ table: 'search_queries', condition: { type: 'column_equals', left_column: 'events.request_id', right_column: 'search_queries.id' } }],
      },
      /"id" is a column of events and search_queries/,
    );
  });

  it('limits out of range, values of the wrong type, ungrouped columns', async () => {
    await refused({ table: 'search_queries', columns: [count], limit: 0 }, /limit: from 1 to 10000/);
    await refused({ table: 'search_queries', columns: [count], limit: 10_001 }, /limit: from 1 to 10000/);
    await refused({ table: 'search_queries', columns: [count], filter_conditions: [{ column: 'latency', operator: '>', value: 'fast' }] }, /refused/);
    await refused({ table: 'search_queries', columns: [{ name: 'query' }, count] }, /refused: .*query/);
    await refused({ table: 'search_queries', columns: [count], filter_conditions: [{ column: 'latency', operator: '>', value: [1, 2] }] }, /a single value/);
  });

  it('a query that would cost too much: three tables of 1,000 rows, each row with every other, counted', async () => {
    const bigId = (await service.newDataset(orgId, 'big shop')).id;
    await db().raw(
      `insert into search_queries (id, dataset_id, search_type, query, request_params, latency_ms, results)
       select gen_random_uuid(), ?, 'fulltext', 'q' || i, '{}', i, '{}' from generate_series(1, 1000) i`,
      [bigId],
    );
    await db().raw(
      `insert into analytics_events (id, dataset_id, event_type, event_name, items, is_conversion)
       select gen_random_uuid(), ?, 'view', 'view', '{}', false from generate_series(1, 1000)`,
      [bigId],
    );
    await db().raw(
      `insert into recommendation_queries (id, dataset_id, recommendation_type, positive_ids, negative_ids, positive_tracking_ids, negative_tracking_ids, request_params, results, latency_ms)
       select gen_random_uuid(), ?, 'Chunk', '{}', '{}', '{}', '{}', '{}', '[]', 1 from generate_series(1, 1000)`,
      [bigId],
    );
    await db().raw('analyze search_queries, analytics_events, recommendation_queries');
    const joins = ['events', 'recommendations'].map((table) => ({
      table,
      join_type: 'cross',
      condition: { type: 'column_equals', left_column: 'search_queries.id', right_column: `${table}.id` },
    }));
    const reply = await send({ table: 'search_queries', columns: [count], joins }, bigId);
    expect(reply.status, JSON.stringify(reply.body)).toBe(400);
    expect(reply.body.message).toMatch(/the query would cost about [\d,]+ \(at most 5,000,000\)/);
    // Two of them (a million pairs) are within bounds.
    expect(await rows({ table: 'search_queries', columns: [count], joins: joins.slice(0, 1) }, bigId)).toEqual([{ n: 1_000_000 }]);
  });

  const INJECTION = 'query; drop table search_queries; --';
  const body = (patch: Record<string, unknown>) => ({ table: 'search_queries', columns: [{ name: 'query' }], ...patch });
  it.each([
    ['columns.name', body({ columns: [{ name: INJECTION }] }), /no table of the query has a column/],
    ['columns.name (qualified)', body({ columns: [{ name: `search_queries.${INJECTION}` }] }), /has no column/],
    ['columns.alias', body({ columns: [{ name: 'query', alias: 'q" from datasets; --' }] }), /is not a plain name/],
    ['table.Custom', { table: { Custom: `search_queries ${INJECTION}` }, columns: [count] }, /neither a table/],
    ['expressions.name', body({ expressions: [{ expression: { type: 'column', name: INJECTION } }] }), /no table of the query has a column/],
    [
      'expressions function name',
      body({ expressions: [{ expression: { type: 'function', name: 'pg_sleep', args: [{ type: 'literal', value: 5 }] } }] }),
      /function "pg_sleep" is not allowed/,
    ],
    ['expressions raw', body({ expressions: [{ expression: { type: 'raw', sql: '1); delete from search_queries; --' } }] }), /raw SQL is not accepted/],
    [
      'expressions cast type',
      body({
        expressions: [
          {
            expression: {
              type: 'function',
              name: 'CAST',
              args: [
                { type: 'column', name: 'latency' },
                { type: 'literal', value: 'int) from datasets; --' },
              ],
            },
          },
        ],
      }),
      /the type to cast to/,
    ],
    ['expressions.alias', body({ expressions: [{ expression: { type: 'literal', value: 1 }, alias: 'x; drop table chunks' }] }), /is not a plain name/],
    ['filter_conditions.column', body({ filter_conditions: [{ column: '1=1 or query', operator: '=', value: 'x' }] }), /no table of the query has a column/],
    ['group_by.columns', body({ group_by: { columns: ['query) union select password from users --'] } }), /no table of the query has a column/],
    [
      'having.column',
      body({ group_by: { columns: ['query'], having: { type: 'aggregate', function: 'SUM', column: 'latency); --', operator: '>', value: 1 } } }),
      /no table/,
    ],
    ['order_by.columns', body({ order_by: { columns: ['(select 1)'] } }), /no table of the query has a column/],
    ['joins.table', body({ joins: [{ table: { Custom: 'datasets' }, condition: { type: 'using', columns: ['id'] } }] }), /neither a table/],
    [
      'joins.condition',
      body({ joins: [{ table: 'events', condition: { type: 'column_equals', left_column: 'events.id or true', right_column: 'search_queries.id' } }] }),
      /has no column/,
    ],
    ['joins.using', body({ joins: [{ table: 'events', condition: { type: 'using', columns: ['id) or (true'] } }] }), /no table of the query has a column/],
    ['cte_query.alias', { cte_query: { alias: 'x as (select 1) --', query: body({}) }, table: 'search_queries', columns: [count] }, /is not a plain name/],
  ])('a name that is not allowed, in %s', async (_field, patched, words) => {
    await refused(patched, words);
  });

  it('values are compared as values, whatever they hold', async () => {
    const quoted = await rows({
      table: 'search_queries',
      columns: [count],
      filter_conditions: [{ column: 'query', operator: '=', value: "green tea' or '1'='1" }],
    });
    expect(quoted).toEqual([{ n: 0 }]);
    const literal = await rows({
      table: 'search_queries',
      columns: [{ name: 'query' }],
      expressions: [{ expression: { type: 'literal', value: "'); drop table search_queries; --" }, alias: 'note' }],
      limit: 1,
    });
    expect(literal[0].note).toBe("'); drop table search_queries; --");
    expect(await rows({ table: 'search_queries', columns: [count] })).toEqual([{ n: 6 }]);
  });
});
