// RAG analytics (POST /api/analytics/rag): the report a request's `type` names, over the dataset's
// RAG queries, topics and the events about them; and the rating of a RAG query (PUT).
import type * as T from '../../../sdk/src/generated/types.gen.js';
import { eventScopeOf } from '../analyticsEvents/events.js';
import { rateRecord } from '../ratings.js';
import { granularityOf } from '../searchAnalytics/buckets.js';
import type { AnalyticsStore } from '../searchAnalytics/index.js';
import * as graphs from './graphs.js';
import * as reports from './reports.js';
import { ragScopeOf, topicScopeOf } from './scope.js';

export async function ragAnalytics(at: AnalyticsStore, datasetId: string, request: T.RagAnalytics): Promise<T.RagAnalyticsResponse> {
  const { db } = at;
  // RAG queries and events are recorded just after their answers: those made a moment ago count too.
  await at.pending();
  switch (request.type) {
    case 'rag_queries':
      return reports.ragQueries(db, ragScopeOf(datasetId, request.filter), request);
    case 'rag_usage':
      return reports.ragUsage(db, ragScopeOf(datasetId, request.filter));
    case 'rag_usage_graph':
      return graphs.ragUsageGraph(db, ragScopeOf(datasetId, request.filter), granularityOf(request.granularity));
    case 'rag_query_details':
      return reports.ragQueryDetails(db, datasetId, request.request_id);
    case 'rag_query_ratings':
      return reports.ragQueryRatings(db, ragScopeOf(datasetId, request.filter));
    case 'followup_queries':
      return reports.followupQueries(db, ragScopeOf(datasetId, request.filter), request.page);
    case 'ctr_metrics_over_time':
      return graphs.ctrMetricsOverTime(db, ragScopeOf(datasetId, request.filter), granularityOf(request.granularity));
    case 'messages_per_user':
      return graphs.messagesPerUser(db, ragScopeOf(datasetId, request.filter), granularityOf(request.granularity));
    case 'chat_average_rating':
      return graphs.chatAverageRating(db, ragScopeOf(datasetId, request.filter), granularityOf(request.granularity));
    case 'topic_queries':
      return reports.topicQueries(db, topicScopeOf(datasetId, request.filter, request.topic_events_filter), request);
    case 'topic_details':
      return reports.topicDetails(db, datasetId, request.topic_id);
    case 'topics_over_time':
      return graphs.topicsOverTime(db, topicScopeOf(datasetId, request.filter), granularityOf(request.granularity));
    case 'chat_conversion_rate':
      return graphs.chatConversionRate(db, topicScopeOf(datasetId, request.filter), granularityOf(request.granularity));
    case 'event_funnel':
      return reports.eventFunnel(db, topicScopeOf(datasetId, request.filter));
    case 'events_for_topic':
      return reports.eventsForTopic(db, datasetId, request.topic_id);
    case 'popular_chats':
      return reports.popularChats(db, topicScopeOf(datasetId, request.filter), request.page);
    case 'chat_revenue':
      return graphs.chatRevenue(db, datasetId, eventScopeOf(request.filter), granularityOf(request.granularity), request.direct ?? false);
  }
}

/** Rates a RAG query of the dataset (again: replaces its rating); 404 when the dataset has no such query. */
export function rateRagQuery(at: AnalyticsStore, datasetId: string, request: T.RateQueryRequest): Promise<void> {
  return rateRecord(at, 'rag_queries', datasetId, request);
}
