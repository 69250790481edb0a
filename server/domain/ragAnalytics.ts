// RAG analytics: reports over the dataset's recorded RAG queries.
import type { Knex } from 'knex';
import type * as T from '../../sdk/src/generated/types.gen.js';
import { timestamp } from '../format.js';
import { dateBounds } from './dateRange.js';

const PAGE_SIZE = 10;

interface RagQueryRow {
  id: string;
  dataset_id: string;
  search_id: string;
  topic_id: string;
  user_id: string;
  rag_type: T.RagTypes;
  user_message: string;
  llm_response: string;
  results: unknown[];
  top_score: number;
  hallucination_score: number;
  detected_hallucinations: string[];
  metadata: unknown;
  query_rating: number | null;
  query_rating_note: string | null;
  query_rating_metadata: unknown;
  created_at: Date;
}

export async function ragQueries(db: Knex, datasetId: string, request: T.RagAnalytics): Promise<T.RagQueryResponse> {
  const query = db<RagQueryRow>('rag_queries').where({ dataset_id: datasetId });
  const filter = request.filter;
  if (filter?.component_name != null) query.where('component_name', filter.component_name);
  if (filter?.rag_type != null) query.where('rag_type', filter.rag_type);
  if (filter?.query != null) query.whereILike('user_message', `%${escapeLike(filter.query)}%`);
  const { from, to } = dateBounds(filter?.date_range, 'filter.date_range');
  if (from) query.where('created_at', from.inclusive ? '>=' : '>', from.value);
  if (to) query.where('created_at', to.inclusive ? '<=' : '<', to.value);
  applyBounds(query, 'query_rating', filter?.query_rating, (v) => v);
  if (request.has_clicks != null) query.where('has_clicks', request.has_clicks);

  const page = Math.max(request.page ?? 1, 1);
  const rows = await query
    .orderBy([
      { column: request.sort_by ?? 'created_at', order: request.sort_order ?? 'desc' },
      { column: 'id', order: 'asc' },
    ])
    .limit(PAGE_SIZE)
    .offset((page - 1) * PAGE_SIZE);
  return { queries: rows.map(ragQueryRecord) };
}

type Bounds<V> = { gt?: V | null; gte?: V | null; lt?: V | null; lte?: V | null } | null | undefined;
const operators = { gt: '>', gte: '>=', lt: '<', lte: '<=' } as const;

function applyBounds<V, S>(query: Knex.QueryBuilder, column: string, bounds: Bounds<V>, convert: (v: V, bound: string) => S): void {
  for (const [bound, operator] of Object.entries(operators)) {
    const value = bounds?.[bound as keyof typeof operators];
    if (value != null) query.where(column, operator, convert(value, bound) as never);
  }
}

function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

function ragQueryRecord(row: RagQueryRow): T.RagQueryEvent {
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
