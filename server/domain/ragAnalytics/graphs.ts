// The RAG analytics reports that are graphs over time: one point per bucket, every bucket of the
// span present (0 where there was nothing to count), as search analytics' graphs.
import type { Knex } from 'knex';
import type * as T from '../../../sdk/src/generated/types.gen.js';
import type { EventScope } from '../analyticsEvents/store.js';
import { filled, mean, spanOf } from '../searchAnalytics/buckets.js';
import type { RagScope, TopicScope } from './scope.js';
import * as store from './store.js';

const sum = (values: Iterable<number>) => [...values].reduce((a, b) => a + b, 0);

export async function ragUsageGraph(db: Knex, scope: RagScope, granularity: T.Granularity): Promise<T.RagUsageGraphResponse> {
  const counts = await store.queriesByBucket(db, scope, granularity);
  return { points: filled(spanOf(scope, granularity, counts), counts, granularity, 0) };
}

export async function ctrMetricsOverTime(db: Knex, scope: RagScope, granularity: T.Granularity): Promise<T.CtrMetricsOverTimeResponse> {
  const [queries, clicks] = await Promise.all([store.queriesByBucket(db, scope, granularity), store.clicksByBucket(db, scope, granularity)]);
  const rates = new Map([...queries].map(([at, n]) => [at, (clicks.get(at) ?? 0) / n]));
  return {
    total_ctr: mean([...rates.values()]),
    points: filled(spanOf(scope, granularity, queries, clicks), rates, granularity, 0),
  };
}

export async function messagesPerUser(db: Knex, scope: RagScope, granularity: T.Granularity): Promise<T.MessagesPerUserResponse> {
  const byBucket = await store.usersByBucket(db, scope, granularity);
  const perUser = new Map([...byBucket].map(([at, b]) => [at, b.queries / b.users]));
  return {
    avg_messages_per_user: mean([...perUser.values()]),
    points: filled(spanOf(scope, granularity, perUser), perUser, granularity, 0),
  };
}

export async function chatAverageRating(db: Knex, scope: RagScope, granularity: T.Granularity): Promise<T.ChatAverageRatingResponse> {
  const ratings = await store.ratingByBucket(db, scope, granularity);
  return {
    avg_chat_rating: mean([...ratings.values()]),
    points: filled(spanOf(scope, granularity, ratings), ratings, granularity, 0),
  };
}

export async function topicsOverTime(db: Knex, scope: TopicScope, granularity: T.Granularity): Promise<T.TopicsOverTimeResponse> {
  const byBucket = await store.topicsByBucket(db, scope, granularity);
  const counts = new Map([...byBucket].map(([at, b]) => [at, b.topics]));
  return {
    total_topics: sum(counts.values()),
    points: filled(spanOf(scope, granularity, counts), counts, granularity, 0),
  };
}

export async function chatConversionRate(db: Knex, scope: TopicScope, granularity: T.Granularity): Promise<T.ChatConversionRateResponse> {
  const byBucket = await store.topicsByBucket(db, scope, granularity);
  const rates = new Map([...byBucket].map(([at, b]) => [at, b.converted / b.topics]));
  const topics = sum([...byBucket.values()].map((b) => b.topics));
  const converted = sum([...byBucket.values()].map((b) => b.converted));
  return {
    conversion_rate: topics > 0 ? converted / topics : 0,
    points: filled(spanOf(scope, granularity, rates), rates, granularity, 0),
  };
}

export async function chatRevenue(db: Knex, datasetId: string, scope: EventScope, granularity: T.Granularity, direct: boolean): Promise<T.ChatRevenueResponse> {
  const revenue = await store.revenueByBucket(db, datasetId, scope, granularity, direct);
  return {
    revenue: sum(revenue.values()),
    points: filled(spanOf(scope, granularity, revenue), revenue, granularity, 0),
  };
}
