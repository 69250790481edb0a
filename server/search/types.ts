// What the search operations ask of retrieval, and what they get back.
import type * as T from '../../generated/client/types.gen.js';
import type { DatasetRow } from '../domain/datasets.js';

export type SearchType = 'semantic' | 'fulltext' | 'hybrid' | 'bm25';

export interface RetrievalRequest {
  dataset: DatasetRow;
  /** The query text, as the user typed it (quotes and minus signs included). */
  query: string;
  filter?: T.ChunkFilter | null;
  /** How many hits to return, after skipping `offset`. */
  limit: number;
  offset: number;
  /** Hits scoring below this are left out (scores: higher is better). */
  scoreThreshold?: number | null;
  /** Prefix matching of the last query word (autocomplete). */
  prefix?: boolean;
  /** Count every match for `total` (get_total_pages); counting can cost more than the page itself. */
  countTotal?: boolean;
}

export interface Hit {
  id: string;
  /** Higher is better; comparable within one search type. */
  score: number;
}

export interface RetrievalResult {
  hits: Hit[];
  /** How many chunks match in all (for total pages), after the filter and the threshold; null unless `countTotal`. */
  total: number | null;
}
