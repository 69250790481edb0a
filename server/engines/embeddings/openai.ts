// An OpenAI-compatible embeddings endpoint (POST {base}/embeddings): batched, retried on rate limits,
// server errors and network failures, with errors that name the endpoint and its status (never the
// words of its answer: the endpoint may be anyone's). Requests go through outboundFetch, which
// sends EMBEDDING_API_KEY only when the endpoint is the operator's EMBEDDING_BASE_URL.
import pRetry, { AbortError } from 'p-retry';
import { OutboundRefusedError, outboundFetch, type OutboundResponse, type OutboundSettings } from '../outbound.js';
import { EmbeddingError, type Embedder, type EmbeddingPurpose } from './types.js';

export interface OpenAiEmbedderOptions {
  baseUrl: string;
  model: string;
  dimension: number;
  /** The operator's endpoints and the addresses tenants' URLs may reach. */
  outbound: OutboundSettings;
  /** Prepended to queries (some models want e.g. "query: "). */
  queryPrefix?: string;
  batchSize?: number;
  timeoutMs?: number;
  retries?: number;
}

export class OpenAiEmbedder implements Embedder {
  readonly model: string;
  readonly dimension: number;
  private readonly url: string;

  constructor(private readonly options: OpenAiEmbedderOptions) {
    this.model = options.model;
    this.dimension = options.dimension;
    this.url = options.baseUrl.replace(/\/+$/, '') + '/embeddings';
  }

  async embed(texts: string[], purpose: EmbeddingPurpose): Promise<number[][]> {
    const prefix = purpose === 'query' ? (this.options.queryPrefix ?? '') : '';
    const inputs = texts.map((t) => prefix + (t.trim() === '' ? ' ' : t));
    const batchSize = this.options.batchSize ?? 64;
    const vectors: number[][] = [];
    for (let i = 0; i < inputs.length; i += batchSize) vectors.push(...(await this.embedBatch(inputs.slice(i, i + batchSize))));
    return vectors;
  }

  private embedBatch(input: string[]): Promise<number[][]> {
    return pRetry(() => this.request(input), {
      retries: this.options.retries ?? 3,
      minTimeout: 250,
      factor: 2,
    });
  }

  private async request(input: string[]): Promise<number[][]> {
    let response: OutboundResponse;
    try {
      response = await outboundFetch(this.options.outbound, this.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: this.model, input }),
        timeoutMs: this.options.timeoutMs ?? 30_000,
        credential: 'embedding',
      });
    } catch (error) {
      if (error instanceof OutboundRefusedError) throw new AbortError(new EmbeddingError(`embedding endpoint ${this.url} was not called: ${error.message}`));
      throw new EmbeddingError(`embedding endpoint ${this.url} did not answer: ${(error as Error).message}`, true);
    }
    if (!response.ok) {
      await response.body?.cancel();
      // Rate limits and server errors may pass; anything else will not.
      const transient = response.status === 429 || response.status >= 500;
      const failure = new EmbeddingError(`embedding endpoint ${this.url} answered ${response.status}`, transient);
      if (transient) throw failure;
      throw new AbortError(failure);
    }
    const body = (await response.json().catch(() => null)) as { data?: { index?: number; embedding?: unknown }[] } | null;
    const data = body?.data;
    if (!Array.isArray(data) || data.length !== input.length) {
      throw new AbortError(new EmbeddingError(`embedding endpoint ${this.url} returned ${data?.length ?? 'no'} embeddings for ${input.length} texts`));
    }
    const ordered = [...data].sort((x, y) => (x.index ?? 0) - (y.index ?? 0));
    return ordered.map(({ embedding }) => {
      if (!Array.isArray(embedding) || embedding.length !== this.dimension || !embedding.every((v) => typeof v === 'number')) {
        const got = Array.isArray(embedding) ? `${embedding.length} numbers` : typeof embedding;
        throw new AbortError(new EmbeddingError(`embedding endpoint ${this.url} returned ${got}; the dataset expects ${this.dimension} (EMBEDDING_SIZE)`));
      }
      return embedding as number[];
    });
  }
}
