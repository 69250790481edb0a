// The lexical index seam: full-text indexing and search of a dataset's documents (chunks).
// Postgres full-text in the embedded mode, Typesense at scale; chosen once at start.

export interface LexicalDocument {
  id: string;
  datasetId: string;
  /** The text matched by full-text queries. */
  text: string;
}

export interface LexicalHit {
  id: string;
  /** Engine-specific relevance; higher is better. */
  score: number;
}

export interface LexicalSearch {
  datasetId: string;
  query: string;
  limit: number;
}

export interface LexicalWordsRequest {
  datasetId: string;
  /**
   * Words of a query, each looked up on its own, as a whole word without typos (`prefix`: as the
   * beginning of a word), listing at most `limit` of the documents holding it.
   */
  words: { word: string; prefix: boolean; limit: number }[];
}

export interface LexicalWords {
  /** Per word, in the request's order: how many documents hold it, and up to its `limit` of them. */
  words: { found: number; ids: string[] }[];
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
  search(request: LexicalSearch): Promise<LexicalHit[]>;
  /**
   * For each word, how many of the dataset's documents hold it and which: what idf-aware ranking
   * asks of engines that match words PostgreSQL's full-text does not (Typesense).
   */
  words?(request: LexicalWordsRequest): Promise<LexicalWords>;
  close(): Promise<void>;
}
