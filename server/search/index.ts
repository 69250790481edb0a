// Runs a search: the request made concrete, retrieval and ranking, the chunks loaded and shaped, the
// search recorded for analytics. Handlers choose the response version; group searches reuse the steps.
import { randomUUID } from 'node:crypto';
import type * as T from '../../sdk/src/generated/types.gen.js';
import type { Caller } from '../auth/caller.js';
import { chunkRowsById } from '../domain/chunks/read.js';
import { chunkRecord, type ApiVersion, type ChunkRow } from '../domain/chunks/records.js';
import { datasetConfig } from '../domain/datasetConfig.js';
import type { DatasetRow } from '../domain/datasets.js';
import { searchDuration } from '../metrics.js';
import type { Services } from '../services.js';
import { prepareQueries, retrieveQueries, type WeightedQuery } from './query/index.js';
import { rankHits, rankingWindow } from './ranking/index.js';
import { pageSizeOf, withKeyDefaults, type SearchPayload } from './request.js';
import { pageRows } from './pageRows.js';
import type { Hit, PageCheck, SearchType } from './types.js';

export interface SearchOptions {
  /** Autocomplete: the last word is a prefix. */
  prefix: boolean;
  page: number;
  getTotalPages: boolean;
  extendResults?: boolean;
  /**
   * Hits per page instead of the payload's `page_size` (then not held to MAX_LIMIT): group searches
   * retrieve a window of chunks, their `page_size` counting groups.
   */
  pageSize?: number;
  /** The search type recorded for analytics, instead of the search's own (a RAG call's search). */
  recordAs?: string;
}

export interface Result {
  row: ChunkRow;
  score: number;
  highlights: string[] | null;
}

export interface SearchOutcome {
  id: string;
  results: Result[];
  totalPages: number;
  correctedQuery: string | null;
  payload: SearchPayload;
}

/** What a search found: the ranked hits of the page, before the chunks are loaded. */
export interface FoundHits {
  payload: SearchPayload;
  type: SearchType;
  queries: WeightedQuery[];
  correctedQuery: string | null;
  hits: Hit[];
  /** Matches in all (0 unless the total was asked for). */
  total: number;
  pageSize: number;
  started: number;
  /** Rows read while retrieval confirmed its answer (RetrievalRequest.readAhead), by the ids they were read for. */
  readAhead: { ids: Set<string>; rows: Promise<Map<string, ChunkRow>> } | null;
}

export async function runSearch(
  services: Services,
  dataset: DatasetRow,
  caller: Caller,
  request: SearchPayload,
  options: SearchOptions,
): Promise<SearchOutcome> {
  const found = await findHits(services, dataset, caller, request, options);
  const results = await loadResults(services, dataset, found, found.hits);
  const id = recordSearch(services, dataset, found, results, options.recordAs ?? (options.prefix ? `autocomplete_${found.type}` : found.type));
  const totalPages = options.getTotalPages ? Math.ceil(found.total / Math.max(found.pageSize, 1)) : 0;
  return { id, results, totalPages, correctedQuery: found.correctedQuery, payload: found.payload };
}

/**
 * The request made concrete (key defaults, queries, page), retrieval, and the ranking stage: the
 * page's hits, best first. With a ranking stage, a window of candidates is retrieved and reordered
 * before the page is cut from it.
 */
export async function findHits(services: Services, dataset: DatasetRow, caller: Caller, request: SearchPayload, options: SearchOptions): Promise<FoundHits> {
  const started = performance.now();
  const payload = withKeyDefaults(caller, request);
  const pageSize = options.pageSize ?? pageSizeOf(dataset, payload);
  const type = payload.search_type as SearchType;
  const page = Math.max(options.page, 1);
  const offset = (page - 1) * pageSize;
  const window = rankingWindow(payload, offset + pageSize, dataset);
  const prepared = await prepareQueries(services, dataset, payload);
  const { queries, correctedQuery } = prepared;
  // Without a ranking stage, retrieval may name the page's ids before it has confirmed them: their
  // rows are read meanwhile, with what retrieval checks its answer against.
  let readAhead: FoundHits['readAhead'] = null;
  const startReading = (ids: string[], query?: string): Promise<PageCheck> => {
    const read = pageRows(services.store.db, dataset.id, ids, query ?? null);
    readAhead = { ids: new Set(ids), rows: read.then((page) => page.rows) };
    readAhead.rows.catch(() => undefined);
    return read.then(({ version, terms }) => ({ version, terms }));
  };
  const base = {
    dataset,
    filter: payload.filters,
    scoreThreshold: payload.score_threshold,
    prefix: options.prefix,
    countTotal: options.getTotalPages,
    readAhead: window == null ? startReading : undefined,
  };
  const retrieval = window == null ? { limit: pageSize, offset } : { limit: window, offset: 0 };

  const found = await retrieveQueries(services, type, prepared, { ...base, ...retrieval });
  let hits = found.hits;
  if (options.prefix && options.extendResults && hits.length < retrieval.limit) {
    const more = await retrieveQueries(services, type, prepared, { ...base, ...retrieval, prefix: false });
    const seen = new Set(hits.map((h) => h.id));
    hits = [...hits, ...more.hits.filter((h) => !seen.has(h.id))].slice(0, retrieval.limit);
  }
  if (window != null) hits = (await rankHits(services, { dataset, payload, type, queries }, hits)).slice(offset, offset + pageSize);
  return { payload, type, queries, correctedQuery, hits, total: found.total ?? 0, pageSize, started, readAhead };
}

/** The hits' chunks, in the hits' order, highlighted as the payload asks (deleted chunks left out). */
export async function loadResults(services: Services, dataset: DatasetRow, found: FoundHits, hits: Hit[]): Promise<Result[]> {
  const ahead = found.readAhead;
  const rows = await (ahead && hits.every((h) => ahead.ids.has(h.id))
    ? ahead.rows
    : chunkRowsById(
        services.store.db,
        dataset.id,
        hits.map((h) => h.id),
      ));
  const { payload } = found;
  const text = found.queries.map((q) => q.text).join(' ');
  const kept = hits.flatMap((hit) => {
    const row = rows.get(hit.id);
    return row ? [{ row, score: hit.score }] : []; // deleted since it was indexed
  });
  const marking = payload.highlight_options?.highlight_results !== false ? kept.filter((r) => r.row.chunk_html) : [];
  const marked = await services.highlighter.page(
    marking.map((r) => r.row.chunk_html!),
    text,
    payload.highlight_options,
  );
  const markedOf = new Map(marking.map((r, i) => [r, marked[i]]));
  return kept.map((r) => {
    const mark = markedOf.get(r);
    return { row: mark ? { ...r.row, chunk_html: mark.chunk_html } : r.row, score: r.score, highlights: mark?.highlights ?? null };
  });
}

/** Records the search for analytics (unless the dataset disables them), after the answer; its id. */
export function recordSearch(services: Services, dataset: DatasetRow, found: FoundHits, results: Result[], searchType: string): string {
  const id = randomUUID();
  const latency = performance.now() - found.started;
  searchDuration.observe({ search_type: searchType }, latency / 1000);
  if (!datasetConfig(dataset).DISABLE_ANALYTICS) {
    const { payload } = found;
    services.deferred.insert('search_queries', {
      id,
      dataset_id: dataset.id,
      search_type: searchType,
      query: found.queries.map((q) => q.text).join(' '),
      request_params: JSON.stringify({ ...payload, query: undefined }),
      latency_ms: latency,
      top_score: results[0]?.score ?? 0,
      results: results.map((r) => r.row.id),
      user_id: payload.user_id ?? null,
    });
  }
  return id;
}

/** The response in the shape `X-API-Version` asks for; slim and content-only records as requested. */
export function searchResponse(outcome: SearchOutcome, version: ApiVersion): T.SearchResponseTypes {
  const { payload } = outcome;
  const shape = (row: ChunkRow, tagsAsText: boolean) => {
    const record = chunkRecord(row);
    const tags = tagsAsText ? (row.tag_set ?? []).join(',') : record.tag_set;
    if ('content_only' in payload && payload.content_only) {
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
      corrected_query: outcome.correctedQuery,
    };
  }
  return {
    score_chunks: outcome.results.map((r) => ({ metadata: [shape(r.row, true) as T.ChunkMetadataTypes], highlights: r.highlights, score: r.score })),
    total_chunk_pages: outcome.totalPages,
    corrected_query: outcome.correctedQuery,
  };
}
