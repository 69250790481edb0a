// The reranker seam: a query and candidate texts in, one relevance score per text out (higher is
// more relevant). A cross-encoder reads the query and each text together, so it judges relevance
// better than comparing vectors, at the price of one model call per candidate.

export interface Reranker {
  /** The URL the scores come from, for error messages. */
  readonly endpoint: string;
  /** One score per text, in the texts' order. */
  rerank(query: string, texts: string[]): Promise<number[]>;
}

export class RerankerError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RerankerError';
  }
}
