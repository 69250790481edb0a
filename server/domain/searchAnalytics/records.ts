// A recorded search as the interface shows it (SearchQueryEvent). No I/O here.
import type * as T from '../../../sdk/src/generated/types.gen.js';
import { timestamp } from '../../format.js';
import type { ResultChunk, SearchRow } from './store.js';

/** The kinds of the interface's record: a search within a group is a search. */
const RECORD_KINDS: Record<string, T.ClickhouseSearchTypes> = {
  search: 'search',
  search_within_groups: 'search',
  autocomplete: 'autocomplete',
  search_over_groups: 'search_over_groups',
  rag: 'rag',
};

export function searchRecord(row: SearchRow, chunks: Map<string, ResultChunk>): T.SearchQueryEvent {
  return {
    id: row.id,
    dataset_id: row.dataset_id,
    search_type: RECORD_KINDS[row.kind] ?? 'search',
    query: row.query,
    request_params: row.request_params,
    latency: Number(row.latency_ms),
    top_score: Number(row.top_score),
    results: row.results.map((id) => chunks.get(id) ?? { id }),
    user_id: row.user_id ?? '',
    created_at: timestamp(row.created_at),
    metadata: row.request_params.metadata ?? null,
    query_rating: row.query_rating === null ? null : { rating: row.query_rating, note: row.query_rating_note, metadata: row.query_rating_metadata ?? null },
  };
}
