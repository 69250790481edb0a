// Rating a recorded query, a search or a RAG call (PUT /api/analytics/search and /rag): the same
// columns, and the same wait for records still queued, on both.
import type * as T from '../../sdk/src/generated/types.gen.js';
import { notFound } from '../errors.js';
import type { AnalyticsStore } from './searchAnalytics/index.js';

const RECORDS = { search_queries: 'search', rag_queries: 'RAG query' } as const;

/** Sets the record's rating (again: replaces it); 404 when the dataset has no such record. */
export async function rateRecord(at: AnalyticsStore, table: keyof typeof RECORDS, datasetId: string, request: T.RateQueryRequest): Promise<void> {
  const rate = async () =>
    (await at
      .db(table)
      .where({ dataset_id: datasetId, id: request.query_id })
      .update({
        query_rating: request.rating,
        query_rating_note: request.note ?? null,
        query_rating_metadata: request.metadata == null ? null : JSON.stringify(request.metadata),
      })) > 0;
  if (await rate()) return;
  // The record of a call answered a moment ago may still be queued.
  await at.pending();
  if (!(await rate())) throw notFound(`${RECORDS[table]} ${request.query_id} not found`);
}
