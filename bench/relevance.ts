// The relevance suite: the CISI collection (bench/cisi.ts) loaded through the service's API, one
// chunk per document, and every judged query run with every search type. Figures: nDCG@10 per search
// type against the collection's reference BM25 figure, how many queries return nothing, and the
// client-measured latency of the searches.
import os from 'node:os';
import { createClient, type Client } from '../sdk/src/generated/client/index.js';
import { createChunk, createDataset, createOrganization, searchChunks } from '../sdk/src/generated/sdk.gen.js';
import type { ChunkReqPayload, SearchMethod, SearchResponseBody } from '../sdk/src/generated/types.gen.js';
import { loadConfig } from '../server/config.js';
import { innerText } from '../server/domain/chunks/content.js';
import { startService } from '../server/main.js';
import { documentContent, loadCisi, ndcgAt, REFERENCE_NDCG_AT_10, wordCount, type Cisi, type CisiQuery } from './cisi.js';
import { ADMIN_KEY, type ModeEnvironment } from './modes.js';
import { fmt, mean, percentile, stopwatch, table } from './report.js';

export interface RelevanceOptions {
  /** The directory holding docs.jsonl, queries.jsonl and qrels.jsonl. */
  cisiDir: string;
}

/** The search types, in the order they run. */
export const SEARCH_TYPES: SearchMethod[] = ['semantic', 'fulltext', 'hybrid', 'bm25'];
/** nDCG@K, and the page size of every search. */
const K = 10;
/** Documents per `POST /api/chunk` (the API's limit). */
const BATCH = 120;
/** Unjudged queries sent with each search type before its measured run: not scored, not timed. */
const WARMUP_QUERIES = 5;
/** Query lengths (words) that the zero-result counts are broken down by: ≤ 10, 11–20, 21–50, > 50. */
const LENGTH_BUCKETS: [string, number, number][] = [
  ['≤10', 0, 10],
  ['11–20', 11, 20],
  ['21–50', 21, 50],
  ['>50', 51, Infinity],
];

export interface QueryResult {
  query: string;
  words: number;
  ndcg: number;
  /** The documents returned, best first (tracking ids = CISI doc ids). */
  docs: string[];
  /** How many of them are judged relevant. */
  relevant: number;
  latency_ms: number;
}

export interface TypeResult {
  search_type: SearchMethod;
  /** `unavailable`: the service answered the first query with 400; the type was not run further. */
  status: 'ok' | 'unavailable';
  /** The service's answer, when unavailable. */
  message?: string;
  /** Mean nDCG@10 over the judged queries (a query with no results scores 0). */
  ndcg_at_10: number | null;
  reference: number;
  /** ndcg_at_10 − reference. */
  difference: number | null;
  /** Mean nDCG@10 over the queries that returned at least one result (null if none did). */
  ndcg_at_10_answered: number | null;
  zero_result_queries: number;
  zero_result_query_ids: string[];
  /** Queries that returned nothing, by query length in words (bucket → [zero-result, queries]). */
  zero_results_by_length: Record<string, [number, number]>;
  /** Mean number of results per query (at most 10). */
  mean_results: number;
  latency_ms: { mean: number; p50: number; p99: number; max: number } | null;
  per_query: QueryResult[];
}

export interface RelevanceResult {
  options: RelevanceOptions & { k: number; page_size: number; batch: number; warmup_queries: number };
  collection: {
    dir: string;
    documents: number;
    queries: number;
    judged_queries: number;
    judgements: number;
    sha256: Record<string, string>;
    /** Words per judged query, and how many judged queries are longer than 10, 20 and 50 words. */
    judged_query_words: { min: number; p50: number; mean: number; max: number; over_10: number; over_20: number; over_50: number };
    content: string;
  };
  engines: { store: string; lexical: string; workflows: string };
  service_start_ms: number;
  /** 1-minute load average before loading and after the last search: other work on the machine skews latency. */
  load_average: { start: number; end: number };
  load: { wall_ms: number; chunks_per_s: number; requests: number };
  /** The request every query is sent as. */
  request: { body: Record<string, unknown>; headers: Record<string, string> };
  types: TypeResult[];
}

/**
 * The SDK's fetch may reuse a keep-alive connection the server has just timed out: set-up calls,
 * which are not measured, retry once on a network error.
 */
async function retryOnce<T extends { response?: Response }>(call: () => Promise<T>): Promise<T> {
  try {
    const result = await call();
    if (result.response) return result;
  } catch {
    // fall through to the retry
  }
  return call();
}

const describe = (r: { response?: Response; error?: unknown }) => `${r.response?.status}: ${JSON.stringify(r.error)}`;

export async function runRelevance(modeEnv: ModeEnvironment, options: RelevanceOptions, log: (line: string) => void): Promise<RelevanceResult> {
  const cisi = await loadCisi(options.cisiDir);
  const chunks: ChunkReqPayload[] = cisi.documents.map((doc) => ({ tracking_id: doc.id, chunk_html: documentContent(doc) }));
  // The content is plain text that the service indexes and embeds unchanged: check it with the
  // service's own extraction, so that no document is silently treated as HTML.
  for (const c of chunks) if (innerText(c.chunk_html!) !== c.chunk_html) throw new Error(`document ${c.tracking_id}: its text would be converted as HTML`);
  const words = cisi.judged.map((q) => wordCount(q.text));
  log(
    `CISI: ${cisi.documents.length} documents, ${cisi.queries.length} queries, ${cisi.judged.length} judged; ` +
      `judged queries are ${Math.min(...words)}–${Math.max(...words)} words (median ${percentile(words, 50)}), ${words.filter((w) => w > 20).length} over 20 words`,
  );

  const config = loadConfig(await modeEnv.freshEnv());
  const started = stopwatch();
  const service = await startService(config);
  const serviceStartMs = started().wallMs;
  const engines = { store: service.services.store.kind, lexical: service.services.lexical.kind, workflows: service.services.workflows.kind };
  log(`service on ${service.url} (${engines.store}, ${engines.lexical}, ${engines.workflows}) in ${fmt(serviceStartMs)} ms`);
  const client = createClient({ baseUrl: service.url, auth: () => ADMIN_KEY });
  try {
    const org = await retryOnce(() => createOrganization({ client, body: { name: 'bench-relevance' } }));
    if (!org.data) throw new Error(`createOrganization answered ${describe(org)}`);
    const ds = await retryOnce(() => createDataset({ client, headers: { 'SVC-Organization': org.data!.id }, body: { dataset_name: 'bench-cisi' } }));
    if (!ds.data) throw new Error(`createDataset answered ${describe(ds)}`);
    const datasetId = ds.data.id;

    const loadStart = os.loadavg()[0];
    const load = await loadDocuments(client, datasetId, chunks);
    log(`loaded ${chunks.length} documents in ${load.requests} requests: ${fmt(load.wall_ms / 1000, 1)} s, ${fmt(load.chunks_per_s)} chunks/s`);

    const unjudged = cisi.queries.filter((q) => !cisi.qrels.has(q.id)).slice(0, WARMUP_QUERIES);
    const types: TypeResult[] = [];
    for (const type of SEARCH_TYPES) {
      const result = await runType(client, datasetId, type, cisi, unjudged);
      types.push(result);
      log(
        result.status === 'unavailable'
          ? `${type}: unavailable (${result.message})`
          : `${type}: nDCG@10 ${fmt(result.ndcg_at_10, 3)} (reference ${REFERENCE_NDCG_AT_10}), ${result.zero_result_queries} of ${cisi.judged.length} queries return nothing, p50 ${fmt(result.latency_ms!.p50, 1)} ms`,
      );
    }
    return {
      options: { ...options, k: K, page_size: K, batch: BATCH, warmup_queries: unjudged.length },
      collection: {
        dir: cisi.dir,
        documents: cisi.documents.length,
        queries: cisi.queries.length,
        judged_queries: cisi.judged.length,
        judgements: [...cisi.qrels.values()].reduce((n, m) => n + m.size, 0),
        sha256: cisi.sha256,
        judged_query_words: {
          min: Math.min(...words),
          p50: percentile(words, 50),
          mean: Math.round(mean(words) * 10) / 10,
          max: Math.max(...words),
          over_10: words.filter((w) => w > 10).length,
          over_20: words.filter((w) => w > 20).length,
          over_50: words.filter((w) => w > 50).length,
        },
        content: 'chunk_html = title + "\\n\\n" + text, plain text (indexed and embedded as is)',
      },
      engines,
      service_start_ms: Math.round(serviceStartMs),
      load_average: { start: round(loadStart, 2), end: round(os.loadavg()[0], 2) },
      load,
      request: { body: searchBody('<query>', '<search_type>' as SearchMethod), headers: { 'X-API-Version': 'V2' } },
      types,
    };
  } finally {
    await service.stop();
  }
}

async function loadDocuments(client: Client, datasetId: string, chunks: ChunkReqPayload[]): Promise<RelevanceResult['load']> {
  const clock = stopwatch();
  let requests = 0;
  for (let i = 0; i < chunks.length; i += BATCH) {
    const batch = chunks.slice(i, i + BATCH);
    const res = await retryOnce(() => createChunk({ client, headers: { 'SVC-Dataset': datasetId }, body: batch }));
    requests++;
    if (!res.data) throw new Error(`POST /api/chunk (documents ${batch[0].tracking_id}…) answered ${describe(res)}`);
    const stored = (res.data as { chunk_metadata: { tracking_id?: string | null }[] }).chunk_metadata;
    const got = stored.map((c) => c.tracking_id).join(',');
    if (got !== batch.map((c) => c.tracking_id).join(','))
      throw new Error(`POST /api/chunk (documents ${batch[0].tracking_id}…) stored other chunks than were sent`);
  }
  const { wallMs } = clock();
  return { wall_ms: Math.round(wallMs), chunks_per_s: Math.round((chunks.length * 1000) / wallMs), requests };
}

/** The one request every query is sent as: nothing but the query, the type and the page size. */
function searchBody(query: string, type: SearchMethod) {
  return { query, search_type: type, page_size: K };
}

async function search(client: Client, datasetId: string, type: SearchMethod, query: string) {
  const t0 = performance.now();
  const res = await searchChunks({ client, headers: { 'SVC-Dataset': datasetId, 'X-API-Version': 'V2' }, body: searchBody(query, type) });
  const ms = performance.now() - t0;
  return { res, ms };
}

async function runType(client: Client, datasetId: string, type: SearchMethod, cisi: Cisi, warmup: CisiQuery[]): Promise<TypeResult> {
  const base = { search_type: type, reference: REFERENCE_NDCG_AT_10 };
  // Warm-up (not scored, not timed). Its first query decides whether the type is there at all: a
  // 400 means "not available" (bm25, until it lands). Any other failure, then or later, fails the suite.
  const probe = warmup.length ? warmup : cisi.judged.slice(0, 1);
  for (const [i, q] of probe.entries()) {
    const { res } = await search(client, datasetId, type, q.text);
    if (i === 0 && res.response.status === 400) {
      return {
        ...base,
        status: 'unavailable',
        message: (res.error as { message?: string } | undefined)?.message ?? JSON.stringify(res.error),
        ndcg_at_10: null,
        difference: null,
        ndcg_at_10_answered: null,
        zero_result_queries: 0,
        zero_result_query_ids: [],
        zero_results_by_length: {},
        mean_results: 0,
        latency_ms: null,
        per_query: [],
      };
    }
    if (!res.data) throw new Error(`${type} search for query ${q.id} answered ${describe(res)}`);
  }

  const perQuery: QueryResult[] = [];
  for (const q of cisi.judged) {
    const { res, ms } = await search(client, datasetId, type, q.text);
    if (!res.data) throw new Error(`${type} search for query ${q.id} answered ${describe(res)}`);
    const chunks = (res.data as SearchResponseBody).chunks;
    if (!Array.isArray(chunks)) throw new Error(`${type} search for query ${q.id}: no chunks in the answer (not the V2 shape?)`);
    if (chunks.length > K) throw new Error(`${type} search for query ${q.id}: ${chunks.length} results for page_size ${K}`);
    const docs = chunks.map((c) => c.chunk.tracking_id ?? '');
    for (const d of docs) if (!d) throw new Error(`${type} search for query ${q.id}: a result has no tracking_id`);
    if (new Set(docs).size !== docs.length) throw new Error(`${type} search for query ${q.id}: a document returned twice (${docs.join(',')})`);
    const judgements = cisi.qrels.get(q.id)!;
    perQuery.push({
      query: q.id,
      words: wordCount(q.text),
      ndcg: ndcgAt(K, docs, judgements),
      docs,
      relevant: docs.filter((d) => (judgements.get(d) ?? 0) > 0).length,
      latency_ms: Math.round(ms * 100) / 100,
    });
  }

  const ndcg = mean(perQuery.map((r) => r.ndcg));
  const answered = perQuery.filter((r) => r.docs.length > 0);
  const zero = perQuery.filter((r) => r.docs.length === 0);
  const latencies = perQuery.map((r) => r.latency_ms);
  const byLength: Record<string, [number, number]> = {};
  for (const [name, lo, hi] of LENGTH_BUCKETS) {
    const inBucket = perQuery.filter((r) => r.words >= lo && r.words <= hi);
    byLength[name] = [inBucket.filter((r) => r.docs.length === 0).length, inBucket.length];
  }
  return {
    ...base,
    status: 'ok',
    ndcg_at_10: round(ndcg, 4),
    difference: round(ndcg - REFERENCE_NDCG_AT_10, 4),
    ndcg_at_10_answered: answered.length ? round(mean(answered.map((r) => r.ndcg)), 4) : null,
    zero_result_queries: zero.length,
    zero_result_query_ids: zero.map((r) => r.query),
    zero_results_by_length: byLength,
    mean_results: round(mean(perQuery.map((r) => r.docs.length)), 2),
    latency_ms: {
      mean: round(mean(latencies), 2),
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
      max: Math.max(...latencies),
    },
    per_query: perQuery,
  };
}

const round = (value: number, digits: number) => Math.round(value * 10 ** digits) / 10 ** digits;

// ---------------------------------------------------------------------------------------------
// Printing

export function formatRelevance(mode: string, r: RelevanceResult): string {
  const n = r.collection.judged_queries;
  const signed = (v: number) => `${v >= 0 ? '+' : ''}${fmt(v, 3)}`;
  const rows: (string | number)[][] = [
    ['search type', 'nDCG@10', 'reference', 'difference', 'zero-result queries', 'mean latency ms', 'p50 ms', 'p99 ms'],
    ...r.types.map((t) =>
      t.status === 'unavailable'
        ? [t.search_type, 'unavailable', fmt(t.reference, 3), '', '', '', '', '']
        : [
            t.search_type,
            fmt(t.ndcg_at_10, 3),
            fmt(t.reference, 3),
            signed(t.difference!),
            `${t.zero_result_queries} / ${n}`,
            fmt(t.latency_ms!.mean, 1),
            fmt(t.latency_ms!.p50, 1),
            fmt(t.latency_ms!.p99, 1),
          ],
    ),
  ];
  const w = r.collection.judged_query_words;
  const buckets = LENGTH_BUCKETS.map(([name]) => name);
  const zeroRows: (string | number)[][] = [
    [
      'queries returning nothing, by length (words)',
      ...buckets.map((b) => `${b} (${r.types.find((t) => t.status === 'ok')?.zero_results_by_length[b]?.[1] ?? '–'})`),
    ],
    ...r.types.filter((t) => t.status === 'ok').map((t) => [t.search_type, ...buckets.map((b) => String(t.zero_results_by_length[b][0]))]),
  ];
  const lines = [
    `relevance · ${mode} (${r.engines.store}, ${r.engines.lexical}) · CISI: ${fmt(r.collection.documents)} documents, ${n} judged queries ` +
      `(${w.min}–${w.max} words, median ${w.p50}; ${w.over_20} over 20 words, ${w.over_50} over 50) · nDCG@${r.options.k}, page_size ${r.options.page_size}`,
    '',
    table(rows),
    '',
    table(zeroRows),
    '',
    `reference: plain BM25 (k1 0.9, b 0.4) over title and text, from the collection's README. A query with no results scores 0; ` +
      `nDCG@10 over the answered queries only: ${r.types
        .filter((t) => t.status === 'ok')
        .map((t) => `${t.search_type} ${fmt(t.ndcg_at_10_answered, 3)}`)
        .join(', ')}.`,
    `every query is sent as POST /api/chunk/search ${JSON.stringify(r.request.body)} with X-API-Version: V2; latency is client-measured ` +
      `(SDK call, one query at a time), after ${r.options.warmup_queries} unjudged warm-up queries per type`,
    `loaded ${fmt(r.collection.documents)} documents (one chunk each, plain title + text) in ${r.load.requests} requests of ${r.options.batch}: ` +
      `${fmt(r.load.wall_ms / 1000, 1)} s; service start ${fmt(r.service_start_ms)} ms; ` +
      `load average ${fmt(r.load_average.start, 2)} before loading, ${fmt(r.load_average.end, 2)} after the last search (${os.cpus().length} CPUs)`,
  ];
  return lines.join('\n');
}
