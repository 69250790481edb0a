// A search request as the service runs it: the API key's forced parameters applied, the page size
// checked, and the text helpers of query cleaning.
import type * as T from '../../sdk/src/generated/types.gen.js';
import type { Caller } from '../auth/caller.js';
import { datasetConfig } from '../domain/datasetConfig.js';
import type { DatasetRow } from '../domain/datasets.js';
import { badRequest } from '../errors.js';

export type SearchPayload =
  | T.SearchChunksReqPayload
  | T.AutocompleteReqPayload
  | T.SearchWithinGroupReqPayload
  | T.SearchOverGroupsReqPayload
  | T.AutocompleteSearchOverGroupsReqPayload;

/** Fields of an API key's `default_params` that override the request's, whatever it says. */
const FORCED = [
  'search_type',
  'filters',
  'page_size',
  'score_threshold',
  'slim_chunks',
  'highlight_options',
  'typo_options',
  'remove_stop_words',
  'use_quote_negated_terms',
] as const;

export function withKeyDefaults<P extends SearchPayload>(caller: Caller, payload: P): P {
  if (caller.kind !== 'key' || !caller.defaultParams) return payload;
  const forced: Record<string, unknown> = {};
  for (const field of FORCED) if (caller.defaultParams[field] != null) forced[field] = caller.defaultParams[field];
  return { ...payload, ...forced };
}

export function pageSizeOf(dataset: DatasetRow, payload: SearchPayload): number {
  const size = payload.page_size ?? 10;
  const max = datasetConfig(dataset).MAX_LIMIT;
  if (size > max) throw badRequest(`page_size: ${size} is over the dataset's MAX_LIMIT of ${max}`);
  return size;
}

const STOP_WORDS = new Set(
  'a an and are as at be but by for from has have how i in into is it its of on or that the their this to was were what when where which who why will with you'.split(
    ' ',
  ),
);

/** The query without stop words (quoted phrases kept whole), for `remove_stop_words`. */
export function withoutStopWords(query: string): string {
  const kept = query.match(/"[^"]*"|\S+/g)?.filter((word) => word.startsWith('"') || !STOP_WORDS.has(word.toLowerCase().replace(/^-/, '')));
  return kept?.length ? kept.join(' ') : query;
}

/** Without `use_quote_negated_terms`, quotes and leading minus signs are ordinary characters. */
export function plainQuery(query: string): string {
  return query
    .replace(/"/g, ' ')
    .replace(/(^|\s)-(?=\S)/g, '$1')
    .replace(/\s+/g, ' ')
    .trim();
}
