// A reranking endpoint over HTTP, POST {base}/rerank, in the two shapes the reference service speaks:
//
//   with a model name (Cohere, Jina, Voyage, vLLM, Infinity...):
//     {model, query, documents: [...]}  ->  {results: [{index, relevance_score}, ...]}
//   without one (text-embeddings-inference, which serves a single model):
//     {query, texts: [...], truncate: true}  ->  [{index, score}, ...]
//
// Either answer shape is read whatever was sent. Texts go in batches (the reference sends 20 at a
// time), a few batches at once; a batch is retried on rate limits, server errors and network
// failures. Every text must come back scored exactly once, or the whole call fails: a partial
// answer would silently reorder the results. Errors name the endpoint and its status, never the
// words of its answer (the endpoint may be anyone's); requests go through outboundFetch, which
// sends RERANKER_API_KEY only when the endpoint is the operator's RERANKER_BASE_URL.
import pRetry, { AbortError } from 'p-retry';
import { OutboundRefusedError, outboundFetch, type OutboundResponse, type OutboundSettings } from '../outbound.js';
import { RerankerError, type Reranker } from './types.js';

export interface HttpRerankerOptions {
  baseUrl: string;
  /** Sent as `model` in the Cohere-style request; null selects the TEI-style request. */
  model?: string | null;
  /** The operator's endpoints and the addresses tenants' URLs may reach. */
  outbound: OutboundSettings;
  batchSize?: number;
  /** Batches in flight at once. */
  concurrency?: number;
  timeoutMs?: number;
  retries?: number;
  /** First pause before a retry, doubled each time. */
  retryDelayMs?: number;
}

export class HttpReranker implements Reranker {
  readonly endpoint: string;

  constructor(private readonly options: HttpRerankerOptions) {
    this.endpoint = options.baseUrl.replace(/\/+$/, '') + '/rerank';
  }

  async rerank(query: string, texts: string[]): Promise<number[]> {
    const size = this.options.batchSize ?? 20;
    const batches: { start: number; texts: string[] }[] = [];
    for (let start = 0; start < texts.length; start += size) batches.push({ start, texts: texts.slice(start, start + size) });
    const scores = new Array<number>(texts.length);
    let next = 0;
    const worker = async () => {
      while (next < batches.length) {
        const batch = batches[next++];
        const batchScores = await this.withRetries(query, batch.texts);
        for (const [i, score] of batchScores.entries()) scores[batch.start + i] = score;
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.options.concurrency ?? 4, batches.length) }, worker));
    return scores;
  }

  private withRetries(query: string, texts: string[]): Promise<number[]> {
    return pRetry(() => this.request(query, texts), {
      retries: this.options.retries ?? 3,
      minTimeout: this.options.retryDelayMs ?? 250,
      factor: 2,
    });
  }

  private body(query: string, texts: string[]): unknown {
    // Empty documents are refused by some servers; a space scores as nothing.
    const documents = texts.map((t) => (t.trim() === '' ? ' ' : t));
    return this.options.model ? { model: this.options.model, query, documents } : { query, texts: documents, truncate: true };
  }

  private async request(query: string, texts: string[]): Promise<number[]> {
    let response: OutboundResponse;
    try {
      response = await outboundFetch(this.options.outbound, this.endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(this.body(query, texts)),
        timeoutMs: this.options.timeoutMs ?? 30_000,
        credential: 'reranker',
      });
    } catch (error) {
      if (error instanceof OutboundRefusedError) throw new AbortError(new RerankerError(`reranker endpoint ${this.endpoint} was not called: ${error.message}`));
      throw new RerankerError(`reranker endpoint ${this.endpoint} did not answer: ${(error as Error).message}`);
    }
    if (!response.ok) {
      await response.body?.cancel();
      const failure = new RerankerError(`reranker endpoint ${this.endpoint} answered ${response.status}`);
      // Rate limits and server errors may pass; anything else will not.
      if (response.status === 429 || response.status >= 500) throw failure;
      throw new AbortError(failure);
    }
    const body: unknown = await response.json().catch(() => null);
    return this.scoresOf(body, texts.length);
  }

  /** The scores of an answer in either shape, in the texts' order; refuses anything incomplete. */
  private scoresOf(body: unknown, count: number): number[] {
    const pairs = Array.isArray(body) ? body : (body as { results?: unknown } | null)?.results;
    const fail = (problem: string) => new AbortError(new RerankerError(`reranker endpoint ${this.endpoint} ${problem}`));
    if (!Array.isArray(pairs)) throw fail('answered neither a list of {index, score} nor {results: [{index, relevance_score}]}');
    const scores = new Array<number | undefined>(count).fill(undefined);
    for (const pair of pairs as { index?: unknown; score?: unknown; relevance_score?: unknown }[]) {
      const index = pair?.index;
      const score = pair?.relevance_score ?? pair?.score;
      // The answer's own values are not quoted back: the endpoint may be anyone's.
      if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= count)
        throw fail(`answered an index that is not one of the ${count} texts sent`);
      if (typeof score !== 'number' || !Number.isFinite(score)) throw fail(`answered a score for text ${index} that is not a finite number`);
      if (scores[index] !== undefined) throw fail(`scored text ${index} twice`);
      scores[index] = score;
    }
    const missing = scores.indexOf(undefined);
    if (missing >= 0) throw fail(`scored ${pairs.length} of the ${count} texts sent (text ${missing} has no score)`);
    return scores as number[];
  }
}
