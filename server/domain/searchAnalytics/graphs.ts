// The search analytics reports that are graphs over time: one point per bucket, every bucket of the
// span present (0 where there was nothing to count).
import type { Knex } from 'knex';
import type * as T from '../../../sdk/src/generated/types.gen.js';
import { filled, mean, spanOf } from './buckets.js';
import type { Scope } from './scope.js';
import * as store from './store.js';

export async function latencyGraph(db: Knex, scope: Scope, granularity: T.Granularity): Promise<T.LatencyGraphResponse> {
  const sums = await store.sumsByBucket(db, scope, granularity);
  const latency = new Map([...sums].map(([at, s]) => [at, s.searches > 0 ? s.latencySum / s.searches : 0]));
  return { points: filled(spanOf(scope, granularity, sums), latency, granularity, 0) };
}

export async function searchUsageGraph(db: Knex, scope: Scope, granularity: T.Granularity): Promise<T.SearchUsageGraphResponse> {
  const sums = await store.sumsByBucket(db, scope, granularity);
  const counts = new Map([...sums].map(([at, s]) => [at, s.searches]));
  return {
    total_searches: [...counts.values()].reduce((a, b) => a + b, 0),
    points: filled(spanOf(scope, granularity, sums), counts, granularity, 0),
  };
}

export async function searchesPerUser(db: Knex, scope: Scope, granularity: T.Granularity): Promise<T.SearchesPerUserResponse> {
  const byBucket = await store.usersByBucket(db, scope, granularity);
  const perUser = new Map([...byBucket].map(([at, b]) => [at, b.searches / b.users]));
  return {
    avg_searches_per_user: mean([...perUser.values()]),
    points: filled(spanOf(scope, granularity, perUser), perUser, granularity, 0),
  };
}

export async function searchAverageRating(db: Knex, scope: Scope, granularity: T.Granularity): Promise<T.SearchAverageRatingResponse> {
  const ratings = await store.ratingByBucket(db, scope, granularity);
  return {
    avg_search_rating: mean([...ratings.values()]),
    points: filled(spanOf(scope, granularity, ratings), ratings, granularity, 0),
  };
}

export async function ctrMetricsOverTime(db: Knex, scope: Scope, granularity: T.Granularity): Promise<T.CtrMetricsOverTimeResponse> {
  const [sums, clicks] = await Promise.all([store.sumsByBucket(db, scope, granularity), store.clicksByBucket(db, scope, granularity)]);
  const rates = new Map([...sums].filter(([, s]) => s.searches > 0).map(([at, s]) => [at, (clicks.get(at) ?? 0) / s.searches]));
  return {
    total_ctr: mean([...rates.values()]),
    points: filled(spanOf(scope, granularity, sums, clicks), rates, granularity, 0),
  };
}

export async function searchConversionRate(db: Knex, scope: Scope, granularity: T.Granularity): Promise<T.SearchConversionRateResponse> {
  const [sums, conversions] = await Promise.all([store.sumsByBucket(db, scope, granularity), store.conversionsByBucket(db, scope, granularity)]);
  const rates = new Map([...sums].filter(([, s]) => s.searches > 0).map(([at, s]) => [at, (conversions.get(at) ?? 0) / s.searches]));
  const searches = [...sums.values()].reduce((a, s) => a + s.searches, 0);
  const converted = [...conversions.values()].reduce((a, b) => a + b, 0);
  return {
    conversion_rate: searches > 0 ? converted / searches : 0,
    points: filled(spanOf(scope, granularity, sums, conversions), rates, granularity, 0),
  };
}

export async function searchRevenue(db: Knex, scope: Scope, granularity: T.Granularity, direct: boolean): Promise<T.SearchRevenueResponse> {
  const revenue = await store.revenueByBucket(db, scope, granularity, direct);
  return {
    avg_revenue: mean([...revenue.values()]),
    points: filled(spanOf(scope, granularity, revenue), revenue, granularity, 0),
  };
}
