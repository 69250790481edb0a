// What the search operations ask of retrieval, and what they get back.
import type * as T from '../../sdk/src/generated/types.gen.js';
import type { DatasetRow } from '../domain/datasets.js';
import type { FilterReads } from './filters/passing.js';
import type { TermBoost } from './query/boost.js';
import type { TermConditions } from './query/conditions.js';

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
  /** The query's vector, when it is not the embedding of `query` (weighted queries, semantic boost). */
  vector?: number[];
  /** What the query's text requires of each chunk ("quoted" phrases, -words): see search/query/conditions.ts. */
  conditions?: TermConditions;
  /** Query terms weighing more in keyword scoring (scoring_options.fulltext_boost): see search/query/boost.ts. */
  termBoost?: TermBoost;
  /** The dataset's version (retrieval/changes.ts) as this search reads it: indexes held in memory that reached it need no catch-up. */
  seenVersion?: Promise<number | undefined>;
  /**
   * Keep the search's work to one thread: other searches are in flight, or the search makes
   * another list at the same time (hybrid), and they take the machine's other core. Else a long
   * BM25 walk (bm25/walkHelpers.ts) or scan of the held vectors (vectors/index.ts, ScanSharing) is
   * shared with a helper thread.
   */
  oneThread?: boolean;
  /**
   * Hybrid's semantic list when the search is alone: its scan of the held vectors, kept to one
   * thread while BM25 walks, may take a helper once the keyword list is made (vectors/handoff.js).
   */
  helpOnceKeywords?: boolean;
  /** Reads of the filter this search shares between its lists (filters/passing.ts). */
  filterReads?: FilterReads;
  /**
   * Told the ids of the page (`offset` on) when retrieval has them before it has confirmed them: the
   * caller starts reading their rows, in a statement that also reads the dataset's version and,
   * given a query, its terms (search/pageRows.ts); the hits returned may still differ.
   */
  readAhead?: (ids: string[], query?: string) => Promise<PageCheck>;
}

/** What the statement reading a page's rows read besides them (search/pageRows.ts). */
export interface PageCheck {
  version: number;
  terms: string[] | null;
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
