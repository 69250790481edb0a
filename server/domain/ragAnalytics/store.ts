// The SQL of RAG analytics: the recorded RAG queries (rag_queries), the topics they belong to
// (topics, by topic_id), and what users did about them (analytics_events with request_type 'rag',
// migration 030). Every read is of one dataset; indexes: migration 031.
import type { Knex } from 'knex';
import type * as T from '../../../sdk/src/generated/types.gen.js';
import type { NumberBounds } from '../analyticsEvents/filters.js';
import { type EventRow, type EventScope, whereEvents } from '../analyticsEvents/store.js';
import { narrowsQueries, type RagScope, type TimeRange, type TopicScope } from './scope.js';

export const PAGE_SIZE = 10;

export interface RagQueryRow {
  id: string;
  dataset_id: string;
  search_id: string;
  topic_id: string;
  user_id: string;
  rag_type: T.RagTypes;
  user_message: string;
  llm_response: string;
  results: unknown[];
  top_score: number;
  hallucination_score: number;
  detected_hallucinations: string[];
  metadata: unknown;
  query_rating: number | null;
  query_rating_note: string | null;
  query_rating_metadata: unknown;
  created_at: Date;
}

const RAG_COLUMNS = [
  'id',
  'dataset_id',
  'search_id',
  'topic_id',
  'user_id',
  'rag_type',
  'user_message',
  'llm_response',
  'results',
  'top_score',
  'hallucination_score',
  'detected_hallucinations',
  'metadata',
  'query_rating',
  'query_rating_note',
  'query_rating_metadata',
  'created_at',
].map((c) => `r.${c}`);

/** Granularities as date_trunc's field names (the contract's enum, spelled out rather than interpolated). */
const TRUNCATE: Record<T.Granularity, string> = { second: 'second', minute: 'minute', hour: 'hour', day: 'day', month: 'month' };
const COMPARE = { gt: '>', gte: '>=', lt: '<', lte: '<=' } as const;

function whereBounds(query: Knex.QueryBuilder, column: string, bounds: NumberBounds | undefined): void {
  for (const key of ['gt', 'gte', 'lt', 'lte'] as const) {
    const value = bounds?.[key];
    if (value !== undefined) query.where(column, COMPARE[key], value);
  }
}

function whereRange(query: Knex.QueryBuilder, column: string, range: TimeRange): void {
  if (range.from) query.where(column, range.from.inclusive ? '>=' : '>', range.from.value);
  if (range.to) query.where(column, range.to.inclusive ? '<=' : '<', range.to.value);
}

const containing = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
/** The start of a row's bucket (on the UTC wall clock: date_trunc with a zone costs about twice as much per row). */
const bucketOf = (db: Knex, column: string, granularity: T.Granularity) =>
  db.raw(`date_trunc(?, ${column} at time zone 'UTC') at time zone 'UTC' as bucket`, [TRUNCATE[granularity]]);

async function perBucket(query: Knex.QueryBuilder): Promise<Map<number, number>> {
  const rows: { bucket: Date; value: number }[] = await query.groupBy('bucket');
  return new Map(rows.map((r) => [r.bucket.getTime(), Number(r.value)]));
}

// ---- RAG queries ----

/** The RAG queries of the scope, as `r` (with `range` instead of the scope's own, when given). */
function ragQueries(db: Knex, scope: RagScope, range: TimeRange = scope): Knex.QueryBuilder {
  const query = db('rag_queries as r').where('r.dataset_id', scope.datasetId);
  whereRange(query, 'r.created_at', range);
  if (scope.ragType !== undefined) query.where('r.rag_type', scope.ragType);
  if (scope.componentName !== undefined) query.where('r.component_name', scope.componentName);
  if (scope.query !== undefined) query.whereILike('r.user_message', containing(scope.query));
  whereBounds(query, 'r.query_rating', scope.rating);
  return query;
}

export interface QueryPage {
  offset: number;
  sortBy: T.RagSortBy;
  order: 'asc' | 'desc';
  /** Only queries with clicks (true) or without (false). */
  clicked?: boolean;
}

/** A page of the scope's RAG queries in the order asked, ties newest first. */
export async function queryPage(db: Knex, scope: RagScope, page: QueryPage): Promise<RagQueryRow[]> {
  const query = ragQueries(db, scope).select(RAG_COLUMNS);
  if (page.clicked !== undefined) query.where('r.has_clicks', page.clicked);
  const order = [{ column: `r.${page.sortBy}`, order: page.order }];
  if (page.sortBy !== 'created_at') order.push({ column: 'r.created_at', order: 'desc' });
  return query
    .orderBy([...order, { column: 'r.id', order: 'asc' }])
    .limit(PAGE_SIZE)
    .offset(page.offset);
}

export async function queryById(db: Knex, datasetId: string, id: string): Promise<RagQueryRow | undefined> {
  return db('rag_queries as r').where({ 'r.dataset_id': datasetId, 'r.id': id }).first(RAG_COLUMNS);
}

export async function queryCount(db: Knex, scope: RagScope): Promise<number> {
  const [row] = await ragQueries(db, scope).count({ count: '*' });
  return Number(row.count);
}

export function queriesByBucket(db: Knex, scope: RagScope, granularity: T.Granularity): Promise<Map<number, number>> {
  return perBucket(ragQueries(db, scope).select(bucketOf(db, 'r.created_at', granularity), db.raw('count(*)::float8 as value')));
}

/** Per bucket, the scope's queries and how many users made them (no user id is one user). */
export async function usersByBucket(db: Knex, scope: RagScope, granularity: T.Granularity): Promise<Map<number, { queries: number; users: number }>> {
  const perUser = ragQueries(db, scope)
    .select(bucketOf(db, 'r.created_at', granularity), db.raw('count(*) as queries'))
    .groupBy('bucket', 'r.user_id');
  const rows: { bucket: Date; queries: number; users: number }[] = await db
    .from(perUser.as('per_user'))
    .select('bucket', db.raw('sum(queries)::float8 as queries'), db.raw('count(*)::float8 as users'))
    .groupBy('bucket');
  return new Map(rows.map((r) => [r.bucket.getTime(), { queries: Number(r.queries), users: Number(r.users) }]));
}

/** The average rating of the scope's rated queries per bucket. */
export function ratingByBucket(db: Knex, scope: RagScope, granularity: T.Granularity): Promise<Map<number, number>> {
  return perBucket(
    ragQueries(db, scope)
      .whereNotNull('r.query_rating')
      .select(bucketOf(db, 'r.created_at', granularity), db.raw('avg(r.query_rating)::float8 as value')),
  );
}

/** How many of the scope's queries are rated positive (1 or more) and negative (0 or less). */
export async function ratingCounts(db: Knex, scope: RagScope): Promise<{ positive: number; negative: number }> {
  const [row] = await ragQueries(db, scope)
    .whereNotNull('r.query_rating')
    .select(
      db.raw('count(*) filter (where r.query_rating >= 1)::float8 as positive'),
      db.raw('count(*) filter (where r.query_rating <= 0)::float8 as negative'),
    );
  return { positive: Number(row.positive), negative: Number(row.negative) };
}

// ---- events about RAG queries ----

/**
 * The dataset's events sent in the scope's date range (the event's time); when the scope narrows the
 * queries by more than time, only those about a query it keeps. As `e`.
 */
function scopedEvents(db: Knex, scope: RagScope): Knex.QueryBuilder {
  const query = db('analytics_events as e').where('e.dataset_id', scope.datasetId);
  whereRange(query, 'e.created_at', scope);
  if (narrowsQueries(scope)) query.where('e.request_type', 'rag').whereIn('e.request_id', ragQueries(db, scope, {}).select('r.id'));
  return query;
}

/** Clicks on the results of the scope's queries, per bucket of the click's time. */
export function clicksByBucket(db: Knex, scope: RagScope, granularity: T.Granularity): Promise<Map<number, number>> {
  return perBucket(
    scopedEvents(db, scope)
      .where({ 'e.event_type': 'click', 'e.request_type': 'rag' })
      .select(bucketOf(db, 'e.created_at', granularity), db.raw('count(*)::float8 as value')),
  );
}

/** The follow-up questions users chose (events `site-followup_query`), most chosen first. */
export async function followupQueries(db: Knex, scope: RagScope, offset: number): Promise<{ query: string; count: number }[]> {
  const rows: { query: string; count: number }[] = await scopedEvents(db, scope)
    .where('e.event_name', 'site-followup_query')
    .whereRaw(`coalesce(e.metadata->>'followup_query', '') <> ''`)
    .select(db.raw(`e.metadata->>'followup_query' as query`), db.raw('count(*)::float8 as count'))
    .groupBy('query')
    .orderBy([{ column: 'count', order: 'desc' }, 'query'])
    .limit(PAGE_SIZE)
    .offset(offset);
  return rows.map((r) => ({ query: r.query, count: Number(r.count) }));
}

/**
 * Revenue of purchases per bucket of the purchase's time: of those about RAG queries (`direct`), or
 * of those about no request, narrowed by the event filter.
 */
export function revenueByBucket(db: Knex, datasetId: string, scope: EventScope, granularity: T.Granularity, direct: boolean): Promise<Map<number, number>> {
  const query = db('analytics_events as e').where({ 'e.dataset_id': datasetId, 'e.event_type': 'purchase' });
  if (direct) query.where('e.request_type', 'rag');
  else query.whereNull('e.request_id');
  whereEvents(query, 'e', scope);
  return perBucket(query.select(bucketOf(db, 'e.created_at', granularity), db.raw('coalesce(sum(e.revenue), 0)::float8 as value')));
}

/** The events about the RAG queries of a topic, oldest first. */
export async function topicEvents(db: Knex, datasetId: string, topicId: string): Promise<EventRow[]> {
  return db('analytics_events as e')
    .join('rag_queries as r', (on) => on.on('r.id', 'e.request_id').andOn('r.dataset_id', 'e.dataset_id'))
    .where({ 'e.dataset_id': datasetId, 'e.request_type': 'rag', 'r.topic_id': topicId })
    .select('e.*')
    .orderBy([{ column: 'e.created_at' }, { column: 'e.id' }]);
}

/** How many users sent any event in the range, and how many sent each named event (no user id is one user). */
export async function usersByEvent(db: Knex, datasetId: string, range: TimeRange): Promise<{ allUsers: number; byName: { name: string; users: number }[] }> {
  const events = db('analytics_events as e').where('e.dataset_id', datasetId);
  whereRange(events, 'e.created_at', range);
  const rows: { name: string | null; users: number }[] = await events
    .select('e.event_name as name', db.raw(`count(distinct coalesce(e.user_id, ''))::float8 as users`))
    .groupByRaw('grouping sets ((e.event_name), ())');
  return {
    allUsers: Number(rows.find((r) => r.name === null)?.users ?? 0),
    byName: rows.filter((r) => r.name !== null).map((r) => ({ name: r.name as string, users: Number(r.users) })),
  };
}

// ---- topics ----

export interface TopicRow {
  id: string;
  dataset_id: string;
  name: string;
  owner_id: string;
  metadata: unknown;
  created_at: Date;
  updated_at: Date;
}

export interface TopicSummaryRow extends Omit<TopicRow, 'dataset_id' | 'metadata'> {
  messages: number;
  top_score: number;
  hallucination_score: number;
  rating: number | null;
}

/**
 * Whether topic `t` has a RAG query (of the scope's kind) that an event meeting `condition` (on
 * `ev`) is about, as SQL with its bindings: the topics with such queries are found once (a hashed
 * set), not looked for per topic.
 */
function topicHasEvents(scope: TopicScope, condition: string): [string, Knex.RawBinding[]] {
  const ofType = scope.ragType === undefined ? '' : ' and q.rag_type = ?';
  return [
    `t.id in (select q.topic_id from analytics_events ev join rag_queries q on q.id = ev.request_id and q.dataset_id = ev.dataset_id
       where ev.dataset_id = ? and ev.request_type = 'rag'${ofType} and ${condition})`,
    scope.ragType === undefined ? [scope.datasetId] : [scope.datasetId, scope.ragType],
  ];
}

/** The summary columns of the topics' roll-up rows (as `s`). */
const summaryOf = (db: Knex) => [
  db.raw('sum(s.messages)::float8 as messages'),
  db.raw('(sum(s.top_score_sum) / sum(s.messages))::float8 as top_score'),
  db.raw('(sum(s.hallucination_score_sum) / sum(s.messages))::float8 as hallucination_score'),
  db.raw('(sum(s.rating_sum) / nullif(sum(s.rated), 0))::float8 as rating'),
];

/**
 * The topics of the scope, as `t` (id, name, owner_id, created_at, updated_at) with the summary of
 * their RAG queries as `m` (messages; top_score, hallucination_score and rating: averages), read
 * from their roll-up (rag_topic_stats, migration 031). The roll-up rows are summed all at once (a
 * hash join), but `perTopic` for a page in the topics' order, which reads only the topics it shows.
 */
function topics(db: Knex, scope: TopicScope, perTopic = false): Knex.QueryBuilder {
  const sums = db('rag_topic_stats as s').select(summaryOf(db));
  if (scope.ragType !== undefined) sums.where('s.rag_type', scope.ragType);
  if (perTopic) sums.whereRaw('s.dataset_id = t.dataset_id and s.topic_id = t.id');
  else {
    sums.where('s.dataset_id', scope.datasetId).select('s.topic_id').groupBy('s.topic_id');
    // Only the rows of the topics of the range, when it has one (a week of topics, not all of them).
    if (scope.from || scope.to) {
      const inRange = db('topics as r').where('r.dataset_id', scope.datasetId).select('r.id');
      whereRange(inRange, 'r.created_at', scope);
      sums.whereIn('s.topic_id', inRange);
    }
  }
  const query = db('topics as t');
  if (perTopic) query.crossJoin(db.raw('lateral (?) as m', [sums]));
  else query.join(sums.as('m'), 'm.topic_id', 't.id');
  query.where('t.dataset_id', scope.datasetId).whereRaw(`btrim(t.name) <> ''`).where('m.messages', '>', 0);
  whereRange(query, 't.created_at', scope);
  if (scope.componentName !== undefined) query.whereRaw(`t.metadata #>> '{component_props,componentName}' = ?`, [scope.componentName]);
  if (scope.name !== undefined) query.whereILike('t.name', containing(scope.name));
  whereBounds(query, 'm.rating', scope.rating);
  whereBounds(query, 'm.top_score', scope.topScore);
  whereBounds(query, 'm.hallucination_score', scope.hallucinationScore);
  if (scope.events) {
    const [sql, bindings] = topicHasEvents(scope, 'ev.event_name = any(?)');
    query.whereRaw(scope.events.inverted ? `not ${sql}` : sql, [...bindings, scope.events.names]);
  }
  return query;
}

const SUMMARY_COLUMNS = ['t.id', 't.name', 't.owner_id', 't.created_at', 't.updated_at', 'm.messages', 'm.top_score', 'm.hallucination_score', 'm.rating'];
const TOPIC_SORT: Record<T.RagSortBy, string> = { created_at: 't.created_at', top_score: 'm.top_score', hallucination_score: 'm.hallucination_score' };

/** A page of the scope's topics in the order asked, ties newest first. */
export async function topicPage(db: Knex, scope: TopicScope, page: QueryPage): Promise<TopicSummaryRow[]> {
  const order = [{ column: TOPIC_SORT[page.sortBy], order: page.order }];
  if (page.sortBy !== 'created_at') order.push({ column: 't.created_at', order: 'desc' });
  const averaged = scope.rating !== undefined || scope.topScore !== undefined || scope.hallucinationScore !== undefined;
  const rows: TopicSummaryRow[] = await topics(db, scope, page.sortBy === 'created_at' && !averaged)
    .select(SUMMARY_COLUMNS)
    .orderBy([...order, { column: 't.id', order: 'asc' }])
    .limit(PAGE_SIZE)
    .offset(page.offset);
  return rows.map((r) => ({ ...r, messages: Number(r.messages) }));
}

/** The names of the events about each topic's RAG queries (of the kind), each once, in order. */
export async function eventNamesOfTopics(db: Knex, datasetId: string, topicIds: string[], ragType?: T.RagTypes): Promise<Map<string, string[]>> {
  if (topicIds.length === 0) return new Map();
  const query = db('rag_queries as r')
    .join('analytics_events as e', (on) => on.on('e.request_id', 'r.id').andOn('e.dataset_id', 'r.dataset_id'))
    .where({ 'r.dataset_id': datasetId, 'e.request_type': 'rag' })
    .whereIn('r.topic_id', topicIds)
    .select('r.topic_id', db.raw('array_agg(distinct e.event_name order by e.event_name) as names'))
    .groupBy('r.topic_id');
  if (ragType !== undefined) query.where('r.rag_type', ragType);
  const rows: { topic_id: string; names: string[] }[] = await query;
  return new Map(rows.map((r) => [r.topic_id, r.names]));
}

/** The scope's topics created per bucket, and how many of them converted (a conversion event is about one of their queries). */
export async function topicsByBucket(db: Knex, scope: TopicScope, granularity: T.Granularity): Promise<Map<number, { topics: number; converted: number }>> {
  const [converted, bindings] = topicHasEvents(scope, 'ev.is_conversion');
  const rows: { bucket: Date; topics: number; converted: number }[] = await topics(db, scope)
    .select(
      bucketOf(db, 't.created_at', granularity),
      db.raw('count(*)::float8 as topics'),
      db.raw(`(count(*) filter (where ${converted}))::float8 as converted`, bindings),
    )
    .groupBy('bucket');
  return new Map(rows.map((r) => [r.bucket.getTime(), { topics: Number(r.topics), converted: Number(r.converted) }]));
}

/** The scope's topic names, each with how many topics have it, most first. */
export async function topicNames(db: Knex, scope: TopicScope, offset: number): Promise<{ name: string; count: number }[]> {
  const rows: { name: string; count: number }[] = await topics(db, scope)
    .select('t.name', db.raw('count(*)::float8 as count'))
    .groupBy('t.name')
    .orderBy([{ column: 'count', order: 'desc' }, 't.name'])
    .limit(PAGE_SIZE)
    .offset(offset);
  return rows.map((r) => ({ name: r.name, count: Number(r.count) }));
}

/** How many owners the scope's topics have. */
export async function topicOwners(db: Knex, scope: TopicScope): Promise<number> {
  const [row] = await topics(db, scope).countDistinct({ owners: 't.owner_id' });
  return Number(row.owners);
}

export async function topicById(db: Knex, datasetId: string, id: string): Promise<TopicRow | undefined> {
  return db('topics').where({ dataset_id: datasetId, id }).first('id', 'dataset_id', 'name', 'owner_id', 'metadata', 'created_at', 'updated_at');
}

/** A topic's RAG queries, oldest first. */
export async function topicQueries(db: Knex, datasetId: string, topicId: string): Promise<RagQueryRow[]> {
  return db('rag_queries as r')
    .where({ 'r.dataset_id': datasetId, 'r.topic_id': topicId })
    .select(RAG_COLUMNS)
    .orderBy([{ column: 'r.created_at' }, { column: 'r.id' }]);
}
