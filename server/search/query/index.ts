// The query text(s) a search runs: one text or several weighted ones (`QueryTypes`), cleaned as the
// request asks (quotes and minus signs, stop words), typos corrected when asked; and their retrieval.
import type * as T from '../../../generated/client/types.gen.js';
import type { DatasetRow } from '../../domain/datasets.js';
import { badRequest } from '../../errors.js';
import type { Services } from '../../services.js';
import { plainQuery, withoutStopWords, type SearchPayload } from '../request.js';
import { retrieve } from '../retrieval/index.js';
import type { RetrievalRequest, RetrievalResult, SearchType } from '../types.js';

export interface WeightedQuery {
  text: string;
  weight: number;
}

export interface PreparedQueries {
  queries: WeightedQuery[];
  /** The query as corrected for typos, when a correction was made (else null). */
  correctedQuery: string | null;
}

export function queryText(query: T.QueryTypes | T.SearchModalities): string {
  if (typeof query === 'string') return query;
  if (Array.isArray(query)) throw badRequest('query: several weighted queries are not supported yet; send one text query');
  throw badRequest('query: only text queries are supported (no image or audio model is configured)');
}

/** The queries to run, cleaned as the payload asks. */
export async function prepareQueries(_services: Services, _dataset: DatasetRow, payload: SearchPayload): Promise<PreparedQueries> {
  if (payload.typo_options?.correct_typos) throw badRequest('typo_options.correct_typos: not supported by this version of the service yet');
  let text = queryText(payload.query);
  if (!payload.use_quote_negated_terms) text = plainQuery(text);
  if (payload.remove_stop_words) text = withoutStopWords(text);
  return { queries: [{ text, weight: 1 }], correctedQuery: null };
}

/** Retrieval for the queries: one query as is; several fused by their weights. */
export async function retrieveQueries(services: Services, type: SearchType, queries: WeightedQuery[], request: Omit<RetrievalRequest, 'query'>): Promise<RetrievalResult> {
  if (queries.length !== 1) throw badRequest('query: several weighted queries are not supported yet; send one text query');
  return retrieve(services, type, { ...request, query: queries[0].text });
}
