// The record of each RAG call (rag_queries), which get_rag_analytics reports.
import type { Knex } from 'knex';

/** The id a RAG call has no search or topic under. */
const NONE = '00000000-0000-0000-0000-000000000000';

export interface RagRecord {
  id: string;
  datasetId: string;
  ragType: 'chosen_chunks' | 'all_chunks';
  searchId?: string;
  topicId?: string;
  userId: string | null | undefined;
  userMessage: string;
  llmResponse: string;
  results: unknown[];
  topScore: number;
  hallucinationScore: number;
  detectedHallucinations: string[];
  metadata: unknown;
}

export async function recordRagQuery(db: Knex, record: RagRecord): Promise<void> {
  await db('rag_queries').insert(ragQueryRow(record));
}

/** The rag_queries row of a record (also written by the analytics events that report RAG calls). */
export function ragQueryRow(record: RagRecord): Record<string, unknown> {
  return {
    id: record.id,
    dataset_id: record.datasetId,
    search_id: record.searchId ?? NONE,
    topic_id: record.topicId ?? NONE,
    user_id: record.userId ?? '',
    rag_type: record.ragType,
    user_message: record.userMessage,
    llm_response: record.llmResponse,
    results: JSON.stringify(record.results),
    top_score: record.topScore,
    hallucination_score: record.hallucinationScore,
    detected_hallucinations: record.detectedHallucinations,
    metadata: record.metadata === undefined || record.metadata === null ? null : JSON.stringify(record.metadata),
  };
}
