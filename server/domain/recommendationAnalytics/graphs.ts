// The recommendation analytics reports that are graphs over time: one point per bucket, every bucket
// of the span present (0 where there was nothing to count), as search analytics' graphs.
import type { Knex } from 'knex';
import type * as T from '../../../sdk/src/generated/types.gen.js';
import { filled, mean, spanOf } from '../searchAnalytics/buckets.js';
import type { RecommendationScope } from './scope.js';
import * as store from './store.js';

export async function usageGraph(
  db: Knex,
  datasetId: string,
  scope: RecommendationScope,
  granularity: T.Granularity,
): Promise<T.RecommendationUsageGraphResponse> {
  const counts = await store.countsByBucket(db, datasetId, scope, granularity);
  return {
    total_requests: [...counts.values()].reduce((a, b) => a + b, 0),
    points: filled(spanOf(scope, granularity, counts), counts, granularity, 0),
  };
}

export async function recommendationsPerUser(
  db: Knex,
  datasetId: string,
  scope: RecommendationScope,
  granularity: T.Granularity,
): Promise<T.RecommendationsPerUserResponse> {
  const byBucket = await store.usersByBucket(db, datasetId, scope, granularity);
  const perUser = new Map([...byBucket].map(([at, b]) => [at, b.recommendations / b.users]));
  return {
    avg_recommendations_per_user: mean([...perUser.values()]),
    points: filled(spanOf(scope, granularity, perUser), perUser, granularity, 0),
  };
}

export async function ctrRate(db: Knex, datasetId: string, scope: RecommendationScope, granularity: T.Granularity): Promise<T.RecommendationsCtrRateResponse> {
  const [counts, clicks] = await Promise.all([
    store.countsByBucket(db, datasetId, scope, granularity),
    store.clicksByBucket(db, datasetId, scope, granularity),
  ]);
  const rates = new Map([...counts].map(([at, n]) => [at, (clicks.get(at) ?? 0) / n]));
  return {
    total_ctr: mean([...rates.values()]),
    points: filled(spanOf(scope, granularity, counts, clicks), rates, granularity, 0),
  };
}

export async function conversionRate(
  db: Knex,
  datasetId: string,
  scope: RecommendationScope,
  granularity: T.Granularity,
): Promise<T.RecommendationsConversionRateResponse> {
  const [counts, conversions] = await Promise.all([
    store.countsByBucket(db, datasetId, scope, granularity),
    store.conversionsByBucket(db, datasetId, scope, granularity),
  ]);
  const rates = new Map([...counts].map(([at, n]) => [at, (conversions.get(at) ?? 0) / n]));
  const recommendations = [...counts.values()].reduce((a, b) => a + b, 0);
  const converted = [...conversions.values()].reduce((a, b) => a + b, 0);
  return {
    conversion_rate: recommendations > 0 ? converted / recommendations : 0,
    points: filled(spanOf(scope, granularity, counts, conversions), rates, granularity, 0),
  };
}
