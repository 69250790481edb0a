// The RAG analytics reports that are pages, figures or one record: of RAG queries, of topics, and
// the event funnel.
import type { Knex } from 'knex';
import type * as T from '../../../sdk/src/generated/types.gen.js';
import { notFound } from '../../errors.js';
import { eventRecord } from '../analyticsEvents/events.js';
import { offsetOf } from '../analyticsEvents/filters.js';
import { ragQueryRecord, topicRecord, topicSummary } from './records.js';
import type { RagScope, TopicScope } from './scope.js';
import * as store from './store.js';

// ---- RAG queries ----

export async function ragQueries(db: Knex, scope: RagScope, request: T.RagAnalyticsRagQueries): Promise<T.RagQueryResponse> {
  const rows = await store.queryPage(db, scope, {
    offset: offsetOf(request.page),
    sortBy: request.sort_by ?? 'created_at',
    order: request.sort_order ?? 'desc',
    ...(request.has_clicks != null && { clicked: request.has_clicks }),
  });
  return { queries: rows.map(ragQueryRecord) };
}

export async function ragUsage(db: Knex, scope: RagScope): Promise<T.RagUsageResponse> {
  return { total_queries: await store.queryCount(db, scope) };
}

export async function ragQueryDetails(db: Knex, datasetId: string, id: string): Promise<T.RagQueryEvent> {
  const row = await store.queryById(db, datasetId, id);
  if (!row) throw notFound(`RAG query ${id} not found`);
  return ragQueryRecord(row);
}

export async function ragQueryRatings(db: Knex, scope: RagScope): Promise<T.RagQueryRatingsResponse> {
  const counts = await store.ratingCounts(db, scope);
  return { total_positive_ratings: counts.positive, total_negative_ratings: counts.negative };
}

export async function followupQueries(db: Knex, scope: RagScope, page: number | null | undefined): Promise<T.FollowupQueriesResponse> {
  return { top_queries: await store.followupQueries(db, scope, offsetOf(page)) };
}

// ---- topics ----

export async function topicQueries(db: Knex, scope: TopicScope, request: T.RagAnalyticsTopicQueries): Promise<T.TopicQueriesResponse> {
  const rows = await store.topicPage(db, scope, {
    offset: offsetOf(request.page),
    sortBy: request.sort_by ?? 'created_at',
    order: request.sort_order ?? 'desc',
  });
  const names = await store.eventNamesOfTopics(
    db,
    scope.datasetId,
    rows.map((r) => r.id),
    scope.ragType,
  );
  return { topics: rows.map((row) => topicSummary(row, names.get(row.id) ?? [])) };
}

async function requireTopic(db: Knex, datasetId: string, topicId: string): Promise<store.TopicRow> {
  const topic = await store.topicById(db, datasetId, topicId);
  if (!topic) throw notFound(`topic ${topicId} not found`);
  return topic;
}

export async function topicDetails(db: Knex, datasetId: string, topicId: string): Promise<T.TopicDetailsResponse> {
  const topic = await requireTopic(db, datasetId, topicId);
  const messages = await store.topicQueries(db, datasetId, topicId);
  return { topic: topicRecord(topic), messages: messages.map(ragQueryRecord) };
}

export async function eventsForTopic(db: Knex, datasetId: string, topicId: string): Promise<T.EventsForTopicResponse> {
  await requireTopic(db, datasetId, topicId);
  return { events: (await store.topicEvents(db, datasetId, topicId)).map(eventRecord) };
}

export async function popularChats(db: Knex, scope: TopicScope, page: number | null | undefined): Promise<T.PopularChatsResponse> {
  return { chats: await store.topicNames(db, scope, offsetOf(page)) };
}

export async function eventFunnel(db: Knex, scope: TopicScope): Promise<T.EventNameAndCountsResponse> {
  const [started, sent] = await Promise.all([store.topicOwners(db, scope), store.usersByEvent(db, scope.datasetId, scope)]);
  const counts = [
    { event_name: 'conversation_started', event_count: started },
    { event_name: 'all_users', event_count: sent.allUsers },
    ...sent.byName.map((e) => ({ event_name: e.name, event_count: e.users })),
  ];
  return { event_names: counts.sort((a, b) => b.event_count - a.event_count || a.event_name.localeCompare(b.event_name)) };
}
