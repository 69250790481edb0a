// The search analytics reports that are figures over the whole scope: metrics, counts by type,
// popular filters, the event funnel.
import type { Knex } from 'knex';
import type * as T from '../../../sdk/src/generated/types.gen.js';
import { percentile } from './histogram.js';
import type { Scope } from './scope.js';
import * as store from './store.js';

/** Filters listed by popular_filters, and values listed per filter. */
const POPULAR_FILTERS = 10;
const COMMON_VALUES = 10;

/** A share of `total` as a percentage to two decimals (0 of nothing). */
const percentOf = (part: number, total: number) => (total > 0 ? Math.round((10_000 * part) / total) / 100 : 0);

export async function searchMetrics(db: Knex, scope: Scope): Promise<T.DatasetAnalytics> {
  const [totals, histogram, ratings] = await Promise.all([store.sums(db, scope), store.latencyHistogram(db, scope), store.ratingCounts(db, scope)]);
  return {
    total_queries: totals.searches,
    avg_latency: totals.searches > 0 ? totals.latencySum / totals.searches : 0,
    p50: percentile(histogram, 0.5),
    p95: percentile(histogram, 0.95),
    p99: percentile(histogram, 0.99),
    total_positive_ratings: percentOf(ratings.positive, totals.searches),
    total_negative_ratings: percentOf(ratings.negative, totals.searches),
  };
}

export async function countQueries(db: Knex, scope: Scope): Promise<T.QueryCountResponse> {
  const counts = await store.sumsByType(db, scope);
  return { total_queries: counts.map((c) => ({ search_type: c.kind, search_method: c.method, search_count: c.searches })) };
}

export async function popularFilters(db: Knex, scope: Scope): Promise<T.PopularFiltersResponse> {
  const uses = await store.filterUses(db, scope, POPULAR_FILTERS, COMMON_VALUES);
  return {
    popular_filters: uses.map((use) => ({
      clause: use.clause,
      field: use.field,
      filter_type: use.filterType,
      count: use.count,
      common_values: Object.fromEntries(use.values.map((v) => [v.value, v.count])),
    })),
  };
}

export async function eventFunnel(db: Knex, scope: Scope): Promise<T.EventNameAndCountsResponse> {
  // As the reference: the events are counted in the date range, whatever else the filter says.
  const [searched, sent] = await Promise.all([store.userCount(db, scope), store.usersByEvent(db, scope)]);
  const counts = [
    { event_name: 'searched', event_count: searched },
    { event_name: 'all_users', event_count: sent.allUsers },
    ...sent.byName.map((e) => ({ event_name: e.name, event_count: e.users })),
  ];
  return { event_names: counts.sort((a, b) => b.event_count - a.event_count || a.event_name.localeCompare(b.event_name)) };
}
