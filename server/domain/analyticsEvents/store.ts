// Every SQL statement of analytics events and click-through: the records events are about, the
// events themselves, and the reports over them.
import type { Knex } from 'knex';
import { CHUNK_COLUMNS, type ChunkRow } from '../chunks/records.js';
import type { Bound } from '../dateRange.js';
import type { RecommendationScope } from '../recommendationAnalytics/scope.js';
import { scopedRecommendations } from '../recommendationAnalytics/store.js';
import type { Scope as SearchScope } from '../searchAnalytics/scope.js';
import type { MetadataMatch, NumberBounds } from './filters.js';
import { PAGE_SIZE } from './filters.js';

export interface TimeBounds {
  from?: Bound<Date>;
  to?: Bound<Date>;
}

export type RequestType = 'search' | 'rag' | 'recommendation';

const REQUEST_TABLES: Record<RequestType, string> = { search: 'search_queries', rag: 'rag_queries', recommendation: 'recommendation_queries' };

export interface EventRow {
  id: string;
  dataset_id: string;
  event_type: string;
  event_name: string;
  request_id: string | null;
  request_type: string | null;
  items: string[];
  clicked_chunk_id: string | null;
  position: number | null;
  revenue: number | null;
  location: string | null;
  metadata: unknown;
  user_id: string | null;
  is_conversion: boolean;
  created_at: Date;
  updated_at: Date;
}

export type NewEventRow = Omit<EventRow, 'created_at' | 'updated_at'>;

/** Whether the dataset has the search, RAG call or recommendation of this id. */
export async function hasRequest(db: Knex, datasetId: string, type: RequestType, id: string): Promise<boolean> {
  return (await db(REQUEST_TABLES[type]).where({ id, dataset_id: datasetId }).first('id')) !== undefined;
}

/** The id of the dataset's chunk with this id or tracking id. */
export async function chunkIdOf(db: Knex, datasetId: string, by: { id: string } | { tracking_id: string }): Promise<string | undefined> {
  return (
    await db('chunks')
      .where({ dataset_id: datasetId, ...by })
      .first('id')
  )?.id;
}

export async function chunksByIds(db: Knex, datasetId: string, ids: string[]): Promise<Map<string, ChunkRow>> {
  if (!ids.length) return new Map();
  const rows = await db<ChunkRow>('chunks')
    .select(...CHUNK_COLUMNS)
    .where({ dataset_id: datasetId })
    .whereIn('id', ids);
  return new Map(rows.map((row) => [row.id, row]));
}

// ---- events ----

export interface EventScope extends TimeBounds {
  eventType?: string;
  isConversion?: boolean;
  metadata?: MetadataMatch;
  userId?: string;
}

export async function eventById(db: Knex, datasetId: string, id: string): Promise<EventRow | undefined> {
  return db<EventRow>('analytics_events').where({ id, dataset_id: datasetId }).first();
}

export async function eventsPage(db: Knex, datasetId: string, scope: EventScope, offset: number): Promise<EventRow[]> {
  const query = db<EventRow>('analytics_events as e').where({ dataset_id: datasetId });
  whereEvents(query, 'e', scope);
  return query
    .orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id' }])
    .limit(PAGE_SIZE)
    .offset(offset);
}

/** Narrows a query of events (as `alias`) to those of the scope. */
export function whereEvents(query: Knex.QueryBuilder, alias: string, scope: EventScope): void {
  whereTime(query, `${alias}.created_at`, scope);
  if (scope.eventType !== undefined) query.where(`${alias}.event_type`, scope.eventType);
  if (scope.isConversion !== undefined) query.where(`${alias}.is_conversion`, scope.isConversion);
  if (scope.userId !== undefined) query.where(`${alias}.user_id`, scope.userId);
  if (scope.metadata) {
    const { path, value } = scope.metadata;
    const at = `${alias}.metadata #> ?::text[]`;
    if (value === null) query.whereRaw(`(${at} is null or ${at} = 'null'::jsonb)`, [path, path]);
    else query.whereRaw(`${at} = ?::jsonb`, [path, JSON.stringify(value)]);
  }
}

// ---- click-through ----

/** The searches of a search analytics scope (searchAnalytics/scope.ts), as `sq`. */
function searches(db: Knex, datasetId: string, scope: SearchScope): Knex.QueryBuilder {
  const query = db('search_queries as sq').where('sq.dataset_id', datasetId);
  whereTime(query, 'sq.created_at', scope);
  if (scope.kind !== undefined) query.where('sq.kind', scope.kind);
  if (scope.method !== undefined) query.where('sq.search_method', scope.method);
  whereNumbers(query, 'sq.query_rating', scope.rating);
  whereNumbers(query, 'sq.top_score', scope.topScore);
  if (scope.componentName !== undefined) query.whereRaw(`sq.request_params #>> '{metadata,component_props,componentName}' = ?`, [scope.componentName]);
  if (scope.query !== undefined) query.whereILike('sq.query', `%${scope.query.replace(/[\\%_]/g, (c) => `\\${c}`)}%`);
  return query;
}

const recommendations = (db: Knex, datasetId: string, scope: RecommendationScope) => scopedRecommendations(db, datasetId, scope, 'sq');

const REQUESTS = { search: searches, recommendation: recommendations } as const;
type Scoped = { search: SearchScope; recommendation: RecommendationScope };

export interface CtrFigures {
  requests: number;
  clicked: number;
  /** The mean position of the clicks on them; null without clicks. */
  averagePosition: number | null;
}

/** How many of the scope's searches or recommendations there are, how many were clicked, and where. */
export async function ctrFigures<K extends keyof Scoped>(db: Knex, type: K, datasetId: string, scope: Scoped[K]): Promise<CtrFigures> {
  const requests = REQUESTS[type](db, datasetId, scope as never).select('sq.id');
  const { rows } = await db.raw(
    `with r as (?),
       c as (select e.request_id, e.position from analytics_events e join r on r.id = e.request_id
             where e.event_type = 'click' and e.request_id is not null and e.request_type = ? and e.dataset_id = ?)
     select (select count(*) from r)::integer as requests,
            (select count(distinct request_id) from c)::integer as clicked,
            (select avg(position) from c)::double precision as average_position`,
    [requests, type, datasetId],
  );
  return { requests: rows[0].requests, clicked: rows[0].clicked, averagePosition: rows[0].average_position };
}

export interface ClickRow {
  event_id: string;
  request_id: string;
  position: number;
  clicked_chunk_id: string;
  created_at: Date;
  /** The search's query (searches). */
  query?: string;
  results: unknown[];
  positive_ids?: string[];
  negative_ids?: string[];
  positive_tracking_ids?: string[];
  negative_tracking_ids?: string[];
}

const RECOMMENDATION_COLUMNS = ['sq.positive_ids', 'sq.negative_ids', 'sq.positive_tracking_ids', 'sq.negative_tracking_ids'];

/** A page of the clicks (on a chunk still in the dataset) on the scope's searches or recommendations, newest first. */
export async function clicksPage<K extends keyof Scoped>(db: Knex, type: K, datasetId: string, scope: Scoped[K], offset: number): Promise<ClickRow[]> {
  return REQUESTS[type](db, datasetId, scope as never)
    .join('analytics_events as e', (on) => on.on('e.request_id', 'sq.id').andOn('e.dataset_id', 'sq.dataset_id'))
    .where({ 'e.event_type': 'click', 'e.request_type': type })
    .whereExists((chunk) => chunk.select(db.raw('1')).from('chunks as c').whereRaw('c.id = e.clicked_chunk_id and c.dataset_id = e.dataset_id'))
    .select('e.id as event_id', 'e.request_id', 'e.position', 'e.clicked_chunk_id', 'e.created_at', 'sq.results')
    .select(type === 'search' ? ['sq.query'] : RECOMMENDATION_COLUMNS)
    .orderBy([{ column: 'e.created_at', order: 'desc' }, { column: 'e.id' }])
    .limit(PAGE_SIZE)
    .offset(offset);
}

export interface UnclickedRow {
  id: string;
  created_at: Date;
  query?: string;
  positive_ids?: string[];
  negative_ids?: string[];
  positive_tracking_ids?: string[];
  negative_tracking_ids?: string[];
}

/** A page of the scope's searches or recommendations that nobody clicked, newest first. */
export async function unclickedPage<K extends keyof Scoped>(db: Knex, type: K, datasetId: string, scope: Scoped[K], offset: number): Promise<UnclickedRow[]> {
  return REQUESTS[type](db, datasetId, scope as never)
    .whereNotExists((click) =>
      click
        .select(db.raw('1'))
        .from('analytics_events as e')
        .whereRaw(`e.request_id = sq.id and e.dataset_id = sq.dataset_id and e.event_type = 'click' and e.request_type = ?`, [type]),
    )
    .select('sq.id', 'sq.created_at')
    .select(type === 'search' ? ['sq.query'] : RECOMMENDATION_COLUMNS)
    .orderBy([{ column: 'sq.created_at', order: 'desc' }, { column: 'sq.id' }])
    .limit(PAGE_SIZE)
    .offset(offset);
}

// ---- components ----

export interface ComponentScope extends TimeBounds {
  componentName?: string;
}

/** The dataset's events in the scope, those named `*_load` (components loading) left out. */
function componentEvents(db: Knex, datasetId: string, scope: ComponentScope): Knex.QueryBuilder {
  const query = db('analytics_events').where('dataset_id', datasetId).whereRaw(`right(event_name, 5) <> '_load'`);
  whereTime(query, 'created_at', scope);
  if (scope.componentName !== undefined) query.where('component_name', scope.componentName);
  return query;
}

/** Distinct users per bucket (start in ms), and over the whole scope. */
export async function uniqueUsers(
  db: Knex,
  datasetId: string,
  scope: ComponentScope,
  granularity: string,
): Promise<{ total: number; byBucket: Map<number, number> }> {
  // One scan: per bucket, and (the grouping set with no bucket) over the whole scope.
  const rows: { bucket: Date | null; users: number }[] = await componentEvents(db, datasetId, scope)
    .whereNotNull('user_id')
    .where('user_id', '<>', '')
    .select(db.raw(`date_trunc(?, created_at, 'UTC') as bucket`, [granularity]))
    .select(db.raw('count(distinct user_id)::integer as users'))
    .groupByRaw('grouping sets ((bucket), ())');
  const total = rows.find((row) => row.bucket === null) ?? { users: 0 };
  const buckets = rows.filter((row) => row.bucket !== null);
  return { total: total.users, byBucket: new Map(buckets.map((row) => [new Date(row.bucket!).getTime(), row.users])) };
}

export async function topPages(db: Knex, datasetId: string, scope: ComponentScope, offset: number): Promise<{ page: string; count: number }[]> {
  return componentEvents(db, datasetId, scope)
    .whereNotNull('location')
    .where('location', '<>', '')
    .select('location as page', db.raw('count(*)::integer as count'))
    .groupBy('location')
    .orderBy([{ column: 'count', order: 'desc' }, { column: 'page' }])
    .limit(PAGE_SIZE)
    .offset(offset);
}

export async function topComponents(
  db: Knex,
  datasetId: string,
  scope: ComponentScope,
  offset: number,
): Promise<{ component_name: string; count: number; cart_count: number; checkout_count: number }[]> {
  return componentEvents(db, datasetId, scope)
    .whereNotNull('component_name')
    .where('component_name', '<>', '')
    .select(
      'component_name',
      db.raw('count(*)::integer as count'),
      db.raw(`(count(*) filter (where event_name ilike '%cart%'))::integer as cart_count`),
      db.raw(`(count(*) filter (where event_name ilike '%checkout%'))::integer as checkout_count`),
    )
    .groupBy('component_name')
    .orderBy([{ column: 'count', order: 'desc' }, { column: 'component_name' }])
    .limit(PAGE_SIZE)
    .offset(offset);
}

export async function componentNames(db: Knex, datasetId: string, offset: number): Promise<string[]> {
  const rows = await db('analytics_events')
    .where('dataset_id', datasetId)
    .whereNotNull('component_name')
    .where('component_name', '<>', '')
    .distinct('component_name')
    .orderBy('component_name')
    .limit(PAGE_SIZE)
    .offset(offset);
  return rows.map((row: { component_name: string }) => row.component_name);
}

/**
 * Interaction sessions: a user's `component_open` and their first `component_close` after it (before
 * their next open). Per bucket of the open: the sessions and their mean length in seconds.
 */
export async function interactionTimes(
  db: Knex,
  datasetId: string,
  scope: ComponentScope,
  granularity: string,
): Promise<{ bucket: Date; seconds: number; sessions: number }[]> {
  const events = componentEvents(db, datasetId, scope)
    .whereIn('event_name', ['component_open', 'component_close'])
    .whereNotNull('user_id')
    .select(
      'user_id',
      'event_name',
      'created_at',
      db.raw(`count(*) filter (where event_name = 'component_open') over (partition by user_id order by created_at, id rows unbounded preceding) as session`),
    );
  const { rows } = await db.raw(
    `with ev as (?),
       s as (select min(created_at) filter (where event_name = 'component_open') as opened,
                    min(created_at) filter (where event_name = 'component_close') as closed
             from ev where session > 0 group by user_id, session)
     select date_trunc(?, opened, 'UTC') as bucket, avg(extract(epoch from closed - opened))::double precision as seconds,
            count(*)::integer as sessions
     from s where closed > opened group by 1`,
    [events, granularity],
  );
  return rows;
}

// ---- shared ----

const OPERATORS = { gt: '>', gte: '>=', lt: '<', lte: '<=' } as const;

function whereTime(query: Knex.QueryBuilder, column: string, bounds: TimeBounds): void {
  if (bounds.from) query.where(column, bounds.from.inclusive ? '>=' : '>', bounds.from.value);
  if (bounds.to) query.where(column, bounds.to.inclusive ? '<=' : '<', bounds.to.value);
}

function whereNumbers(query: Knex.QueryBuilder, column: string, bounds: NumberBounds | undefined): void {
  for (const [key, operator] of Object.entries(OPERATORS)) {
    const value = bounds?.[key as keyof NumberBounds];
    if (value !== undefined) query.where(column, operator, value);
  }
}
