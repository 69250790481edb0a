// The lexical engine seam: which of a dataset's words a query word matches beyond itself (the
// completions of a word being typed, and near spellings where the engine forgives typos). Ranking is
// BM25 over the chunks' own terms for every engine (server/search/retrieval/fulltext.ts); the engine
// only widens what a query word means. PostgreSQL (the dataset's vocabulary) in the embedded mode,
// Typesense at scale; chosen once at start.

export interface LexicalDocument {
  id: string;
  datasetId: string;
  /** The text matched by full-text queries. */
  text: string;
}

export interface MatchedWordsRequest {
  datasetId: string;
  /** Query words (lowercase), each looked up on its own; `prefix`: as the beginning of a word. */
  words: { word: string; prefix: boolean }[];
  /** The most words returned per query word. */
  limit: number;
}

export interface LexicalIndex {
  readonly kind: 'postgres' | 'typesense';
  /** Creates what the index needs (collections, schema); idempotent. */
  prepare(): Promise<void>;
  /** Throws when the engine does not answer. */
  ping(): Promise<void>;
  /** Inserts or replaces documents by id; searchable when the promise resolves. */
  upsert(documents: LexicalDocument[]): Promise<void>;
  remove(datasetId: string, ids: string[]): Promise<void>;
  removeDataset(datasetId: string): Promise<void>;
  /**
   * Per query word, in the request's order: the dataset's words (lowercase, letters only) it matches
   * other than itself, likeliest first.
   */
  matchedWords(request: MatchedWordsRequest): Promise<string[][]>;
  close(): Promise<void>;
}
