// The search analytics reports that list searches or queries, ten a page, and the one that shows a
// single search.
import type { Knex } from 'knex';
import type * as T from '../../../sdk/src/generated/types.gen.js';
import { notFound } from '../../errors.js';
import { searchRecord } from './records.js';
import type { Scope } from './scope.js';
import * as store from './store.js';

/** Pages are numbered from 1; page 0 is the first too. */
export const pageOf = (page: number | null | undefined) => Math.max(page ?? 1, 1);

/** Search records of the rows, with the chunks they found (read in one go). */
async function records(db: Knex, datasetId: string, rows: store.SearchRow[]): Promise<T.SearchQueryEvent[]> {
  const chunks = await store.chunksByIds(
    db,
    datasetId,
    rows.flatMap((r) => r.results),
  );
  return rows.map((row) => searchRecord(row, chunks));
}

export async function headQueries(db: Knex, scope: Scope, page: number): Promise<T.HeadQueryResponse> {
  return { queries: await store.headQueries(db, scope, page) };
}

export async function lowConfidenceQueries(db: Knex, scope: Scope, page: number, threshold: number | null | undefined): Promise<T.SearchQueryResponse> {
  const rows = await store.searchPage(db, scope, { page, sortBy: 'top_score', order: 'asc', ...(threshold != null && { scoreBelow: threshold }) });
  return { queries: await records(db, scope.datasetId, rows) };
}

export async function noResultQueries(db: Knex, scope: Scope, page: number): Promise<T.SearchQueryResponse> {
  const rows = await store.searchPage(db, scope, { page, sortBy: 'created_at', order: 'desc', noResults: true });
  return { queries: await records(db, scope.datasetId, rows) };
}

const SORT_COLUMNS: Record<T.SearchSortBy, store.SearchPage['sortBy']> = { created_at: 'created_at', latency: 'latency_ms', top_score: 'top_score' };

export async function searchQueries(db: Knex, scope: Scope, request: T.SearchAnalyticsSearchQueries): Promise<T.SearchQueryResponse> {
  const rows = await store.searchPage(db, scope, {
    page: pageOf(request.page),
    sortBy: SORT_COLUMNS[request.sort_by ?? 'created_at'],
    order: request.sort_order ?? 'desc',
    ...(request.has_clicks != null && { clicked: request.has_clicks }),
  });
  return { queries: await records(db, scope.datasetId, rows) };
}

/** One search of the dataset. */
export async function queryDetails(db: Knex, datasetId: string, id: string): Promise<T.SearchQueryEvent> {
  const row = await store.searchById(db, datasetId, id);
  if (!row) throw notFound(`search ${id} not found`);
  const [record] = await records(db, datasetId, [row]);
  return record;
}
