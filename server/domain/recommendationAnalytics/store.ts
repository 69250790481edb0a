// The SQL of recommendation analytics: the recorded recommendations (recommendation_queries,
// migration 010) and what users did about them (analytics_events, migration 030). Every read is of
// one dataset.
import type { Knex } from 'knex';
import type * as T from '../../../sdk/src/generated/types.gen.js';
import type { NumberBounds } from '../analyticsEvents/filters.js';
import type { Bound } from '../dateRange.js';
import type { RecommendationScope } from './scope.js';

export const PAGE_SIZE = 10;

export interface RecommendationRow {
  id: string;
  dataset_id: string;
  recommendation_type: 'Chunk' | 'Group';
  positive_ids: string[];
  negative_ids: string[];
  positive_tracking_ids: string[];
  negative_tracking_ids: string[];
  request_params: unknown;
  results: unknown[];
  top_score: number;
  user_id: string | null;
  metadata: unknown;
  created_at: Date;
}

const COLUMNS = [
  'id',
  'dataset_id',
  'recommendation_type',
  'positive_ids',
  'negative_ids',
  'positive_tracking_ids',
  'negative_tracking_ids',
  'request_params',
  'results',
  'top_score',
  'user_id',
  'metadata',
  'created_at',
];

const COMPARE = { gt: '>', gte: '>=', lt: '<', lte: '<=' } as const;

function whereRange(query: Knex.QueryBuilder, column: string, range: { from?: Bound<Date>; to?: Bound<Date> }): void {
  if (range.from) query.where(column, range.from.inclusive ? '>=' : '>', range.from.value);
  if (range.to) query.where(column, range.to.inclusive ? '<=' : '<', range.to.value);
}

function whereBounds(query: Knex.QueryBuilder, column: string, bounds: NumberBounds | undefined): void {
  for (const key of ['gt', 'gte', 'lt', 'lte'] as const) {
    const value = bounds?.[key];
    if (value !== undefined) query.where(column, COMPARE[key], value);
  }
}

/**
 * The dataset's recommendations of the scope, as `alias` (with `range` instead of the scope's own,
 * when given). The CTR reports on recommendations read them through this too.
 */
export function scopedRecommendations(
  db: Knex,
  datasetId: string,
  scope: RecommendationScope,
  alias = 'r',
  range: { from?: Bound<Date>; to?: Bound<Date> } = scope,
): Knex.QueryBuilder {
  const query = db(`recommendation_queries as ${alias}`).where(`${alias}.dataset_id`, datasetId);
  whereRange(query, `${alias}.created_at`, range);
  if (scope.type !== undefined) query.where(`${alias}.recommendation_type`, scope.type);
  whereBounds(query, `${alias}.top_score`, scope.topScore);
  if (scope.componentName !== undefined) {
    query.whereRaw(`${alias}.request_params #>> '{metadata,component_props,componentName}' = ?`, [scope.componentName]);
  }
  return query;
}

const bucketOf = (db: Knex, column: string, granularity: T.Granularity) => db.raw(`date_trunc(?, ${column}, 'UTC') as bucket`, [granularity]);

async function perBucket(query: Knex.QueryBuilder): Promise<Map<number, number>> {
  const rows: { bucket: Date; value: number }[] = await query.groupBy('bucket');
  return new Map(rows.map((r) => [r.bucket.getTime(), Number(r.value)]));
}

/** The scope's recommendations per bucket, keyed by the bucket's start (ms). */
export function countsByBucket(db: Knex, datasetId: string, scope: RecommendationScope, granularity: T.Granularity): Promise<Map<number, number>> {
  return perBucket(scopedRecommendations(db, datasetId, scope).select(bucketOf(db, 'r.created_at', granularity), db.raw('count(*)::float8 as value')));
}

/** Per bucket, the scope's recommendations and how many users asked for them (no user id counts as one). */
export async function usersByBucket(
  db: Knex,
  datasetId: string,
  scope: RecommendationScope,
  granularity: T.Granularity,
): Promise<Map<number, { recommendations: number; users: number }>> {
  // Each bucket's users counted by grouping on (bucket, user) first: a hash aggregate, where
  // count(distinct) sorts every bucket's rows.
  const perUser = scopedRecommendations(db, datasetId, scope)
    .select(bucketOf(db, 'r.created_at', granularity), db.raw('count(*) as recommendations'))
    .groupBy('bucket', db.raw(`coalesce(r.user_id, '')`));
  const rows: { bucket: Date; recommendations: number; users: number }[] = await db
    .from(perUser.as('u'))
    .select('bucket', db.raw('sum(recommendations)::float8 as recommendations'), db.raw('count(*)::float8 as users'))
    .groupBy('bucket');
  return new Map(rows.map((r) => [r.bucket.getTime(), { recommendations: Number(r.recommendations), users: Number(r.users) }]));
}

/** How many users asked for the scope's recommendations (no user id counts as one). */
export async function userCount(db: Knex, datasetId: string, scope: RecommendationScope): Promise<number> {
  const users = scopedRecommendations(db, datasetId, scope).distinct(db.raw(`coalesce(r.user_id, '') as user_id`));
  const [row] = await db.from(users.as('users')).count({ users: '*' });
  return Number(row.users);
}

/** Whether the scope narrows recommendations by more than their time. */
const narrowsRecommendations = (scope: RecommendationScope) => [scope.type, scope.topScore, scope.componentName].some((condition) => condition !== undefined);

/**
 * The dataset's events about its recommendations made in the scope's date range (the event's time),
 * and about recommendations the scope's other conditions keep.
 */
function recommendationEvents(db: Knex, datasetId: string, scope: RecommendationScope): Knex.QueryBuilder {
  const query = db('analytics_events as e').where('e.dataset_id', datasetId).where('e.request_type', 'recommendation');
  whereRange(query, 'e.created_at', scope);
  if (narrowsRecommendations(scope)) query.whereIn('e.request_id', scopedRecommendations(db, datasetId, scope, 'r', {}).select('r.id'));
  return query;
}

/** Clicks on the results of the scope's recommendations, per bucket of the click's time. */
export function clicksByBucket(db: Knex, datasetId: string, scope: RecommendationScope, granularity: T.Granularity): Promise<Map<number, number>> {
  return perBucket(
    recommendationEvents(db, datasetId, scope)
      .where('e.event_type', 'click')
      .select(bucketOf(db, 'e.created_at', granularity), db.raw('count(*)::float8 as value')),
  );
}

/** Events about the scope's recommendations that count as conversions, per bucket of the event's time. */
export function conversionsByBucket(db: Knex, datasetId: string, scope: RecommendationScope, granularity: T.Granularity): Promise<Map<number, number>> {
  return perBucket(
    recommendationEvents(db, datasetId, scope)
      .where('e.is_conversion', true)
      .select(bucketOf(db, 'e.created_at', granularity), db.raw('count(*)::float8 as value')),
  );
}

export interface RecommendationPage {
  page: number;
  sortBy: T.RecommendationSortBy;
  order: T.SortOrder;
  /** Only recommendations scoring below this. */
  scoreBelow?: number;
  /** Only recommendations with clicks (true) or without (false). */
  clicked?: boolean;
}

/** A page of the scope's recommendations in the order asked, ties newest first. */
export async function recommendationPage(db: Knex, datasetId: string, scope: RecommendationScope, page: RecommendationPage): Promise<RecommendationRow[]> {
  const query = scopedRecommendations(db, datasetId, scope).select(COLUMNS.map((c) => `r.${c}`));
  if (page.scoreBelow !== undefined) query.where('r.top_score', '<', page.scoreBelow);
  if (page.clicked !== undefined) {
    const clicks = (q: Knex.QueryBuilder) =>
      q
        .select(db.raw('1'))
        .from('analytics_events as e')
        .whereRaw(`e.request_id = r.id and e.dataset_id = r.dataset_id and e.event_type = 'click' and e.request_type = 'recommendation'`);
    if (page.clicked) query.whereExists(clicks);
    else query.whereNotExists(clicks);
  }
  const order = [{ column: `r.${page.sortBy}`, order: page.order }];
  if (page.sortBy !== 'created_at') order.push({ column: 'r.created_at', order: 'desc' });
  return query
    .orderBy([...order, { column: 'r.id', order: 'asc' }])
    .limit(PAGE_SIZE)
    .offset((page.page - 1) * PAGE_SIZE);
}

export async function recommendationById(db: Knex, datasetId: string, id: string): Promise<RecommendationRow | undefined> {
  return db('recommendation_queries').where({ dataset_id: datasetId, id }).first(COLUMNS);
}
