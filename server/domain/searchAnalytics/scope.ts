// Which searches a search analytics request counts: its filter checked and made concrete (instants
// for the date range, the kind and method of search, bounds on rating and top score). No I/O here.
import type * as T from '../../../sdk/src/generated/types.gen.js';
import { badRequest } from '../../errors.js';
import { type Bound, dateBounds } from '../dateRange.js';

export interface NumberBounds {
  gt?: number;
  gte?: number;
  lt?: number;
  lte?: number;
}

export interface Scope {
  datasetId: string;
  /** The searches made at or after (`inclusive`) or after this instant. */
  from?: Bound<Date>;
  /** The searches made at or before (`inclusive`) or before this instant. */
  to?: Bound<Date>;
  /** search, autocomplete, search_over_groups or search_within_groups (search_queries.kind). */
  kind?: string;
  /** fulltext, semantic, hybrid or bm25 (search_queries.search_method). */
  method?: string;
  rating?: NumberBounds;
  topScore?: NumberBounds;
  componentName?: string;
  /** Text the query contains, case-insensitively. */
  query?: string;
}

export function scopeOf(datasetId: string, filter: T.SearchAnalyticsFilter | null | undefined): Scope {
  const scope: Scope = { datasetId, ...dateBounds(filter?.date_range, 'filter.date_range') };
  if (filter?.search_type != null) scope.kind = filter.search_type;
  if (filter?.search_method != null) scope.method = filter.search_method;
  const rating = numberBounds(filter?.query_rating, 'filter.query_rating');
  if (rating) scope.rating = rating;
  const topScore = numberBounds(filter?.top_score, 'filter.top_score');
  if (topScore) scope.topScore = topScore;
  if (filter?.component_name != null) scope.componentName = filter.component_name;
  if (filter?.query != null && filter.query !== '') scope.query = filter.query;
  return scope;
}

/**
 * Whether the roll-ups (searches and latency per hour and per day, by kind and method) can answer
 * for this scope: they know nothing of ratings, scores, components or query texts.
 */
export function rolledUp(scope: Scope): boolean {
  return scope.rating === undefined && scope.topScore === undefined && scope.componentName === undefined && scope.query === undefined;
}

function numberBounds(
  range: { gt?: number | null; gte?: number | null; lt?: number | null; lte?: number | null } | null | undefined,
  field: string,
): NumberBounds | undefined {
  if (!range) return undefined;
  const bounds: NumberBounds = {};
  for (const key of ['gt', 'gte', 'lt', 'lte'] as const) {
    const value = range[key];
    if (value != null) bounds[key] = value;
  }
  const low = Math.max(bounds.gt ?? -Infinity, bounds.gte ?? -Infinity);
  const high = Math.min(bounds.lt ?? Infinity, bounds.lte ?? Infinity);
  if (low > high) throw badRequest(`${field}: the range starts (${low}) above where it ends (${high})`);
  return Object.keys(bounds).length ? bounds : undefined;
}

/**
 * Whether the scope is every search of the dataset: then the roll-ups of queries, users and filters
 * over the whole dataset (migration 033) answer.
 */
export function wholeDataset(scope: Scope): boolean {
  return scope.from === undefined && scope.to === undefined && scope.kind === undefined && scope.method === undefined && rolledUp(scope);
}
