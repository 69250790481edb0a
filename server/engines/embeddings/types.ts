// The embedder seam: texts in, dense vectors out. The built-in offline embedder by default, any
// OpenAI-compatible endpoint when a dataset configures one; a local model would be one more module.

export type EmbeddingPurpose = 'document' | 'query';

export interface Embedder {
  /** Identifies the model, so vectors of different models are never compared. */
  readonly model: string;
  readonly dimension: number;
  /** One vector per text, in order, each of `dimension` numbers. */
  embed(texts: string[], purpose: EmbeddingPurpose): Promise<number[][]>;
}

export class EmbeddingError extends Error {
  /**
   * @param transient the endpoint failed (no answer, a rate limit, a server error) rather than
   *   refused the input: the same request may succeed later, so durable work retries it.
   */
  constructor(
    message: string,
    readonly transient = false,
  ) {
    super(message);
    this.name = 'EmbeddingError';
  }
}
