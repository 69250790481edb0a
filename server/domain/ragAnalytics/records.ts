// A recorded RAG query and a topic as the interface shows them. No I/O here.
import type * as T from '../../../sdk/src/generated/types.gen.js';
import { timestamp } from '../../format.js';
import type { RagQueryRow, TopicRow, TopicSummaryRow } from './store.js';

export function ragQueryRecord(row: RagQueryRow): T.RagQueryEvent {
  return {
    id: row.id,
    dataset_id: row.dataset_id,
    search_id: row.search_id,
    topic_id: row.topic_id,
    user_id: row.user_id,
    rag_type: row.rag_type,
    user_message: row.user_message,
    llm_response: row.llm_response,
    results: row.results,
    top_score: row.top_score,
    hallucination_score: row.hallucination_score,
    detected_hallucinations: row.detected_hallucinations,
    metadata: row.metadata ?? null,
    query_rating: row.query_rating == null ? null : { rating: row.query_rating, note: row.query_rating_note, metadata: row.query_rating_metadata ?? null },
    created_at: timestamp(row.created_at),
  };
}

export function topicRecord(row: TopicRow): T.TopicQuery {
  return {
    id: row.id,
    topic_id: row.id,
    dataset_id: row.dataset_id,
    name: row.name,
    owner_id: row.owner_id,
    metadata: row.metadata ?? null,
    created_at: timestamp(row.created_at),
    updated_at: timestamp(row.updated_at),
  };
}

export function topicSummary(row: TopicSummaryRow, eventNames: string[]): T.ClickhouseTopicAnalyticsSummary {
  return {
    id: row.id,
    topic_id: row.id,
    name: row.name,
    owner_id: row.owner_id,
    created_at: timestamp(row.created_at),
    updated_at: timestamp(row.updated_at),
    message_count: row.messages,
    avg_top_score: row.top_score,
    avg_hallucination_score: row.hallucination_score,
    avg_query_rating: row.rating,
    event_names: eventNames,
  };
}
