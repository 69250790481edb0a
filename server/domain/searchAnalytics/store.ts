// The SQL of search analytics: the recorded searches (search_queries), their hourly and daily
// roll-ups (search_rollup_hours, search_rollup_days, kept by triggers: migration 029), what users
// did about them (analytics_events, migration 030), the roll-ups of distinct queries, users and
// filters over a whole dataset (migration 033) and the chunks a search found. Every read is of one
// dataset.
import type { Knex } from 'knex';
import type * as T from '../../../sdk/src/generated/types.gen.js';
import { HISTOGRAM_BUCKETS } from './histogram.js';
import { type RollupUnit, splitAtUnits } from './rollupSplit.js';
import type { Bound } from '../dateRange.js';
import { type NumberBounds, rolledUp, type Scope, wholeDataset } from './scope.js';

export const PAGE_SIZE = 10;

export interface SearchRow {
  id: string;
  dataset_id: string;
  kind: string;
  query: string;
  request_params: Record<string, unknown>;
  latency_ms: number;
  top_score: number;
  results: string[];
  user_id: string | null;
  created_at: Date;
  query_rating: number | null;
  query_rating_note: string | null;
  query_rating_metadata: unknown;
}

const SEARCH_COLUMNS = [
  'id',
  'dataset_id',
  'kind',
  'query',
  'request_params',
  'latency_ms',
  'top_score',
  'results',
  'user_id',
  'created_at',
  'query_rating',
  'query_rating_note',
  'query_rating_metadata',
];

/** Granularities as date_trunc's field names (the contract's enum, spelled out rather than interpolated). */
const TRUNCATE: Record<T.Granularity, string> = { second: 'second', minute: 'minute', hour: 'hour', day: 'day', month: 'month' };

const COMPARE = { gt: '>', gte: '>=', lt: '<', lte: '<=' } as const;

function whereBounds(query: Knex.QueryBuilder, column: string, bounds: NumberBounds | undefined): void {
  for (const key of ['gt', 'gte', 'lt', 'lte'] as const) {
    const value = bounds?.[key];
    if (value !== undefined) query.where(column, COMPARE[key], value);
  }
}

function whereRange(query: Knex.QueryBuilder, column: string, range: { from?: Bound<Date>; to?: Bound<Date> }): void {
  if (range.from) query.where(column, range.from.inclusive ? '>=' : '>', range.from.value);
  if (range.to) query.where(column, range.to.inclusive ? '<=' : '<', range.to.value);
}

/** The searches of the scope (with `range` instead of the scope's own, when given). */
function searches(db: Knex, scope: Scope, range: { from?: Bound<Date>; to?: Bound<Date> } = scope): Knex.QueryBuilder {
  const query = db('search_queries').where('dataset_id', scope.datasetId);
  whereRange(query, 'created_at', range);
  if (scope.kind !== undefined) query.where('kind', scope.kind);
  if (scope.method !== undefined) query.where('search_method', scope.method);
  whereBounds(query, 'query_rating', scope.rating);
  whereBounds(query, 'top_score', scope.topScore);
  if (scope.componentName !== undefined) query.whereRaw(`request_params #>> '{metadata,component_props,componentName}' = ?`, [scope.componentName]);
  if (scope.query !== undefined) query.whereILike('query', `%${scope.query.replace(/[\\%_]/g, (c) => `\\${c}`)}%`);
  return query;
}

/** The roll-up rows of the scope's kind and method whose unit starts in [start, end). */
function rollupRows(db: Knex, scope: Scope, unit: RollupUnit, whole: { start?: Date; end?: Date }): Knex.QueryBuilder {
  const query = db(`search_rollup_${unit}s`).where('dataset_id', scope.datasetId);
  if (whole.start) query.where('bucket', '>=', whole.start);
  if (whole.end) query.where('bucket', '<', whole.end);
  if (scope.kind !== undefined) query.where('kind', scope.kind);
  if (scope.method !== undefined) query.where('search_method', scope.method);
  return query;
}

/**
 * The parts that together hold the scope's searches, each as rows of (at, kind, search_method,
 * searches, latency_sum): whole roll-up units where they can answer, searches themselves elsewhere.
 */
function sumParts(db: Knex, scope: Scope, unit: RollupUnit | null): Knex.QueryBuilder[] {
  const raw = (range?: { from?: Bound<Date>; to?: Bound<Date> }) =>
    searches(db, scope, range).select('created_at as at', 'kind', 'search_method', db.raw('1 as searches'), 'latency_ms as latency_sum');
  if (unit === null || !rolledUp(scope)) return [raw()];
  const split = splitAtUnits(scope, unit);
  const parts = split.edges.map(raw);
  if (split.whole) parts.unshift(rollupRows(db, scope, unit, split.whole).select('bucket as at', 'kind', 'search_method', 'searches', 'latency_sum'));
  return parts;
}

function unionAll(db: Knex, parts: Knex.QueryBuilder[]): Knex.QueryBuilder {
  const [first, ...rest] = parts;
  return rest.length ? db.queryBuilder().from(first.unionAll(rest, true).as('parts')) : db.queryBuilder().from(first.as('parts'));
}

export interface Sums {
  searches: number;
  latencySum: number;
}

/** Searches and their latency summed per bucket of `granularity`, keyed by the bucket's start (ms). */
export async function sumsByBucket(db: Knex, scope: Scope, granularity: T.Granularity): Promise<Map<number, Sums>> {
  const unit: RollupUnit | null = granularity === 'hour' ? 'hour' : granularity === 'day' || granularity === 'month' ? 'day' : null;
  const rows: { bucket: Date; searches: number; latency_sum: number }[] = await unionAll(db, sumParts(db, scope, unit))
    .select(
      db.raw(`date_trunc(?, at, 'UTC') as bucket`, [TRUNCATE[granularity]]),
      db.raw('sum(searches)::float8 as searches'),
      db.raw('sum(latency_sum) as latency_sum'),
    )
    .groupBy('bucket');
  return new Map(rows.map((r) => [r.bucket.getTime(), { searches: Number(r.searches), latencySum: Number(r.latency_sum) }]));
}

/** Searches and their latency summed per kind and method of search. */
export async function sumsByType(db: Knex, scope: Scope): Promise<{ kind: string; method: string; searches: number }[]> {
  const rows: { kind: string; search_method: string; searches: number }[] = await unionAll(db, sumParts(db, scope, 'day'))
    .select('kind', 'search_method', db.raw('sum(searches)::float8 as searches'))
    .groupBy('kind', 'search_method')
    .orderBy([{ column: 'searches', order: 'desc' }, 'kind', 'search_method']);
  return rows.map((r) => ({ kind: r.kind, method: r.search_method, searches: Number(r.searches) }));
}

/** Searches and their latency summed over the whole scope. */
export async function sums(db: Knex, scope: Scope): Promise<Sums> {
  const [row] = await unionAll(db, sumParts(db, scope, 'day')).select(
    db.raw('coalesce(sum(searches), 0)::float8 as searches'),
    db.raw('coalesce(sum(latency_sum), 0) as latency_sum'),
  );
  return { searches: Number(row.searches), latencySum: Number(row.latency_sum) };
}

/** How many of the scope's searches fall in each latency bucket (index = bucket, histogram.ts). */
export async function latencyHistogram(db: Knex, scope: Scope): Promise<number[]> {
  const counts = new Array<number>(HISTOGRAM_BUCKETS).fill(0);
  const rawCounts = async (range?: { from?: Bound<Date>; to?: Bound<Date> }) => {
    const rows: { bucket: number; searches: number }[] = await searches(db, scope, range)
      .select(db.raw('search_latency_bucket(latency_ms) as bucket'), db.raw('count(*)::float8 as searches'))
      .groupBy('bucket');
    for (const row of rows) counts[row.bucket] += Number(row.searches);
  };
  if (!rolledUp(scope)) {
    await rawCounts();
    return counts;
  }
  const split = splitAtUnits(scope, 'day');
  if (split.whole) {
    const sumsOfBuckets = counts.map((_, b) => db.raw(`coalesce(sum(latency_histogram[${b + 1}]), 0)::float8 as b${b}`));
    const [row] = await rollupRows(db, scope, 'day', split.whole).select(sumsOfBuckets);
    for (let b = 0; b < HISTOGRAM_BUCKETS; b++) counts[b] += Number(row[`b${b}`]);
  }
  for (const edge of split.edges) await rawCounts(edge);
  return counts;
}

/** How many of the scope's searches are rated positive (1 or more) and negative (0 or less). */
export async function ratingCounts(db: Knex, scope: Scope): Promise<{ positive: number; negative: number }> {
  const [row] = await searches(db, scope)
    .whereNotNull('query_rating')
    .select(db.raw('count(*) filter (where query_rating >= 1)::float8 as positive'), db.raw('count(*) filter (where query_rating <= 0)::float8 as negative'));
  return { positive: Number(row.positive), negative: Number(row.negative) };
}

/** The average rating of the scope's rated searches per bucket. */
export async function ratingByBucket(db: Knex, scope: Scope, granularity: T.Granularity): Promise<Map<number, number>> {
  const rows: { bucket: Date; rating: number }[] = await searches(db, scope)
    .whereNotNull('query_rating')
    .select(db.raw(`date_trunc(?, created_at, 'UTC') as bucket`, [TRUNCATE[granularity]]), db.raw('avg(query_rating)::float8 as rating'))
    .groupBy('bucket');
  return new Map(rows.map((r) => [r.bucket.getTime(), Number(r.rating)]));
}

/** Per bucket, the scope's searches and how many users made them (searches without a user id count as one). */
export async function usersByBucket(db: Knex, scope: Scope, granularity: T.Granularity): Promise<Map<number, { searches: number; users: number }>> {
  // Users of a day do not add up across kinds or methods, nor into months: only a day of all searches comes from the roll-ups.
  if (granularity !== 'day' || !rolledUp(scope) || scope.kind !== undefined || scope.method !== undefined)
    return usersByBucketOf(db, scope, granularity, scope);
  const split = splitAtUnits(scope, 'day');
  const byBucket = new Map<number, { searches: number; users: number }>();
  for (const edge of split.edges) for (const [at, figures] of await usersByBucketOf(db, scope, granularity, edge)) byBucket.set(at, figures);
  if (split.whole) {
    const days = (table: string) => {
      const query = db(table).where('dataset_id', scope.datasetId);
      if (split.whole?.start) query.where('bucket', '>=', split.whole.start);
      if (split.whole?.end) query.where('bucket', '<', split.whole.end);
      return query;
    };
    const rows: { bucket: Date; searches: number; users: number }[] = await days('search_user_day_counts as u')
      .select('u.bucket', db.raw('u.users::float8 as users'))
      .select({
        searches: days('search_rollup_days as d').whereRaw('d.bucket = u.bucket').select(db.raw('coalesce(sum(d.searches), 0)::float8')),
      })
      .where('u.users', '>', 0);
    for (const r of rows) byBucket.set(r.bucket.getTime(), { searches: Number(r.searches), users: Number(r.users) });
  }
  return byBucket;
}

/** usersByBucket from the searches themselves, in `range`. */
async function usersByBucketOf(
  db: Knex,
  scope: Scope,
  granularity: T.Granularity,
  range: { from?: Bound<Date>; to?: Bound<Date> },
): Promise<Map<number, { searches: number; users: number }>> {
  const perUser = searches(db, scope, range)
    .select(db.raw(`date_trunc(?, created_at, 'UTC') as bucket`, [TRUNCATE[granularity]]), db.raw('count(*) as searches'))
    .groupBy('bucket', db.raw(`coalesce(user_id, '')`));
  const rows: { bucket: Date; searches: number; users: number }[] = await db
    .from(perUser.as('per_user'))
    .select('bucket', db.raw('sum(searches)::float8 as searches'), db.raw('count(*)::float8 as users'))
    .groupBy('bucket');
  return new Map(rows.map((r) => [r.bucket.getTime(), { searches: Number(r.searches), users: Number(r.users) }]));
}

/** How many users made the scope's searches (searches without a user id count as one). */
export async function userCount(db: Knex, scope: Scope): Promise<number> {
  if (wholeDataset(scope)) {
    const [row] = await db('search_users').where('dataset_id', scope.datasetId).count({ users: '*' });
    return Number(row.users);
  }
  const [row] = await db.from(searches(db, scope).distinct(db.raw(`coalesce(user_id, '') as user_id`)).as('users')).count({ users: '*' });
  return Number(row.users);
}

/** A page of the queries searched most, most first. */
export async function headQueries(db: Knex, scope: Scope, page: number): Promise<{ query: string; count: number }[]> {
  const query = wholeDataset(scope)
    ? db('search_query_counts').where('dataset_id', scope.datasetId).select('query', db.raw('searches::float8 as count'))
    : searches(db, scope).select('query', db.raw('count(*)::float8 as count')).groupBy('query');
  const rows: { query: string; count: number }[] = await query
    .orderBy([{ column: 'count', order: 'desc' }, 'query'])
    .limit(PAGE_SIZE)
    .offset((page - 1) * PAGE_SIZE);
  return rows.map((r) => ({ query: r.query, count: Number(r.count) }));
}

export interface SearchPage {
  page: number;
  sortBy: 'created_at' | 'latency_ms' | 'top_score';
  order: 'asc' | 'desc';
  /** Only searches scoring below this. */
  scoreBelow?: number;
  /** Only searches that found nothing. */
  noResults?: boolean;
  /** Only searches with clicks (true) or without (false). */
  clicked?: boolean;
}

/** A page of the scope's searches in the order asked, ties newest first. */
export async function searchPage(db: Knex, scope: Scope, page: SearchPage): Promise<SearchRow[]> {
  const query = searches(db, scope).select(SEARCH_COLUMNS);
  if (page.scoreBelow !== undefined) query.where('top_score', '<', page.scoreBelow);
  if (page.noResults) query.whereRaw('cardinality(results) = 0');
  if (page.clicked !== undefined) {
    const clicks = (q: Knex.QueryBuilder) =>
      q
        .select(db.raw('1'))
        .from('analytics_events as e')
        .whereRaw(`e.request_id = search_queries.id and e.dataset_id = search_queries.dataset_id and e.event_type = 'click' and e.request_type = 'search'`);
    if (page.clicked) query.whereExists(clicks);
    else query.whereNotExists(clicks);
  }
  const order = [{ column: page.sortBy, order: page.order }];
  if (page.sortBy !== 'created_at') order.push({ column: 'created_at', order: 'desc' });
  return query
    .orderBy([...order, { column: 'id', order: 'asc' }])
    .limit(PAGE_SIZE)
    .offset((page.page - 1) * PAGE_SIZE);
}

export async function searchById(db: Knex, datasetId: string, id: string): Promise<SearchRow | undefined> {
  return db('search_queries').where({ dataset_id: datasetId, id }).first(SEARCH_COLUMNS);
}

export interface FilterUse {
  clause: string;
  field: string;
  filterType: string;
  count: number;
  values: { value: string; count: number }[];
}

/**
 * The filter conditions the scope's searches used most (up to `limit`), by clause, field and kind of
 * condition, each with its `valueLimit` most used values. A search's conditions and their values
 * are read by the database functions search_filter_conditions and search_filter_values (migration
 * 033), which also keep the roll-ups that answer for a whole dataset.
 */
export async function filterUses(db: Knex, scope: Scope, limit: number, valueLimit: number): Promise<FilterUse[]> {
  const query = wholeDataset(scope) ? rolledUpFilterCounts(db, scope.datasetId, limit) : filterCounts(db, scope, limit);
  const rows: { clause: string; field: string; filter_type: string; count: number; value: string; value_count: number }[] = await query
    .select('top.clause', 'top.field', 'top.filter_type', db.raw('top.count::float8 as count'), 'v.value', db.raw('v.value_count::float8 as value_count'))
    .from('top')
    .leftJoin('condition_values as v', function () {
      this.on('v.clause', 'top.clause')
        .andOn('v.field', 'top.field')
        .andOn('v.filter_type', 'top.filter_type')
        .andOn('v.place', '<=', db.raw('?', [valueLimit]));
    })
    .orderBy([{ column: 'top.count', order: 'desc' }, 'top.clause', 'top.field', 'top.filter_type', { column: 'v.value_count', order: 'desc' }, 'v.value']);
  const uses: FilterUse[] = [];
  for (const row of rows) {
    let use = uses.at(-1);
    if (!use || use.clause !== row.clause || use.field !== row.field || use.filterType !== row.filter_type) {
      use = { clause: row.clause, field: row.field, filterType: row.filter_type, count: Number(row.count), values: [] };
      uses.push(use);
    }
    if (row.value !== null) use.values.push({ value: row.value, count: Number(row.value_count) });
  }
  return uses;
}

/** `top` (the most used conditions) and `condition_values` (their values, ranked by `place`) from the scope's searches. */
function filterCounts(db: Knex, scope: Scope, limit: number): Knex.QueryBuilder {
  const filtered = searches(db, scope).whereRaw(`jsonb_typeof(request_params->'filters') = 'object'`).select('request_params');
  return db
    .with('filtered', filtered)
    .with('conditions', db.raw('select c.* from filtered cross join lateral search_filter_conditions(filtered.request_params) c'))
    .with(
      'top',
      db.raw(
        `select clause, field, filter_type, count(*) as count from conditions
         group by clause, field, filter_type order by count desc, clause, field, filter_type limit ?`,
        [limit],
      ),
    )
    .with(
      'condition_values',
      db.raw(
        `select c.clause, c.field, c.filter_type, v.value, count(*) as value_count,
           row_number() over (partition by c.clause, c.field, c.filter_type order by count(*) desc, v.value) as place
         from conditions c
         join top using (clause, field, filter_type)
         cross join lateral search_filter_values(c.filter_type, c.condition) as v(value)
         group by c.clause, c.field, c.filter_type, v.value`,
      ),
    );
}

/** filterCounts over the whole dataset, from the roll-ups. */
function rolledUpFilterCounts(db: Knex, datasetId: string, limit: number): Knex.QueryBuilder {
  return db
    .with(
      'top',
      db.raw(
        `select clause, field, filter_type, field_key, uses as count from search_filter_conditions
         where dataset_id = ? and uses > 0 order by uses desc, clause, field, filter_type limit ?`,
        [datasetId, limit],
      ),
    )
    .with(
      'condition_values',
      db.raw(
        `select top.clause, top.field, top.filter_type, v.value, v.uses as value_count,
           row_number() over (partition by top.clause, top.field, top.filter_type order by v.uses desc, v.value) as place
         from top join search_filter_values v using (clause, filter_type, field_key)
         where v.dataset_id = ? and v.uses > 0`,
        [datasetId],
      ),
    );
}

// ---- what users did: analytics events about searches ----

/** Whether the scope narrows searches by more than their time. */
const narrowsSearches = (scope: Scope) =>
  [scope.kind, scope.method, scope.rating, scope.topScore, scope.componentName, scope.query].some((condition) => condition !== undefined);

/**
 * The dataset's events about its searches made in the scope's date range (the event's time), and
 * about searches the scope's other conditions keep.
 */
function searchEvents(db: Knex, scope: Scope): Knex.QueryBuilder {
  const query = db('analytics_events as e').where('e.dataset_id', scope.datasetId).where('e.request_type', 'search');
  whereRange(query, 'e.created_at', scope);
  if (narrowsSearches(scope)) query.whereIn('e.request_id', searches(db, scope, {}).select('id'));
  return query;
}

const byEventBucket = (db: Knex, granularity: T.Granularity) => db.raw(`date_trunc(?, e.created_at, 'UTC') as bucket`, [TRUNCATE[granularity]]);

async function perBucket(query: Knex.QueryBuilder): Promise<Map<number, number>> {
  const rows: { bucket: Date; value: number }[] = await query.groupBy('bucket');
  return new Map(rows.map((r) => [r.bucket.getTime(), Number(r.value)]));
}

/** Clicks on the results of the scope's searches, per bucket of the click's time. */
export function clicksByBucket(db: Knex, scope: Scope, granularity: T.Granularity): Promise<Map<number, number>> {
  return perBucket(searchEvents(db, scope).where('e.event_type', 'click').select(byEventBucket(db, granularity), db.raw('count(*)::float8 as value')));
}

/** Events about the scope's searches that count as conversions, per bucket of the event's time. */
export function conversionsByBucket(db: Knex, scope: Scope, granularity: T.Granularity): Promise<Map<number, number>> {
  return perBucket(searchEvents(db, scope).where('e.is_conversion', true).select(byEventBucket(db, granularity), db.raw('count(*)::float8 as value')));
}

/**
 * Revenue of purchases per bucket of the purchase's time: of those about the scope's searches
 * (`direct`), or of those about no search, in the scope's date range.
 */
export function revenueByBucket(db: Knex, scope: Scope, granularity: T.Granularity, direct: boolean): Promise<Map<number, number>> {
  let query: Knex.QueryBuilder;
  if (direct) query = searchEvents(db, scope);
  else {
    query = db('analytics_events as e').where('e.dataset_id', scope.datasetId).whereNull('e.request_id');
    whereRange(query, 'e.created_at', scope);
  }
  return perBucket(query.where('e.event_type', 'purchase').select(byEventBucket(db, granularity), db.raw('coalesce(sum(e.revenue), 0)::float8 as value')));
}

/** How many users sent any event in the scope's date range, and how many sent each named event (no user id is one user). */
export async function usersByEvent(db: Knex, scope: Scope): Promise<{ allUsers: number; byName: { name: string; users: number }[] }> {
  if (scope.from === undefined && scope.to === undefined) {
    const [all] = await db('analytics_event_any_users').where('dataset_id', scope.datasetId).count({ users: '*' });
    const byName: { name: string; users: number }[] = await db('analytics_event_users')
      .where('dataset_id', scope.datasetId)
      .select('event_name as name', db.raw('count(*)::float8 as users'))
      .groupBy('name_key', 'event_name');
    return { allUsers: Number(all.users), byName: byName.map((r) => ({ name: r.name, users: Number(r.users) })) };
  }
  const events = db('analytics_events as e').where('e.dataset_id', scope.datasetId);
  whereRange(events, 'e.created_at', scope);
  const rows: { name: string | null; users: number }[] = await events
    .select('e.event_name as name', db.raw(`count(distinct coalesce(e.user_id, ''))::float8 as users`))
    .groupByRaw('grouping sets ((e.event_name), ())');
  const all = rows.find((r) => r.name === null);
  return {
    allUsers: Number(all?.users ?? 0),
    byName: rows.filter((r) => r.name !== null).map((r) => ({ name: r.name as string, users: Number(r.users) })),
  };
}

export interface ResultChunk {
  id: string;
  tracking_id: string | null;
  link: string | null;
  metadata: unknown;
  chunk_html: string | null;
}

/** The dataset's chunks of these ids (those not deleted). */
export async function chunksByIds(db: Knex, datasetId: string, ids: string[]): Promise<Map<string, ResultChunk>> {
  if (ids.length === 0) return new Map();
  const rows: ResultChunk[] = await db('chunks')
    .where('dataset_id', datasetId)
    .whereIn('id', [...new Set(ids)])
    .select('id', 'tracking_id', 'link', 'metadata', 'chunk_html');
  return new Map(rows.map((r) => [r.id, r]));
}
