// Runs a search: the request made concrete, retrieval, the chunks loaded and shaped, the search
// recorded for analytics. Handlers choose the response version.
import { randomUUID } from 'node:crypto';
import type * as T from '../../generated/client/types.gen.js';
import type { Caller } from '../auth/caller.js';
import { chunkRecord, type ApiVersion, type ChunkRow } from '../domain/chunks/records.js';
import { datasetConfig } from '../domain/datasetConfig.js';
import type { DatasetRow } from '../domain/datasets.js';
import type { Services } from '../services.js';
import { highlight } from './highlights.js';
import { pageSizeOf, plainQuery, queryText, refuseUnsupported, withKeyDefaults, withoutStopWords, type SearchPayload } from './request.js';
import { retrieve } from './retrieval/index.js';
import type { Hit, SearchType } from './types.js';

export interface SearchOptions {
  /** Autocomplete: the last word is a prefix. */
  prefix: boolean;
  page: number;
  getTotalPages: boolean;
  extendResults?: boolean;
}

interface Result {
  row: ChunkRow;
  score: number;
  highlights: string[] | null;
}

export interface SearchOutcome {
  id: string;
  results: Result[];
  totalPages: number;
  payload: SearchPayload;
}

export async function runSearch(services: Services, dataset: DatasetRow, caller: Caller, request: SearchPayload, options: SearchOptions): Promise<SearchOutcome> {
  const started = performance.now();
  const payload = withKeyDefaults(caller, request);
  refuseUnsupported(payload);
  const pageSize = pageSizeOf(dataset, payload);
  let query = queryText(payload.query);
  if (!payload.use_quote_negated_terms) query = plainQuery(query);
  if (payload.remove_stop_words) query = withoutStopWords(query);
  const type = payload.search_type as SearchType;
  const page = Math.max(options.page, 1);
  const base = { dataset, query, filter: payload.filters, limit: pageSize, offset: (page - 1) * pageSize, scoreThreshold: payload.score_threshold };

  const found = await retrieve(services, type, { ...base, prefix: options.prefix });
  let hits = found.hits;
  if (options.prefix && options.extendResults && hits.length < pageSize) {
    const more = await retrieve(services, type, { ...base, prefix: false });
    const seen = new Set(hits.map((h) => h.id));
    hits = [...hits, ...more.hits.filter((h) => !seen.has(h.id))].slice(0, pageSize);
  }

  const rows = await loadRows(services, dataset.id, hits);
  const results = hits.flatMap((hit) => {
    const row = rows.get(hit.id);
    if (!row) return []; // deleted since it was indexed
    const marked = row.chunk_html && payload.highlight_options?.highlight_results !== false ? highlight(row.chunk_html, query, payload.highlight_options) : null;
    return [{ row: marked ? { ...row, chunk_html: marked.chunk_html } : row, score: hit.score, highlights: marked?.highlights ?? null }];
  });

  const id = randomUUID();
  if (!datasetConfig(dataset).DISABLE_ANALYTICS) {
    await services.store.db('search_queries').insert({
      id,
      dataset_id: dataset.id,
      search_type: options.prefix ? `autocomplete_${type}` : type,
      query,
      request_params: JSON.stringify({ ...payload, query: undefined }),
      latency_ms: performance.now() - started,
      top_score: results[0]?.score ?? 0,
      results: results.map((r) => r.row.id),
      user_id: payload.user_id ?? null,
    });
  }
  return { id, results, totalPages: options.getTotalPages ? Math.ceil(found.total / Math.max(pageSize, 1)) : 0, payload };
}

async function loadRows(services: Services, datasetId: string, hits: Hit[]): Promise<Map<string, ChunkRow>> {
  if (hits.length === 0) return new Map();
  const rows = await services.store.db<ChunkRow>('chunks').where({ dataset_id: datasetId }).whereIn('id', hits.map((h) => h.id));
  return new Map(rows.map((row) => [row.id, row]));
}

/** The response in the shape `X-API-Version` asks for; slim and content-only records as requested. */
export function searchResponse(outcome: SearchOutcome, version: ApiVersion): T.SearchResponseTypes {
  const { payload } = outcome;
  const shape = (row: ChunkRow, tagsAsText: boolean) => {
    const record = chunkRecord(row);
    const tags = tagsAsText ? (row.tag_set ?? []).join(',') : record.tag_set;
    if (payload.content_only) {
      const { id, chunk_html, tracking_id, time_stamp, num_value, weight, image_urls } = record;
      return { id, chunk_html, tracking_id, time_stamp, num_value, weight, image_urls };
    }
    if (payload.slim_chunks) {
      const { chunk_html: _dropped, ...slim } = record;
      return { ...slim, tag_set: tags };
    }
    return { ...record, tag_set: tags };
  };
  if (version === 'V2') {
    return {
      id: outcome.id,
      chunks: outcome.results.map((r) => ({ chunk: shape(r.row, false) as T.NewChunkMetadataTypes, highlights: r.highlights, score: r.score })),
      total_pages: outcome.totalPages,
      corrected_query: null,
    };
  }
  return {
    score_chunks: outcome.results.map((r) => ({ metadata: [shape(r.row, true) as T.ChunkMetadataTypes], highlights: r.highlights, score: r.score })),
    total_chunk_pages: outcome.totalPages,
    corrected_query: null,
  };
}
