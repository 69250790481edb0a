// Lexical index on Typesense (written against 0.24.1): one collection shared by all datasets,
// each document tagged with its dataset_id and every read or delete filtered by it.
// Typesense ids are unique per collection, so this relies on chunk ids being globally unique uuids.
import { Client, Errors } from 'typesense';
import type { LexicalDocument, LexicalHit, LexicalIndex, LexicalSearch, LexicalWords, LexicalWordsRequest } from './types.js';

interface TypesenseDocument {
  id: string;
  dataset_id: string;
  text: string;
}

/** Typesense returns at most 250 hits per page. */
const MAX_PER_PAGE = 250;
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

  constructor(private readonly options: { url: string; apiKey: string; collection: string }) {
    this.client = new Client({
      nodes: [{ url: options.url.replace(/\/+$/, '') }],
      apiKey: options.apiKey,
      // Per-request timeout (imports are exempt in the client: they run as long as they must).
      connectionTimeoutSeconds: 10,
      // Retries smooth over a restart or a brief network blip, without hiding an outage for long.
      numRetries: 3,
      retryIntervalSeconds: 0.2,
      logLevel: 'error',
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

  async search({ datasetId, query, limit }: LexicalSearch): Promise<LexicalHit[]> {
    if (!query.trim() || limit <= 0) return [];
    // Pages must all have the same size for page N to start at hit (N-1)*size.
    const perPage = Math.min(MAX_PER_PAGE, limit);
    const page = (n: number) => ({
      q: query,
      query_by: 'text',
      filter_by: `dataset_id:=${quote(datasetId)}`,
      include_fields: 'id',
      highlight_fields: 'none',
      per_page: perPage,
      page: n,
      // Keep dropping query words (from the right) until as many hits as asked exist, so a long
      // natural-language query still gets a full list, ranked by how many of its words match.
      drop_tokens_threshold: limit,
    });
    const [first] = await this.multiSearch([page(1)]);
    // The first page tells how many match: the pages still needed are then asked for at once.
    const pages = Math.min(Math.ceil(limit / perPage), Math.ceil(first.found / perPage));
    const rest = await this.multiSearch(Array.from({ length: Math.max(0, pages - 1) }, (_, i) => page(i + 2)));
    // text_match is a 64-bit integer; as a JS number it loses low bits, which only merges near-ties.
    return [first, ...rest].flatMap((p) => p.hits).slice(0, limit);
  }

  async words({ datasetId, words }: LexicalWordsRequest): Promise<LexicalWords> {
    if (words.length === 0) return { words: [] };
    // One search per word, as few multi-searches as the limit allows, sent at once. Each word is
    // matched alone, exactly: no typo, no word dropped; the parameters go in every search, since
    // 0.24 lets common parameters override a search's own.
    const filter = `dataset_id:=${quote(datasetId)}`;
    const exact = {
      query_by: 'text',
      filter_by: filter,
      include_fields: 'id',
      highlight_fields: 'none',
      num_typos: 0,
      drop_tokens_threshold: 0,
      typo_tokens_threshold: 0,
    };
    const searches = words.map(({ word, prefix, limit }) => ({ ...exact, q: word, prefix, per_page: Math.min(limit, MAX_PER_PAGE) }));
    const results = await this.multiSearch(searches);
    return { words: results.map((r) => ({ found: r.found, ids: r.hits.map((hit) => hit.id) })) };
  }

  /**
   * Runs searches through the multi-search endpoint, which takes them in a POST body: a GET search
   * refuses a query string longer than 4,000 characters. Batches stay within the engine's limit.
   */
  private async multiSearch(searches: Record<string, unknown>[]): Promise<{ found: number; hits: LexicalHit[] }[]> {
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
          return { found: r.found ?? 0, hits: (r.hits ?? []).map((hit) => ({ id: hit.document.id, score: hit.text_match ?? 0 })) };
        });
      }),
    );
    return answers.flat();
  }

  /** The client holds no connection that needs closing. */
  async close(): Promise<void> {}
}
