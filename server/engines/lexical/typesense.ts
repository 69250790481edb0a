// Lexical index on Typesense (written against 0.24.1): one collection shared by all datasets,
// each document tagged with its dataset_id and every read or delete filtered by it.
// Typesense ids are unique per collection, so this relies on chunk ids being globally unique uuids.
import http from 'node:http';
import https from 'node:https';
import { Client, Errors } from 'typesense';
import type { SearchResponse } from 'typesense/lib/Typesense/Documents.js';
import { surfaceWords } from '../../search/query/words.js';
import type { LexicalDocument, LexicalIndex, MatchedWordsRequest } from './types.js';

interface TypesenseDocument {
  id: string;
  dataset_id: string;
  text: string;
}

/** Hits whose highlights give a word's matches: enough to see its likeliest completions and spellings. */
const HITS_PER_WORD = 20;
/** A marked match in a snippet and the letters that complete its word. */
const MARKED = /<mark>(.*?)<\/mark>([\p{L}\p{M}]*)/gu;
/** Ids per delete-by-filter request, so the filter stays well within URL length limits. */
const DELETE_BATCH = 100;
/** Typesense refuses a multi-search of more searches than this (its `limit_multi_searches` default). */
const MULTI_SEARCH_LIMIT = 50;

/** A filter value in backticks; Typesense has no escape for a backtick inside one. */
function quote(value: string): string {
  if (value.includes('`')) throw new Error(`Typesense filter value may not contain a backtick: ${value}`);
  return `\`${value}\``;
}

export class TypesenseLexicalIndex implements LexicalIndex {
  readonly kind = 'typesense' as const;
  private readonly client: Client;
  // Connections kept open between requests: a new one for each cost every chunk write and every
  // full-text question a TCP handshake and the client's socket set-up.
  private readonly httpAgent = new http.Agent({ keepAlive: true });
  private readonly httpsAgent = new https.Agent({ keepAlive: true });

  constructor(private readonly options: { url: string; apiKey: string; collection: string }) {
    this.client = new Client({
      nodes: [{ url: options.url.replace(/\/+$/, '') }],
      apiKey: options.apiKey,
      httpAgent: this.httpAgent,
      httpsAgent: this.httpsAgent,
      // Per-request timeout (imports are exempt in the client: they run as long as they must).
      connectionTimeoutSeconds: 10,
      // Retries smooth over a restart or a brief network blip, without hiding an outage for long.
      numRetries: 3,
      retryIntervalSeconds: 0.2,
      logLevel: 'error',
      // Uncompressed answers: the client asks for gzip unless told otherwise, and unpacking each
      // answer took about 3 % of the service's CPU under a load of chunk writes.
      additionalHeaders: { 'Accept-Encoding': 'identity' },
    });
  }

  private get documents() {
    return this.client.collections<TypesenseDocument>(this.options.collection).documents();
  }

  async prepare(): Promise<void> {
    if (await this.client.collections(this.options.collection).exists()) return;
    try {
      await this.client.collections().create({
        name: this.options.collection,
        fields: [
          // id is implicit in Typesense (always a string); filtering on it works from 0.24.
          { name: 'dataset_id', type: 'string', facet: true },
          { name: 'text', type: 'string' },
        ],
      });
    } catch (error) {
      // Another process created it between our check and our create: that is success.
      if (!(error instanceof Errors.ObjectAlreadyExists)) throw error;
    }
  }

  async ping(): Promise<void> {
    let ok = false;
    let reason = 'health endpoint answered not ok';
    try {
      ok = (await this.client.health.retrieve()).ok === true;
    } catch (error) {
      reason = error instanceof Error ? error.message : String(error);
    }
    if (!ok) throw new Error(`Typesense at ${this.options.url} is not healthy: ${reason}`);
  }

  async upsert(documents: LexicalDocument[]): Promise<void> {
    if (documents.length === 0) return; // the client rejects an empty import
    const results = await this.documents.import(
      documents.map((d) => ({ id: d.id, dataset_id: d.datasetId, text: d.text })),
      { action: 'upsert', throwOnFail: false },
    );
    // An import answers 200 even when documents fail: each line carries its own outcome.
    const failures = results.flatMap((r, i) => (r.success ? [] : [{ id: documents[i].id, error: r.error }]));
    if (failures.length > 0) {
      const [first] = failures;
      throw new Error(`Typesense rejected ${failures.length} of ${documents.length} documents; first: id ${first.id}: ${first.error}`);
    }
  }

  async remove(datasetId: string, ids: string[]): Promise<void> {
    for (let i = 0; i < ids.length; i += DELETE_BATCH) {
      const batch = ids.slice(i, i + DELETE_BATCH);
      await this.documents.delete({
        filter_by: `id:[${batch.map(quote).join(',')}] && dataset_id:=${quote(datasetId)}`,
      });
    }
  }

  async removeDataset(datasetId: string): Promise<void> {
    await this.documents.delete({ filter_by: `dataset_id:=${quote(datasetId)}` });
  }

  /**
   * One search per word, each alone, all in as few multi-searches as the engine allows, sent at once:
   * the words of the best hits' snippets that the word matched (its completions when `prefix`, near
   * spellings within Typesense's typo tolerance), in the engine's order of relevance.
   */
  async matchedWords({ datasetId, words, limit }: MatchedWordsRequest): Promise<string[][]> {
    if (words.length === 0 || limit <= 0) return words.map(() => []);
    const searches = words.map(({ word, prefix }) => ({
      q: word,
      prefix,
      query_by: 'text',
      filter_by: `dataset_id:=${quote(datasetId)}`,
      include_fields: 'id',
      highlight_fields: 'text',
      // Only the matched words are read: the shortest snippet around them.
      highlight_affix_num_tokens: 0,
      per_page: HITS_PER_WORD,
      drop_tokens_threshold: 0,
    }));
    const results = await this.multiSearch(searches);
    return results.map((result, i) => {
      const found = new Set<string>();
      // The snippet marks what matched: a whole word, or only the typed beginning of a completed one.
      for (const hit of result.hits ?? [])
        for (const highlight of hit.highlights ?? [])
          for (const [, marked, rest] of (highlight.snippet ?? '').matchAll(MARKED)) for (const word of surfaceWords(marked + rest)) found.add(word);
      found.delete(words[i].word);
      return [...found].slice(0, limit);
    });
  }

  /**
   * Runs searches through the multi-search endpoint, which takes them in a POST body: a GET search
   * refuses a query string longer than 4,000 characters. Batches stay within the engine's limit.
   */
  private async multiSearch(searches: Record<string, unknown>[]): Promise<SearchResponse<TypesenseDocument>[]> {
    const batches: Record<string, unknown>[][] = [];
    for (let i = 0; i < searches.length; i += MULTI_SEARCH_LIMIT) batches.push(searches.slice(i, i + MULTI_SEARCH_LIMIT));
    const answers = await Promise.all(
      batches.map(async (batch) => {
        const response = await this.client.multiSearch.perform<TypesenseDocument[]>({
          searches: batch.map((search) => ({ collection: this.options.collection, ...search })),
        });
        return response.results.map((r) => {
          // A failed search answers in place with a code and a message, not by throwing.
          if ('error' in r && r.error) throw new Error(`Typesense multi-search: ${String(r.error)}`);
          return r as SearchResponse<TypesenseDocument>;
        });
      }),
    );
    return answers.flat();
  }

  /** The client holds no connection that needs closing. */
  async close(): Promise<void> {
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
  }
}
