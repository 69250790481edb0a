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

export interface LexicalScoring {
  datasetId: string;
  query: string;
  /** The documents to score; the others are not looked at. */
  ids: string[];
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
   * The scores `search` gives the listed documents that match the query, in no particular order.
   * Offered by engines whose search cannot be restricted in PostgreSQL (Typesense): a search's
   * window of best matches may leave some of the listed documents out.
   */
  scoreAmong?(request: LexicalScoring): Promise<LexicalHit[]>;
  close(): Promise<void>;
}
