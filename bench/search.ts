// The search suite: a corpus loaded through the API, then a fixed, seeded set of queries run through
// `POST /api/chunk/search` (V2, one at a time) and, for the same queries, straight on the engines.
// Figures: p50 / p99 latency of each, their ratio, and in between the service's own retrieval called
// in-process (the statements it sends, without HTTP, auth, loading rows, highlights or analytics).
//
//   API        POST /api/chunk/search over node:http keep-alive, with an organization API key
//   retrieval  retrieve() from server/search/retrieval, in-process: every engine call the service makes
//   raw        the engines answering the same top 10: the held vectors queried directly, else the kNN
//              statement the service writes (semantic), the in-memory BM25 index queried directly (bm25,
//              and fulltext, which is BM25 over the query's words and the lexical engine's matches of
//              words the dataset lacks), both lists plus reciprocal rank fusion (hybrid); a tag filter's
//              chunks from the BM25 index's list of the tag
//
// Query embedding (the built-in embedder) happens outside the raw timing and is timed on its own,
// so the API's figure can be read without it.
import http from 'node:http';
import os from 'node:os';
import { PerformanceObserver, constants as perfConstants } from 'node:perf_hooks';
import type { Knex } from 'knex';
import { Client as TypesenseClient } from 'typesense';
import { createClient, type Client } from '../sdk/src/generated/client/index.js';
import { createDataset, createOrganization, createOrganizationApiKey, searchChunks } from '../sdk/src/generated/sdk.gen.js';
import type { ChunkFilter, ChunkReqPayload } from '../sdk/src/generated/types.gen.js';
import { loadConfig, type Config } from '../server/config.js';
import type { DatasetRow } from '../server/domain/datasets.js';
import { embedderFor } from '../server/engines/embeddings/index.js';
import { PhaseProfiler } from './cpuprof.js';
import { cpuDelta, descendantCpu, ownThreadsCpu } from './procs.js';
import { STRICT_OUTBOUND } from '../server/engines/outbound.js';
import { handlers } from '../server/handlers/index.js';
import { startService, type RunningService } from '../server/main.js';
import { type Bm25Query, prepareBm25 } from '../server/search/retrieval/bm25/index.js';
import type { DatasetIndex } from '../server/search/retrieval/bm25/memory.js';
import type { Ranked } from '../server/search/retrieval/bm25/topK.js';
import { selectiveLimit } from '../server/search/filters/passing.js';
import { kept } from '../server/search/filters/held.js';
import { hybridWindow, reciprocalRankFusion } from '../server/search/retrieval/hybrid.js';
import { retrieve } from '../server/search/retrieval/index.js';
import { scoreOf, useIterativeScan, withScanSettings } from '../server/search/retrieval/semantic.js';
import type { HeldVectors, Nearest } from '../server/search/retrieval/vectors/index.js';
import type { Hit, SearchType } from '../server/search/types.js';
import { sharedArray } from '../server/search/sharedArrays.js';
import { distanceOperators, vectorLiteral, type DistanceMetric } from '../server/store/vectors.js';
import { innerText } from '../server/domain/chunks/content.js';
import { type BulkDataset, type BulkSteps, BulkWriter, buildVectorIndex, rawLexical } from './bulk.js';
import { corpusStats, generateCorpus, prng } from './corpus.js';
import { startTantivyPeer, type TantivyPeer } from './peer/tantivy.js';
import { ADMIN_KEY, type Mode, type ModeEnvironment } from './modes.js';
import { fmt, mean, percentile, stopwatch, table } from './report.js';

/** Corpus size when --chunks is not given: the issue's 100,000, or 20,000 on PGlite (~150 chunks/s to load). */
export const DEFAULT_CHUNKS: Record<Mode, number> = { embedded: 20_000, full: 100_000 };
/** Queries run before measuring each variant (through every path), not counted. */
const WARMUP_QUERIES = 20;
const PAGE_SIZE = 10;
/** Rounds of the queries the peer runs before the service starts. */
const PEER_ROUNDS = 3;
/** Chunks per load request (the API's limit) and load requests in flight. */
const LOAD_BATCH = 120;
const LOAD_CONCURRENCY = 2;
/** Chunks per batch of the bulk path. */
const BULK_BATCH = 2000;
/**
 * Time one variant's measurement may take: past it, no further query is started (once at least
 * MIN_BUDGET_QUERIES are measured), and the result says how many were.
 */
const VARIANT_BUDGET_MS = 120_000;
/** A variant whose first request takes longer than this is reported from that request alone. */
const SINGLE_REQUEST_MS = 30_000;
const MIN_BUDGET_QUERIES = 20;
/** Queries of each variant sent again with timers on, for the breakdown of the API's time. */
const BREAKDOWN_QUERIES = 50;
/** The filtered variants keep the tag whose share of the corpus is nearest to this. */
const TAG_SHARE = 0.1;
/** The selective filtered variants keep the tag whose share is nearest to this. */
const RARE_TAG_SHARE = 0.01;

export interface SearchOptions {
  /** Corpus size; null for the mode's default (DEFAULT_CHUNKS). */
  chunks: number | null;
  seed: number;
  /** Measured queries per variant. */
  queries: number;
  /** Load the corpus by the bulk path (bulk.ts) instead of the API: for corpora the API would take hours to load. */
  bulk: boolean;
  /** A V8 CPU profile of each variant's measured queries (all three paths; see cpuprof.ts). */
  cpuProfile?: boolean;
}

type Step = 'api' | 'retrieval' | 'raw';
const STEPS: Step[] = ['api', 'retrieval', 'raw'];

interface Variant {
  name: string;
  type: SearchType;
  filter: ChunkFilter | null;
}

interface Latency {
  p50: number;
  p90: number;
  p99: number;
  mean: number;
  max: number;
}

export interface VariantResult {
  name: string;
  search_type: SearchType;
  filter: ChunkFilter | null;
  available: boolean;
  /** Why the API refused it (bm25 before it exists). */
  unavailable_reason?: string;
  note?: string;
  /** Fewer than --queries when the variant is too slow for its time budget. */
  queries_measured?: number;
  warmup_queries?: number;
  latency_ms?: Record<Step, Latency | null>;
  /** API p50 / raw p50, API p99 / raw p99: the API's overhead over the engines. */
  ratio?: { p50: number | null; p99: number | null };
  /** API latency minus the query's embedding time (semantic and hybrid embed the query). */
  api_excluding_embedding_ms?: Latency | null;
  retrieval_excluding_embedding_ms?: Latency | null;
  /** Mean hits per query, by path; mean share of the API's top 10 that the raw top 10 holds. */
  mean_hits?: Record<Step, number | null>;
  overlap_api_raw?: number | null;
  /** Queries whose API ids (in order) equal retrieve()'s: the API adds no reordering or loss. */
  api_equals_retrieval?: number | null;
  /** Semantic: the share of the true top 10 (exact search over the same vectors and filter) the API returned, mean and worst over the queries. */
  recall_at_10?: { mean: number; min: number } | null;
  /** Load average (1 min) before and after the variant: other work on the machine shows here. */
  loadavg?: [number, number];
  /** Where the machine's CPU went while the variant ran (all three paths), per query, warm-up included; see machineShare. */
  cpu_per_query?: CpuShare;
  /** Where an API request's time goes (a separate pass with timers on; its figures are not the ones above). */
  breakdown?: Breakdown;
  /**
   * The same measurement in the first pass (variants in the listed order); the figures above come
   * from the second (in reverse order), so that no variant's figure hangs on how early in the run
   * it was measured.
   */
  first_pass?: { latency_ms: Record<Step, Latency | null>; api_excluding_embedding_ms: Latency | null; loadavg: [number, number] };
  /** Every measured query's latency, by path, in query order (ms). */
  latencies_ms?: Record<Step, number[] | null>;
}

export interface Breakdown {
  requests: number;
  /** Means per request, ms. */
  client_ms: number;
  handler_ms: number;
  /** HTTP, JSON, request validation and authentication (its SQL included). */
  outside_handler_ms: number;
  /** Every SQL statement, inside and outside the handler, by statement (mean ms and calls per request). */
  sql: { statement: string; ms: number; calls: number }[];
  /** Highlighting the page (on the highlighting threads, hand-over included). */
  highlight_ms: number;
}

export interface SearchResult {
  options: SearchOptions & { chunks: number; warmup_queries: number; page_size: number };
  corpus: ReturnType<typeof corpusStats>;
  engines: { store: string; lexical: string; workflows: string };
  service_start_ms: number;
  load: {
    /** `api`: POST /api/chunk; `bulk`: straight into the engines (bulk.ts), the vector index built last. */
    path: 'api' | 'bulk';
    chunks: number;
    batch: number;
    concurrency: number;
    wall_s: number;
    chunks_per_s: number;
    batch_p50_ms: number;
    batch_p99_ms: number;
    /** Bulk: the time in each step, summed over the batches, and the vector index's build. */
    steps_ms?: BulkSteps & { vector_index: number };
  };
  counts: { chunks: number; vectors: number; lexical: number };
  filter_tag: { tag: string; share: number };
  rare_filter_tag: { tag: string; share: number };
  /** How long the dataset's in-memory BM25 index took to build after the load (searches wait for it). */
  bm25_index_build_ms: number;
  /** How long holding the dataset's vectors in memory took after the load (null: not held, pgvector answers). */
  vector_index_build_ms: number | null;
  /**
   * The held vectors' graph, which grows behind them (vectors/graph.js): how long it went on growing
   * after they were held (the passes wait for it; its growth while they were read is not counted),
   * and how far; then, after the passes, how far it had grown and what its calibration found (null:
   * not held).
   */
  vector_graph: {
    grow_ms: number;
    graphed: number;
    at_end: { graphed: number; growing: boolean; recall: number | null; walk_faster: boolean | null };
  } | null;
  /**
   * The peer engine on the same texts and queries, BM25 top page in-process: before the service
   * started, and beside the service's bm25 measurement (the rounds just before and after it, second
   * pass), which the goal compares with; or why it could not run.
   */
  peer: { engine: string; chunks: number; build_ms: number; bm25_top: Latency; beside_bm25: Latency | null } | { unavailable: string };
  queries: { count: number; words: { min: number; max: number; mean: number }; sample: string[] };
  embedding_ms: Latency;
  /** EMBEDDING_MODEL_NAME of the dataset. */
  embedding_model: string;
  goals: { checks: { what: string; value: number | null; met: boolean | null }[] };
  variants: VariantResult[];
  /** EXPLAIN (ANALYZE, BUFFERS) of the statements behind the median query, by name. */
  plans: Record<string, string>;
  /** Planner statistics of the tables when the queries ran. */
  table_stats: Record<string, unknown>[];
  autovacuum_wait_s: number;
  /** When the tables had never been analyzed (PGlite): ANALYZE, then every variant again. */
  after_analyze: {
    analyze_ms: number;
    /** The peer beside this pass's bm25 (as SearchResult.peer.beside_bm25). */
    peer_beside_bm25: Latency | null;
    goals: SearchResult['goals'];
    variants: VariantResult[];
    plans: Record<string, string>;
    table_stats: Record<string, unknown>[];
  } | null;
}

export async function runSearchBench(modeEnv: ModeEnvironment, options: SearchOptions, log: (line: string) => void): Promise<SearchResult> {
  const chunks = options.chunks ?? DEFAULT_CHUNKS[modeEnv.mode];
  // Let go of once loaded: the service runs in this process, and a million documents held in its
  // heap slow its garbage collection (at 100,000 chunks, one more million held made bm25's p50 a
  // third slower and its p99 twice as long).
  let corpus: ChunkReqPayload[] | null = generateCorpus({ count: chunks, seed: options.seed });
  const stats = corpusStats(corpus);
  let bodies: Buffer[] = [];
  if (!options.bulk) for (let i = 0; i < corpus.length; i += LOAD_BATCH) bodies.push(Buffer.from(JSON.stringify(corpus.slice(i, i + LOAD_BATCH))));
  const queries = queriesFrom(corpus, options.queries, options.seed + 1000);
  const warmQueries = queriesFrom(corpus, WARMUP_QUERIES, options.seed + 2000);
  // The peer before the service starts: nothing else loads the machine then either. It stays up
  // to be measured again beside the service's bm25.
  const { peer, peerProcess } = await peerBm25(corpus, queries, log);

  const env = await modeEnv.freshEnv();
  const config = loadConfig(env);
  const started = stopwatch();
  const service = await startService(config);
  const serviceStartMs = started().wallMs;
  const engines = { store: service.services.store.kind, lexical: service.services.lexical.kind, workflows: service.services.workflows.kind };
  log(`service on ${service.url} (${engines.store}, ${engines.lexical}, ${engines.workflows}) in ${fmt(serviceStartMs)} ms`);
  const db = service.services.store.db;
  try {
    const admin = createClient({ baseUrl: service.url, auth: () => ADMIN_KEY });
    const { dataset, apiKey } = await setUp(admin);
    const datasetRow = (await db<DatasetRow>('datasets').where({ id: dataset.id }).first())!;

    // Load through the API, as a client would, or by the bulk path when asked.
    const load = options.bulk ? await loadInBulk(config, db, dataset, corpus, log) : await loadThroughApi(service, dataset.id, bodies, log);
    corpus = null;
    bodies = [];
    log(`loaded in ${fmt(load.wall_s, 1)} s (${fmt(load.chunks_per_s)} chunks/s)`);
    const raw = rawEngines(config, db, dataset);
    const counts = {
      chunks: await countRows(db, 'chunks', dataset.id),
      vectors: await countRows(db, 'chunk_vectors', dataset.id),
      lexical: await raw.lexicalCount(),
    };
    for (const [what, n] of Object.entries(counts)) if (n !== chunks) throw new Error(`after the load the dataset holds ${n} ${what}, expected ${chunks}`);

    const filterTag = await tagNearest(db, dataset.id, chunks, TAG_SHARE);
    const tagFilter: ChunkFilter = { must: [{ field: 'tag_set', match_any: [filterTag.tag] }] };
    log(`filter: tag_set match_any ${filterTag.tag} (${fmt(filterTag.share * 100, 1)}% of chunks)`);
    const rareTag = await tagNearest(db, dataset.id, chunks, RARE_TAG_SHARE);
    const rareFilter: ChunkFilter = { must: [{ field: 'tag_set', match_any: [rareTag.tag] }] };
    log(`selective filter: tag_set match_any ${rareTag.tag} (${fmt(rareTag.share * 100, 2)}% of chunks)`);
    const buildStarted = performance.now();
    const bm25Index = await service.services.bm25.ready(dataset.id);
    if (!bm25Index) throw new Error('the in-memory BM25 index was not built');
    const bm25IndexBuildMs = Math.round(performance.now() - buildStarted);
    log(`in-memory BM25 index built in ${fmt(bm25IndexBuildMs)} ms`);
    const vectorsStarted = performance.now();
    const held = await service.services.vectors.ready(dataset.id);
    const vectorIndexBuildMs = Math.round(performance.now() - vectorsStarted);
    log(held ? `vectors held in memory in ${fmt(vectorIndexBuildMs)} ms` : 'vectors not held in memory (pgvector answers)');
    const graphStarted = performance.now();
    const graphed = held ? await graphGrown(held) : 0;
    const graphGrowMs = Math.round(performance.now() - graphStarted);
    // The graph also grows while the vectors are read: this is only the wait that is left after.
    if (held) log(`their graph held ${graphed} slots ${fmt(graphGrowMs)} ms after the vectors were held`);

    // Query vectors, computed outside every timing; embedding time measured on its own.
    const embedder = embedderFor({ EMBEDDING_MODEL_NAME: dataset.model, EMBEDDING_SIZE: dataset.size }, STRICT_OUTBOUND);
    const vectors = new Map<string, string>();
    const embedMs = new Map<string, number>();
    // One call a query: the local model caches query vectors, so only the first call embeds (and the
    // service, sharing that cache in this process, then finds every query's vector there).
    for (const q of [...warmQueries, ...queries]) {
      const t0 = performance.now();
      const [vector] = await embedder.embed([q], 'query');
      embedMs.set(q, performance.now() - t0);
      vectors.set(q, vectorLiteral(vector));
    }

    // bm25 last: where it is very slow, it cannot hold up the others.
    const variants: Variant[] = [
      { name: 'semantic', type: 'semantic', filter: null },
      { name: 'fulltext', type: 'fulltext', filter: null },
      { name: 'hybrid', type: 'hybrid', filter: null },
      { name: `semantic, tag ${filterTag.tag}`, type: 'semantic', filter: tagFilter },
      { name: `fulltext, tag ${filterTag.tag}`, type: 'fulltext', filter: tagFilter },
      { name: 'bm25', type: 'bm25', filter: null },
      { name: `bm25, tag ${rareTag.tag}`, type: 'bm25', filter: rareFilter },
      { name: `hybrid, tag ${rareTag.tag}`, type: 'hybrid', filter: rareFilter },
    ];
    // BM25's query terms and weights, computed outside every timing as the query vectors are.
    const bm25Queries = new Map<string, Bm25Query | null>();
    for (const q of [...warmQueries, ...queries])
      bm25Queries.set(q, (await prepareBm25(db, { dataset: datasetRow, query: q, limit: PAGE_SIZE, offset: 0 })).query);
    const bm25 = rawBm25(bm25Index, bm25Queries);
    const profiler = options.cpuProfile ? new PhaseProfiler(`search-${modeEnv.mode}-${chunks}`) : null;
    const ctx: MeasureContext = { service, apiKey, dataset, datasetRow, raw, bm25, bm25Index, held, vectors, embedMs, profiler, peer: peerProcess };

    // Autovacuum (full mode) analyzes the tables during and after the load: let it finish first.
    const autovacuumWaitS = await autovacuumIdle(db, 180_000);
    if (autovacuumWaitS > 0) log(`waited ${fmt(autovacuumWaitS, 1)} s for autovacuum to finish`);
    if (modeEnv.mode === 'full') log(`vacuumed, analyzed and checkpointed in ${fmt(await settle(db), 1)} s`);
    const statsBefore = await tableStats(service, db);
    const pass = await measurePass(ctx, variants, warmQueries, queries, log);
    if ('bm25_top' in peer) peer.beside_bm25 = pass.peerBeside;
    const plans = await explainPlans(service, db, datasetRow, raw, vectors, pass, variants);

    // PGlite has no autovacuum: tables written through the service are never analyzed, and the
    // planner guesses. The same queries again after ANALYZE show what statistics change.
    let afterAnalyze: SearchResult['after_analyze'] = null;
    if (statsBefore.some((t) => Number(t.reltuples) < 0 && Number(t.n_live_tup) > 0)) {
      log('the tables have no planner statistics (never analyzed): ANALYZE, then the same queries again');
      const t0 = performance.now();
      await db.raw('analyze chunks, chunk_vectors');
      const analyzeMs = performance.now() - t0;
      const again = await measurePass(ctx, variants, warmQueries, queries, (line) => log(`after ANALYZE: ${line}`));
      const plansAfter = await explainPlans(service, db, datasetRow, raw, vectors, again, variants);
      afterAnalyze = {
        analyze_ms: Math.round(analyzeMs),
        goals: goals(again.results, peer, again.peerBeside),
        peer_beside_bm25: again.peerBeside,
        variants: again.results,
        plans: plansAfter,
        table_stats: await tableStats(service, db),
      };
    }

    profiler?.close();
    const vectorGraph = held && { grow_ms: graphGrowMs, graphed, at_end: await graphAtEnd(held) };
    const embedding = latency([...embedMs.entries()].filter(([q]) => queries.includes(q)).map(([, ms]) => ms));
    return {
      options: { ...options, chunks, warmup_queries: WARMUP_QUERIES, page_size: PAGE_SIZE },
      corpus: stats,
      engines,
      service_start_ms: Math.round(serviceStartMs),
      load,
      counts,
      autovacuum_wait_s: autovacuumWaitS,
      filter_tag: filterTag,
      rare_filter_tag: rareTag,
      bm25_index_build_ms: bm25IndexBuildMs,
      vector_index_build_ms: held ? vectorIndexBuildMs : null,
      vector_graph: vectorGraph,
      peer,
      queries: {
        count: queries.length,
        words: (() => {
          const n = queries.map((q) => q.split(' ').length);
          return { min: Math.min(...n), max: Math.max(...n), mean: Math.round(mean(n) * 100) / 100 };
        })(),
        sample: queries.slice(0, 10),
      },
      embedding_ms: embedding,
      embedding_model: dataset.model,
      goals: goals(pass.results, peer, pass.peerBeside),
      variants: pass.results,
      plans,
      table_stats: statsBefore,
      after_analyze: afterAnalyze,
    };
  } finally {
    peerProcess?.close();
    await service.stop();
  }
}

/** Tantivy's BM25 over the chunks' texts (as the service indexes them) and the same queries. */
async function peerBm25(
  corpus: ChunkReqPayload[],
  queries: string[],
  log: (line: string) => void,
): Promise<{ peer: SearchResult['peer']; peerProcess: TantivyPeer | null }> {
  let peerProcess: TantivyPeer | null = null;
  try {
    peerProcess = await startTantivyPeer(
      corpus.map((c) => innerText(c.chunk_html ?? '')),
      queries,
      PAGE_SIZE,
      log,
    );
    const bm25Top = latency(await peerProcess.search(PEER_ROUNDS));
    log(
      `peer ${peerProcess.engine}: BM25 top ${PAGE_SIZE} p50 ${fmt(bm25Top.p50, 2)} ms, p99 ${fmt(bm25Top.p99, 2)} ms (index built in ${fmt(peerProcess.build_ms)} ms)`,
    );
    return {
      peer: { engine: peerProcess.engine, chunks: corpus.length, build_ms: Math.round(peerProcess.build_ms), bm25_top: bm25Top, beside_bm25: null },
      peerProcess,
    };
  } catch (error) {
    peerProcess?.close();
    const reason = error instanceof Error ? error.message : String(error);
    log(`peer unavailable: ${reason}`);
    return { peer: { unavailable: reason }, peerProcess: null };
  }
}

interface PassOutcome {
  results: VariantResult[];
  /** The queries at each variant's median and p99 API latency. */
  medianQuery: Record<string, string>;
  p99Query: Record<string, string>;
  /** Variants stopped by the time budget, or measured on the probe alone (single). */
  slow: Set<string>;
  single: Set<string>;
  /** Each variant's first request: its query and the statements the service sent (`?` placeholders). */
  probes: Record<string, { query: string; statements: Statement[] }>;
  /** The peer's BM25 latency in the rounds just before and after the second pass measured bm25 (null: no peer). */
  peerBeside: Latency | null;
}

/**
 * Every variant measured twice. The first pass, in the listed order: a probe through the SDK, then
 * the paths (measureVariant), then the breakdown. The second, in reverse order: the paths again,
 * whose latencies the result reports (with the first pass's beside them). Early in a run every path
 * runs slower, the raw in-process ones too (most likely while V8 still optimizes the code the
 * variants share): a single pass charged that to whichever variants came first.
 */
async function measurePass(
  ctx: MeasureContext,
  variants: Variant[],
  warmQueries: string[],
  queries: string[],
  log: (line: string) => void,
): Promise<PassOutcome> {
  const apiClient = createClient({ baseUrl: ctx.service.url, auth: () => ctx.apiKey });
  const db = ctx.service.services.store.db;
  const results: VariantResult[] = [];
  const medianQuery: Record<string, string> = {};
  const p99Query: Record<string, string> = {};
  const slow = new Set<string>();
  const single = new Set<string>();
  const probes: PassOutcome['probes'] = {};
  for (const variant of variants) {
    // One request through the SDK first: a type the API refuses (bm25 before it existed) is reported
    // as unavailable, a slow one gets fewer queries (VARIANT_BUDGET_MS), and the statements the
    // service sends are recorded (BM25's raw path is its one statement).
    const sent: { sql: string; bindings: unknown[] }[] = [];
    const listener = (data: { sql: string; bindings?: unknown[] }) => sent.push({ sql: data.sql, bindings: [...(data.bindings ?? [])] });
    db.on('query', listener);
    const t0 = performance.now();
    // Sent again once on a network error: the set-up's keep-alive socket may have timed out during the load.
    const probe = await once(() =>
      searchChunks({
        client: apiClient,
        headers: { 'SVC-Dataset': ctx.dataset.id, 'X-API-Version': 'V2' },
        body: { query: warmQueries[0], search_type: variant.type, page_size: PAGE_SIZE, filters: variant.filter },
      }),
    ).finally(() => db.off('query', listener));
    const probeMs = performance.now() - t0;
    if (!probe.data) {
      const reason = `the API answered ${probe.response?.status}: ${JSON.stringify(probe.error).slice(0, 200)}`;
      log(`${variant.name}: unavailable (${reason})`);
      results.push({ name: variant.name, search_type: variant.type, filter: variant.filter, available: false, unavailable_reason: reason });
      continue;
    }
    const statements = sent
      .filter((x) => /^\s*(with|select)\b/i.test(x.sql) && !/set_config/.test(x.sql))
      .map((x) => ({ sql: questionMarks(x.sql, x.bindings.length), bindings: x.bindings }));
    probes[variant.name] = { query: warmQueries[0], statements };
    if (probeMs > SINGLE_REQUEST_MS) {
      // Too slow to measure within the budget: the probe is the one figure.
      log(`${variant.name}: one request took ${fmt(probeMs / 1000, 1)} s; not measured further`);
      slow.add(variant.name);
      single.add(variant.name);
      medianQuery[variant.name] = warmQueries[0];
      results.push({
        name: variant.name,
        search_type: variant.type,
        filter: variant.filter,
        available: true,
        queries_measured: 1,
        warmup_queries: 0,
        note: `one request only (${fmt(probeMs / 1000, 1)} s, cold): over ${SINGLE_REQUEST_MS / 1000} s, not measured further`,
        latency_ms: { api: latency([probeMs]), retrieval: null, raw: null },
        ratio: { p50: null, p99: null },
        latencies_ms: { api: [round2(probeMs)], retrieval: null, raw: null },
      });
      continue;
    }
    log(`${variant.name}: ${warmQueries.length} warm-up + ${queries.length} queries…`);
    await ctx.profiler?.start();
    const r = await measureVariant(ctx, variant, warmQueries, queries);
    if (ctx.profiler) log(`${variant.name}: CPU profile ${await ctx.profiler.stop(variant.name.replace(/\W+/g, '-'))}`);
    const measured = queries.slice(0, r.queries_measured);
    if (r.queries_measured! < queries.length) {
      log(`${variant.name}: stopped after ${r.queries_measured} queries (${VARIANT_BUDGET_MS / 1000} s budget)`);
      slow.add(variant.name);
    } else {
      r.breakdown = await breakdown(ctx, variant, measured.slice(0, BREAKDOWN_QUERIES));
    }
    results.push(r);
    const at = r.latencies_ms!.api!;
    const sorted = at.map((ms, i) => [ms, i] as const).sort((a, b) => a[0] - b[0]);
    medianQuery[variant.name] = measured[sorted[Math.floor(sorted.length / 2)][1]];
    p99Query[variant.name] = measured[sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.99) - 1)][1]];
    log(
      `${variant.name}: API p50 ${fmt(r.latency_ms!.api!.p50, 2)} ms, p99 ${fmt(r.latency_ms!.api!.p99, 2)} ms; ` +
        `raw p50 ${fmt(r.latency_ms!.raw?.p50, 2)} ms, p99 ${fmt(r.latency_ms!.raw?.p99, 2)} ms; ratio p50 ${fmt(r.ratio?.p50, 2)}`,
    );
    const cpu = r.cpu_per_query;
    if (cpu)
      log(
        `${variant.name}: a query's three paths: ${fmt(cpu.wall_ms, 2)} ms wall; CPU ms: main thread ${fmt(cpu.main_thread_ms, 2)} (GC ${fmt(cpu.gc.ms, 2)}), ` +
          `other threads ${fmt(cpu.other_threads_ms, 2)}, ${Object.entries(cpu.engines_ms)
            .map(([name, ms]) => `${name} ${fmt(ms, 2)}`)
            .join(', ')}`,
      );
  }
  let peerBeside: Latency | null = null;
  for (const variant of [...variants].reverse()) {
    const i = results.findIndex((r) => r.name === variant.name);
    if (!results[i].available || slow.has(variant.name)) continue;
    const first = results[i];
    // The peer beside the service's bm25, in the same minutes: this machine's speed drifts.
    const beside = ctx.peer && variant.type === 'bm25' && !variant.filter;
    const before = beside ? await ctx.peer!.search(1) : [];
    const again = await measureVariant(ctx, variant, warmQueries, queries, false);
    if (beside) {
      peerBeside = latency([...before, ...(await ctx.peer!.search(1))]);
      log(`peer beside bm25: p50 ${fmt(peerBeside.p50, 2)} ms, p99 ${fmt(peerBeside.p99, 2)} ms`);
    }
    results[i] = {
      ...again,
      recall_at_10: first.recall_at_10,
      breakdown: first.breakdown,
      first_pass: { latency_ms: first.latency_ms!, api_excluding_embedding_ms: first.api_excluding_embedding_ms ?? null, loadavg: first.loadavg! },
    };
    log(
      `${variant.name}: second pass: API p50 ${fmt(goalLatency(results[i]).p50, 2)} ms${again.api_excluding_embedding_ms ? ' less the embedding' : ''} (first pass ${fmt(goalLatency(first).p50, 2)} ms)`,
    );
  }
  return { results, medianQuery, p99Query, slow, single, probes, peerBeside };
}

/**
 * Brings PostgreSQL to the steady state a loaded dataset reaches on its own: the new rows vacuumed
 * and analyzed, and their pages written out. Otherwise autovacuum and the checkpoint that follow a
 * bulk load run in the middle of the measurements, at whatever time they happen to start.
 */
async function settle(db: Knex): Promise<number> {
  const t0 = performance.now();
  await db.raw('vacuum (analyze)');
  await db.raw('checkpoint');
  return (performance.now() - t0) / 1000;
}

/** Waits (up to `maxMs`) until no autovacuum worker runs; the seconds waited. PGlite has none. */
export async function autovacuumIdle(db: Knex, maxMs: number): Promise<number> {
  const t0 = performance.now();
  for (;;) {
    let busy = 0;
    try {
      const { rows } = await db.raw<{ rows: { n: string }[] }>(`select count(*) as n from pg_stat_activity where backend_type = 'autovacuum worker'`);
      busy = Number(rows[0].n);
    } catch {
      return 0;
    }
    if (busy === 0 || performance.now() - t0 > maxMs) return Math.round((performance.now() - t0) / 100) / 10;
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

// ---------------------------------------------------------------------------------------------
// Set-up and load

interface Dataset extends BulkDataset {
  organizationId: string;
}

/** Set-up calls are not measured: retry once on a network error (a keep-alive socket timed out). */
async function once<T extends { response?: Response }>(call: () => Promise<T>): Promise<T> {
  try {
    const result = await call();
    if (result.response) return result;
  } catch {
    // fall through to the retry
  }
  return call();
}

/** An organization, a dataset and a read-only organization API key, through the SDK. */
async function setUp(admin: Client): Promise<{ dataset: Dataset; apiKey: string }> {
  const org = await once(() => createOrganization({ client: admin, body: { name: 'bench-search' } }));
  if (!org.data) throw new Error(`createOrganization answered ${org.response?.status}: ${JSON.stringify(org.error)}`);
  const headers = { 'SVC-Organization': org.data.id };
  const ds = await once(() => createDataset({ client: admin, headers, body: { dataset_name: 'bench-search' } }));
  if (!ds.data) throw new Error(`createDataset answered ${ds.response?.status}: ${JSON.stringify(ds.error)}`);
  const key = await once(() => createOrganizationApiKey({ client: admin, headers, body: { name: 'bench-search', role: 0 } }));
  if (!key.data) throw new Error(`createOrganizationApiKey answered ${key.response?.status}: ${JSON.stringify(key.error)}`);
  const conf = ds.data.server_configuration;
  return {
    dataset: {
      id: ds.data.id,
      organizationId: org.data.id,
      model: conf.EMBEDDING_MODEL_NAME ?? 'builtin',
      size: conf.EMBEDDING_SIZE ?? 384,
      metric: (conf.DISTANCE_METRIC ?? 'cosine') as DistanceMetric,
    },
    apiKey: key.data.api_key,
  };
}

/**
 * One POST over the keep-alive agent. A request on a reused socket that the server has just closed
 * (idle past its keep-alive timeout: PGlite runs in this thread, so a slow query can hold the event
 * loop past it) is sent again once on a new socket, as Node's documentation advises.
 */
async function post(agent: http.Agent, url: URL, headers: Record<string, string>, body: Buffer): Promise<{ status: number; text: string }> {
  try {
    return await postOnce(agent, url, headers, body);
  } catch (error) {
    if ((error as { reusedSocket?: boolean }).reusedSocket && (error as { code?: string }).code === 'ECONNRESET') return postOnce(agent, url, headers, body);
    throw error;
  }
}

function postOnce(agent: http.Agent, url: URL, headers: Record<string, string>, body: Buffer): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      url,
      { method: 'POST', agent, headers: { ...headers, 'content-type': 'application/json', 'content-length': String(body.length) } },
      (response) => {
        const parts: Buffer[] = [];
        response.on('data', (part: Buffer) => parts.push(part));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, text: Buffer.concat(parts).toString('utf8') }));
        response.on('error', reject);
      },
    );
    request.on('error', (error) => reject(Object.assign(error, { reusedSocket: request.reusedSocket })));
    request.end(body);
  });
}

/** The corpus POSTed to /api/chunk in batches, LOAD_CONCURRENCY requests in flight (as the ingest suite does). */
async function loadThroughApi(service: RunningService, datasetId: string, bodies: Buffer[], log: (line: string) => void): Promise<SearchResult['load']> {
  log(`loading ${fmt(bodies.length * LOAD_BATCH)} chunks through POST /api/chunk (${LOAD_BATCH} per request, ${LOAD_CONCURRENCY} in flight)…`);
  const url = new URL('/api/chunk', service.url);
  const headers = { authorization: ADMIN_KEY, 'svc-dataset': datasetId };
  const agent = new http.Agent({ keepAlive: true, maxSockets: LOAD_CONCURRENCY });
  const latencies = new Array<number>(bodies.length);
  let next = 0;
  let done = 0;
  let stored = 0;
  const clock = stopwatch();
  const worker = async () => {
    while (next < bodies.length) {
      const i = next++;
      const t0 = performance.now();
      const { status, text } = await post(agent, url, headers, bodies[i]);
      latencies[i] = performance.now() - t0;
      if (status !== 200) throw new Error(`POST /api/chunk (batch ${i}) answered ${status}: ${text.slice(0, 500)}`);
      stored += (JSON.parse(text) as { chunk_metadata: unknown[] }).chunk_metadata.length;
      if (++done % Math.max(1, Math.round(bodies.length / 10)) === 0) {
        log(`  ${fmt(stored)} chunks, ${fmt(clock().wallMs / 1000)} s, last batch ${fmt(latencies[i])} ms`);
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: LOAD_CONCURRENCY }, worker));
  } finally {
    agent.destroy();
  }
  return loadFigures('api', stored, LOAD_BATCH, clock().wallMs, latencies);
}

/** What a load reports: its pace over the whole run and its batches' latency. */
function loadFigures(path: SearchResult['load']['path'], chunks: number, batch: number, wallMs: number, latencies: number[]): SearchResult['load'] {
  return {
    path,
    chunks,
    batch,
    concurrency: LOAD_CONCURRENCY,
    wall_s: Math.round(wallMs / 100) / 10,
    chunks_per_s: Math.round((chunks * 1000) / wallMs),
    batch_p50_ms: Math.round(percentile(latencies, 50)),
    batch_p99_ms: Math.round(percentile(latencies, 99)),
  };
}

/**
 * The corpus written straight into the engines (bulk.ts), BULK_BATCH chunks a batch and two batches
 * in flight (one embeds while the other's rows are written), the vector index built after the last,
 * then the tables analyzed.
 */
async function loadInBulk(config: Config, db: Knex, dataset: Dataset, corpus: ChunkReqPayload[], log: (line: string) => void): Promise<SearchResult['load']> {
  log(`loading ${fmt(corpus.length)} chunks by the bulk path (${BULK_BATCH} a batch, ${LOAD_CONCURRENCY} in flight), the vector index last…`);
  const writer = new BulkWriter(db, rawLexical(config, db), dataset);
  const latencies: number[] = [];
  const clock = stopwatch();
  let next = 0;
  let written = 0;
  const worker = async () => {
    while (next < corpus.length) {
      const slice = corpus.slice(next, (next += BULK_BATCH));
      const t0 = performance.now();
      await writer.write(slice);
      latencies.push(performance.now() - t0);
      written += slice.length;
      if (latencies.length % Math.max(1, Math.round(corpus.length / BULK_BATCH / 20)) === 0) {
        log(`  ${fmt(written)} chunks, ${fmt(clock().wallMs / 1000)} s, last batch ${fmt(latencies.at(-1)!)} ms`);
      }
    }
  };
  await Promise.all(Array.from({ length: LOAD_CONCURRENCY }, worker));
  const indexStarted = performance.now();
  const built = await buildVectorIndex(db, dataset, config.store.kind === 'postgres' ? '4GB' : '1GB');
  const vectorIndexMs = performance.now() - indexStarted;
  if (built) log(`vector index built in ${fmt(vectorIndexMs / 1000, 1)} s`);
  // Statistics for the planner, as after any bulk load (autovacuum would get to it later).
  await db.raw('analyze chunks, chunk_vectors');
  return { ...loadFigures('bulk', written, BULK_BATCH, clock().wallMs, latencies), steps_ms: { ...writer.steps, vector_index: vectorIndexMs } };
}

async function countRows(db: Knex, tableName: string, datasetId: string): Promise<number> {
  return Number((await db(tableName).where({ dataset_id: datasetId }).count<{ n: string }[]>('* as n'))[0].n);
}

/** The tag whose share of the dataset's chunks is nearest to `share`. */
async function tagNearest(db: Knex, datasetId: string, total: number, share: number): Promise<{ tag: string; share: number }> {
  const { rows } = await db.raw<{ rows: { tag: string; n: string }[] }>(
    'select tag, count(*) as n from chunks, unnest(tag_set) as tag where dataset_id = ? group by tag order by tag',
    [datasetId],
  );
  const shares = rows.map((r) => ({ tag: r.tag, share: Number(r.n) / total }));
  shares.sort((a, b) => Math.abs(a.share - share) - Math.abs(b.share - share));
  return { tag: shares[0].tag, share: Math.round(shares[0].share * 10_000) / 10_000 };
}

// ---------------------------------------------------------------------------------------------
// Queries

/** The corpus's function words (corpus.ts), and `id` from its `<code>word_id</code>`: not query words. */
const NOT_QUERY_WORDS = new Set(
  (
    'the a an of to in and or for with on at by from as is are was be it this that these you your we our ' +
    'can will may should not when if then than into after before each every all any some more most only also id'
  ).split(' '),
);

/**
 * `count` queries of 2–4 distinct content words, each taken from one chunk picked at random (seeded),
 * so every query matches at least one chunk, and common words come up as often as they do in the text.
 */
export function queriesFrom(corpus: ChunkReqPayload[], count: number, seed: number): string[] {
  const random = prng(seed);
  const out: string[] = [];
  while (out.length < count) {
    const html = corpus[Math.floor(random() * corpus.length)].chunk_html ?? '';
    const words = [
      ...new Set(
        html
          .replace(/<[^>]+>/g, ' ')
          .replace(/&[a-z]+;/g, ' ')
          .toLowerCase()
          .match(/[a-z]+/g) ?? [],
      ),
    ].filter((w) => !NOT_QUERY_WORDS.has(w));
    const n = 2 + Math.floor(random() * 3);
    if (words.length < n) continue;
    for (let i = 0; i < n; i++) {
      const j = i + Math.floor(random() * (words.length - i));
      [words[i], words[j]] = [words[j], words[i]];
    }
    out.push(words.slice(0, n).join(' '));
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The raw engines

interface RawEngines {
  /** The top `n` semantic hits: the service's kNN statement, in its transaction. */
  semantic(vector: string, filter: ChunkFilter | null, n: number): Promise<Hit[]>;
  /** The true top `n` ids: every filtered vector's distance computed, no index (for recall). */
  exactSemantic(vector: string, filter: ChunkFilter | null, n: number): Promise<string[]>;
  /** The documents the lexical engine holds for the dataset (on PostgreSQL, the chunks with terms). */
  lexicalCount(): Promise<number>;
  /** The SQL of `semantic`, for EXPLAIN. */
  semanticSql(vector: string, filter: ChunkFilter | null, n: number): { sql: string; bindings: unknown[] };
  /** The given chunks at their exact distances to the vector, as semantic scores. */
  scored(vector: string, ids: string[]): Promise<Hit[]>;
}

/** The one filter the suite uses (tag_set match_any one tag), as the service's filter compiler writes it. */
function tagOf(filter: ChunkFilter | null): string | null {
  const condition = filter?.must?.[0] as { match_any?: string[] } | undefined;
  return condition?.match_any?.[0] ?? null;
}
const TAG_CONDITION = '"chunks"."tag_set" && ?::text[]';

function rawEngines(config: Config, db: Knex, dataset: Dataset): RawEngines {
  const op = distanceOperators[dataset.metric];
  const d = dataset.size;
  // The statement nearestByIndex (server/search/retrieval/semantic.ts) builds, written out.
  const distance = `(chunk_vectors.embedding::vector(${d})) ${op} ?::vector(${d})`;
  const score = { cosine: `(1 - (${distance}))`, dot: `(-(${distance}))`, euclidean: `(1 / (1 + (${distance})))`, manhattan: `(1 / (1 + (${distance})))` }[
    dataset.metric
  ];
  const semanticSql = (vector: string, filter: ChunkFilter | null, n: number) => {
    const tag = tagOf(filter);
    return {
      sql:
        `select chunk_vectors.chunk_id as id, ${distance} as distance, ${score} as score ` +
        `from chunk_vectors inner join chunks on chunks.id = chunk_vectors.chunk_id ` +
        `where chunk_vectors.dataset_id = '${dataset.id}'${tag ? ` and ${TAG_CONDITION}` : ''} order by distance asc limit ?`,
      bindings: [vector, vector, ...(tag ? [[tag]] : []), n],
    };
  };
  const exactSemantic = async (vector: string, filter: ChunkFilter | null, n: number): Promise<string[]> => {
    const tag = tagOf(filter);
    // `+ 0`: an expression the index does not serve, so every distance is computed and sorted.
    const { rows } = await db.raw<{ rows: { id: string }[] }>(
      `select chunk_vectors.chunk_id as id from chunk_vectors inner join chunks on chunks.id = chunk_vectors.chunk_id ` +
        `where chunk_vectors.dataset_id = '${dataset.id}'${tag ? ` and ${TAG_CONDITION}` : ''} order by (${distance}) + 0, chunk_vectors.chunk_id limit ?`,
      [...(tag ? [[tag]] : []), vector, n],
    );
    return rows.map((r) => r.id);
  };
  const semantic = async (vector: string, filter: ChunkFilter | null, n: number): Promise<Hit[]> => {
    const { sql, bindings } = semanticSql(vector, filter, n);
    const scan = async (on: Knex) => (await on.raw<{ rows: { id: string; distance: number; score: number }[] }>(sql, bindings as Knex.RawBinding[])).rows;
    // With the HNSW settings the service's scan has (a transaction only to raise them).
    const rows = await withScanSettings(db, n, scan);
    // Relaxed order: sorted again, as the service does.
    return rows.sort((a, b) => a.distance - b.distance || (a.id < b.id ? -1 : 1)).map((r) => ({ id: r.id, score: r.score }));
  };

  const scored = async (vector: string, ids: string[]): Promise<Hit[]> =>
    ids.length === 0
      ? []
      : (
          await db.raw<{ rows: Hit[] }>(
            `select chunk_id as id, ${score} as score from chunk_vectors where dataset_id = '${dataset.id}' and chunk_id = any(?::uuid[])`,
            [vector, ids],
          )
        ).rows;

  if (config.lexical.kind === 'postgres')
    return {
      semantic,
      exactSemantic,
      semanticSql,
      scored,
      lexicalCount: async () => Number((await db('chunks').where('dataset_id', dataset.id).whereNotNull('bm25_terms').count({ n: '*' }))[0].n),
    };
  const { url, apiKey, collection } = config.lexical;
  const client = new TypesenseClient({ nodes: [{ url: url.replace(/\/+$/, '') }], apiKey, connectionTimeoutSeconds: 10, logLevel: 'error' });
  const documents = () => client.collections<{ id: string; dataset_id: string; text: string }>(collection).documents();
  return {
    semantic,
    exactSemantic,
    semanticSql,
    scored,
    lexicalCount: async () => (await documents().search({ q: '*', query_by: 'text', filter_by: `dataset_id:=\`${dataset.id}\``, per_page: 1 })).found,
  };
}

/** BM25's top `n` for a query, from the in-memory index queried directly; `split`: a long walk shared with the helper thread, as the service does alone (not in hybrid). */
type RawBm25 = (query: string, filter: ChunkFilter | null, n: number, split: boolean) => Promise<Hit[]>;

/**
 * BM25's raw path: the dataset's in-memory index (the engine BM25 runs on) queried directly, with
 * the query's terms and weights computed beforehand; a tag filter's chunks are the index's own list
 * of the tag: a selective tag's each scored, a broader tag's walked, passing over the others.
 */
function rawBm25(index: DatasetIndex, prepared: Map<string, Bm25Query | null>): RawBm25 {
  return async (query, filter, n, split) => {
    const q = prepared.get(query);
    if (!q) return [];
    const tag = tagOf(filter);
    const tagged = tag ? liveTagged(index, tag) : null;
    let ranked: Ranked[];
    if (!tagged) ranked = index.top(q.terms, q.weights, q.parameters, n, 0, { split });
    else if (tagged.length <= selectiveLimit(index.chunks)) ranked = index.best(index.matchAmong(tagged, q.terms, q.weights, q.parameters), n, 0);
    else {
      const skipped = sharedArray(Uint8Array, index.capacity).fill(1);
      for (const d of tagged) skipped[d] = 0;
      ranked = index.top(q.terms, q.weights, q.parameters, n, 0, { split, skipped });
    }
    return ranked.map((r) => ({ id: index.idOf(r.ordinal), score: r.score }));
  };
}

/** The live chunks of the index's list of the tag, ascending. */
const liveTagged = (index: DatasetIndex, tag: string) => kept(index.tagged(tag), (d) => !index.isDead(d));

/**
 * A tag filter's semantic top `n` from the engines directly, the tag's chunks from the index's list
 * of it: a selective tag's chunks (at most the service's selective limit) at their exact distances
 * in the held vectors; a broader tag's, the graph's nearest candidates kept when they hold the tag,
 * deeper until `n` do. Null (at once) when no vectors are held (pgvector's filtered scan answers).
 */
function heldAmongTagged(ctx: MeasureContext, vector: string, tag: string | null, n: number): Promise<Hit[]> | null {
  const held = ctx.held;
  if (!held || !tag) return null;
  const index = ctx.bm25Index;
  const ordinals = liveTagged(index, tag);
  const values = Float32Array.from(JSON.parse(vector) as number[]);
  const hits = (found: Nearest) => found.ids.map((id, i) => ({ id, score: scoreOf[ctx.dataset.metric](found.distances[i]) }));
  if (ordinals.length <= selectiveLimit(index.chunks)) {
    // As the service asks: the worker keeps the tag's list for its next search.
    return held.nearestInList(values, n, `${held.version} raw ${tag}`, () => index.idWordsOf(ordinals, ordinals.length)).then(hits);
  }
  const tagged = new Uint8Array(index.capacity);
  for (const d of ordinals) tagged[d] = 1;
  const share = ordinals.length / Math.max(index.chunks, 1);
  return (async () => {
    for (let depth = Math.ceil(n * Math.min(64, Math.max(4, 4 / share))); ; depth *= 8) {
      const found = await held.nearest(values, depth, []);
      const kept = hits(found).filter((h) => tagged[index.ordinalOfId(h.id) ?? -1] === 1);
      if (kept.length >= n || found.ids.length < depth) return kept.slice(0, n);
    }
  })();
}

/**
 * The raw engines' top `PAGE_SIZE` for a variant (the query's vector computed beforehand). BM25's
 * engine is the service's in-memory index, queried directly (rawBm25); the peer engine (Tantivy,
 * peerBm25) stands apart for what another engine does.
 */
async function rawTop(ctx: MeasureContext, variant: Variant, query: string): Promise<Hit[]> {
  const vector = ctx.vectors.get(query)!;
  const held = variant.filter ? null : ctx.held;
  const tag = tagOf(variant.filter);
  switch (variant.type) {
    case 'semantic':
      if (held) return heldTop(ctx, held, vector, PAGE_SIZE);
      return heldAmongTagged(ctx, vector, tag, PAGE_SIZE) ?? ctx.raw.semantic(vector, variant.filter, PAGE_SIZE);
    // Full-text is BM25 over the query's words and the engine's matches of the words the dataset
    // lacks; the suite's queries are made of the corpus's words, so the engine has nothing to add.
    case 'fulltext':
    case 'bm25':
      return ctx.bm25(query, variant.filter, PAGE_SIZE, true);
    case 'hybrid': {
      // Both lists as long as the service's fusion window, at once; the keyword hits the index
      // did not give join the semantic list at their own distances; then reciprocal rank fusion.
      const window = hybridWindow(PAGE_SIZE);
      if (held) {
        // The graph walked (or the codes scanned, by the worker alone until BM25's list is handed
        // over) in the worker while BM25 scores here, as the service does.
        let keywords: Hit[] = [];
        const also = async () => {
          keywords = await ctx.bm25(query, variant.filter, window, false);
          return keywords.map((h) => h.id);
        };
        const found = await held.nearestWith(Float32Array.from(JSON.parse(vector) as number[]), window, also, { shareScan: 'delivered' });
        const semantic = found.ids.map((id, i) => ({ id, score: scoreOf[ctx.dataset.metric](found.distances[i]) }));
        return reciprocalRankFusion([
          { hits: semantic, weight: 1 },
          { hits: keywords, weight: 1 },
        ]).slice(0, PAGE_SIZE);
      }
      // A tag filter from the held engines (a selective tag: every chunk of it at its exact distance).
      const exact = heldAmongTagged(ctx, vector, tag, window);
      const [indexed, keyword] = await Promise.all([exact ?? ctx.raw.semantic(vector, variant.filter, window), ctx.bm25(query, variant.filter, window, false)]);
      if (exact)
        return reciprocalRankFusion([
          { hits: indexed, weight: 1 },
          { hits: keyword, weight: 1 },
        ]).slice(0, PAGE_SIZE);
      const given = new Set(indexed.map((h) => h.id));
      const joined = await ctx.raw.scored(
        vector,
        keyword.map((h) => h.id).filter((id) => !given.has(id)),
      );
      const semantic = [...indexed, ...joined].sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1)).slice(0, window);
      return reciprocalRankFusion([
        { hits: semantic, weight: 1 },
        { hits: keyword, weight: 1 },
      ]).slice(0, PAGE_SIZE);
    }
    default:
      throw new Error(`no raw path for ${variant.type}`);
  }
}

/** Waits for the held vectors' graph to stop growing; the slots it holds. */
async function graphGrown(held: HeldVectors): Promise<number> {
  for (;;) {
    const { graphed, growing } = await held.graph();
    if (!growing) return graphed;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

async function graphAtEnd(held: HeldVectors): Promise<NonNullable<SearchResult['vector_graph']>['at_end']> {
  const graph = await held.graph();
  const calibration = await held.calibration();
  return { ...graph, recall: calibration?.recall ?? null, walk_faster: calibration?.walkFaster ?? null };
}

/** The held vectors queried directly: the graph's candidates ranked by exact distance. */
async function heldTop(ctx: MeasureContext, held: HeldVectors, vector: string, n: number): Promise<Hit[]> {
  const found = await held.nearest(Float32Array.from(JSON.parse(vector) as number[]), n, []);
  return found.ids.map((id, i) => ({ id, score: scoreOf[ctx.dataset.metric](found.distances[i]) }));
}

// ---------------------------------------------------------------------------------------------
// Measuring

interface Statement {
  sql: string;
  bindings: unknown[];
}

interface MeasureContext {
  service: RunningService;
  apiKey: string;
  dataset: Dataset;
  datasetRow: DatasetRow;
  raw: RawEngines;
  bm25: RawBm25;
  /** The dataset's BM25 postings and tags held in memory, which the raw paths read directly. */
  bm25Index: DatasetIndex;
  /** The dataset's vectors held in memory, the engine unfiltered semantic search runs on (null: pgvector). */
  held: HeldVectors | null;
  vectors: Map<string, string>;
  embedMs: Map<string, number>;
  profiler: PhaseProfiler | null;
  /** The peer engine, up to be measured beside the service's bm25. */
  peer: TantivyPeer | null;
}

export interface CpuShare {
  /** Wall time of a query's three paths, and the CPU of each part, in ms. */
  wall_ms: number;
  main_thread_ms: number;
  other_threads_ms: number;
  engines_ms: Record<string, number>;
  /** Garbage collection on the main thread: pauses and their time. */
  gc: { count: number; ms: number; major: number; major_ms: number };
  heap_used_mb: number;
}

/**
 * Starts counting the CPU of this process's threads, of the engines' processes and of the main
 * thread's garbage collection; stop() gives them per query. It tells what grows with the dataset
 * besides retrieval itself: the same request costs more when something else holds the cores.
 */
function machineShare(): { stop: (queries: number) => CpuShare } {
  const threads0 = ownThreadsCpu();
  const engines0 = descendantCpu();
  const gc = { count: 0, ms: 0, major: 0, major_ms: 0 };
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      gc.count++;
      gc.ms += entry.duration;
      if ((entry as { detail?: { kind?: number } }).detail?.kind === perfConstants.NODE_PERFORMANCE_GC_MAJOR) {
        gc.major++;
        gc.major_ms += entry.duration;
      }
    }
  });
  observer.observe({ entryTypes: ['gc'] });
  const started = performance.now();
  return {
    stop: (queries) => {
      const wall = performance.now() - started;
      observer.disconnect();
      const threads = ownThreadsCpu();
      const each = (ms: number) => Math.round((ms / Math.max(queries, 1)) * 100) / 100;
      return {
        wall_ms: each(wall),
        main_thread_ms: each(threads.main - threads0.main),
        other_threads_ms: each(threads.others - threads0.others),
        engines_ms: Object.fromEntries(Object.entries(cpuDelta(engines0, descendantCpu())).map(([name, ms]) => [name, each(ms)])),
        gc: { count: each(gc.count), ms: each(gc.ms), major: gc.major, major_ms: Math.round(gc.major_ms) },
        heap_used_mb: Math.round(process.memoryUsage().heapUsed / 1e6),
      };
    },
  };
}

/**
 * Every query through the three paths, one at a time. The order of the paths rotates from one query
 * to the next, so that no path always runs first on a query (and always finds the engines' caches
 * colder than the others do). `withRecall`: also the semantic recall (an exact search per query:
 * slow at 1M, and the same in both passes).
 */
async function measureVariant(ctx: MeasureContext, variant: Variant, warm: string[], queries: string[], withRecall = true): Promise<VariantResult> {
  const url = new URL('/api/chunk/search', ctx.service.url);
  const headers = { authorization: ctx.apiKey, 'svc-dataset': ctx.dataset.id, 'x-api-version': 'V2' };
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const runs: Record<Step, (q: string) => Promise<string[]>> = {
    api: async (q) => {
      const body = Buffer.from(
        JSON.stringify({ query: q, search_type: variant.type, page_size: PAGE_SIZE, ...(variant.filter ? { filters: variant.filter } : {}) }),
      );
      const { status, text } = await post(agent, url, headers, body);
      if (status !== 200) throw new Error(`POST /api/chunk/search (${variant.name}, "${q}") answered ${status}: ${text.slice(0, 500)}`);
      return (JSON.parse(text) as { chunks: { chunk: { id: string } }[] }).chunks.map((c) => c.chunk.id);
    },
    retrieval: async (q) =>
      (
        await retrieve(ctx.service.services, variant.type, {
          dataset: ctx.datasetRow,
          query: q,
          filter: variant.filter,
          limit: PAGE_SIZE,
          offset: 0,
          scoreThreshold: undefined,
          prefix: false,
        })
      ).hits.map((h) => h.id),
    raw: async (q) => (await rawTop(ctx, variant, q)).map((h) => h.id),
  };
  const times: Record<Step, number[]> = { api: [], retrieval: [], raw: [] };
  const ids: Record<Step, string[][]> = { api: [], retrieval: [], raw: [] };
  const load0 = os.loadavg()[0];
  const share = machineShare();
  const started = performance.now();
  const elapsed = () => performance.now() - started;
  let warmed = 0;
  const measured: string[] = [];
  try {
    const all = [...warm, ...queries];
    for (let i = 0; i < all.length; i++) {
      // A slow variant: the warm-up is cut at a tenth of the budget, the measured queries at the budget.
      if (i < warm.length && i > 0 && elapsed() > VARIANT_BUDGET_MS / 10) i = warm.length;
      if (i >= warm.length && measured.length >= MIN_BUDGET_QUERIES && elapsed() > VARIANT_BUDGET_MS) break;
      const q = all[i];
      if (i < warm.length) warmed++;
      else measured.push(q);
      for (let k = 0; k < STEPS.length; k++) {
        const step = STEPS[(i + k) % STEPS.length];
        const t0 = performance.now();
        const found = await runs[step](q).catch((error: unknown) => {
          throw new Error(`${variant.name}, ${step}, query ${i} "${q}": ${error instanceof Error ? error.message : String(error)}`, { cause: error });
        });
        const ms = performance.now() - t0;
        if (i >= warm.length) {
          times[step].push(ms);
          ids[step].push(found);
        }
      }
    }
  } finally {
    agent.destroy();
  }
  const load1 = os.loadavg()[0];
  const cpuPerQuery = share.stop(measured.length + warmed);

  const embeds = variant.type === 'semantic' || variant.type === 'hybrid';
  const minusEmbedding = (values: number[]) => latency(values.map((ms, i) => ms - ctx.embedMs.get(measured[i])!));
  const api = latency(times.api);
  const raw = latency(times.raw);
  const overlap = mean(ids.api.map((a, i) => (a.length === 0 ? 1 : a.filter((id) => ids.raw[i].includes(id)).length / a.length)));
  return {
    name: variant.name,
    search_type: variant.type,
    filter: variant.filter,
    available: true,
    queries_measured: measured.length,
    warmup_queries: warmed,
    latency_ms: { api, retrieval: latency(times.retrieval), raw },
    ratio: { p50: api.p50 / raw.p50, p99: api.p99 / raw.p99 },
    api_excluding_embedding_ms: embeds ? minusEmbedding(times.api) : null,
    retrieval_excluding_embedding_ms: embeds ? minusEmbedding(times.retrieval) : null,
    mean_hits: {
      api: mean(ids.api.map((x) => x.length)),
      retrieval: mean(ids.retrieval.map((x) => x.length)),
      raw: mean(ids.raw.map((x) => x.length)),
    },
    overlap_api_raw: overlap,
    api_equals_retrieval: ids.api.filter((a, i) => a.join() === ids.retrieval[i].join()).length,
    recall_at_10: withRecall && variant.type === 'semantic' ? await semanticRecall(ctx, variant, measured, ids.api) : null,
    loadavg: [Math.round(load0 * 100) / 100, Math.round(load1 * 100) / 100],
    cpu_per_query: cpuPerQuery,
    latencies_ms: {
      api: times.api.map(round2),
      retrieval: times.retrieval.map(round2),
      raw: times.raw.map(round2),
    },
  };
}

/** Recall@10 of the API's semantic answers against exact search over the same vectors (measured after the timing). */
async function semanticRecall(ctx: MeasureContext, variant: Variant, queries: string[], answers: string[][]): Promise<{ mean: number; min: number }> {
  const recalls: number[] = [];
  for (let i = 0; i < queries.length; i++) {
    const truth = await ctx.raw.exactSemantic(ctx.vectors.get(queries[i])!, variant.filter, PAGE_SIZE);
    if (truth.length === 0) continue;
    const answered = new Set(answers[i]);
    recalls.push(truth.filter((id) => answered.has(id)).length / truth.length);
  }
  return { mean: mean(recalls), min: Math.min(...recalls) };
}

/**
 * The same API requests again, with timers: around the search handler (what is outside it is HTTP,
 * JSON, validation and auth) and around every SQL statement (knex's query events).
 */
async function breakdown(ctx: MeasureContext, variant: Variant, queries: string[]): Promise<Breakdown> {
  const url = new URL('/api/chunk/search', ctx.service.url);
  const headers = { authorization: ctx.apiKey, 'svc-dataset': ctx.dataset.id, 'x-api-version': 'V2' };
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const db = ctx.service.services.store.db;
  const table = handlers as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
  const original = table.search_chunks;
  let handlerMs = 0;
  table.search_chunks = async (...args: unknown[]) => {
    const t0 = performance.now();
    try {
      return await original(...args);
    } finally {
      handlerMs += performance.now() - t0;
    }
  };
  type Event = { __knexQueryUid?: string; sql?: string };
  const started = new Map<string, number>();
  const sql = new Map<string, { ms: number; calls: number }>();
  const onQuery = (q: Event) => q.__knexQueryUid && started.set(q.__knexQueryUid, performance.now());
  const onDone = (_: unknown, q: Event) => {
    const t0 = q.__knexQueryUid ? started.get(q.__knexQueryUid) : undefined;
    if (t0 === undefined) return;
    started.delete(q.__knexQueryUid!);
    const flat = (q.sql ?? '?')
      .replace(/\s+/g, ' ')
      .replace(/\((?:\$\d+)(?:, ?\$\d+)+\)/g, '(…)')
      .trim();
    const key = flat.length > 110 ? `${flat.slice(0, 109)}…` : flat;
    const t = sql.get(key) ?? { ms: 0, calls: 0 };
    t.ms += performance.now() - t0;
    t.calls++;
    sql.set(key, t);
  };
  const highlighter = ctx.service.services.highlighter;
  const highlight = highlighter.page;
  let highlightMs = 0;
  highlighter.page = async (...args) => {
    const t0 = performance.now();
    try {
      return await highlight.apply(highlighter, args);
    } finally {
      highlightMs += performance.now() - t0;
    }
  };
  let clientMs = 0;
  db.on('query', onQuery);
  db.on('query-response', onDone);
  db.on('query-error', onDone);
  try {
    for (const q of queries) {
      const body = Buffer.from(
        JSON.stringify({ query: q, search_type: variant.type, page_size: PAGE_SIZE, ...(variant.filter ? { filters: variant.filter } : {}) }),
      );
      const t0 = performance.now();
      const { status, text } = await post(agent, url, headers, body);
      clientMs += performance.now() - t0;
      if (status !== 200) throw new Error(`POST /api/chunk/search (${variant.name}, "${q}") answered ${status}: ${text.slice(0, 300)}`);
    }
  } finally {
    table.search_chunks = original;
    highlighter.page = highlight;
    db.off('query', onQuery);
    db.off('query-response', onDone);
    db.off('query-error', onDone);
    agent.destroy();
  }
  const n = queries.length;
  return {
    requests: n,
    client_ms: round2(clientMs / n),
    handler_ms: round2(handlerMs / n),
    outside_handler_ms: round2((clientMs - handlerMs) / n),
    sql: [...sql].map(([statement, t]) => ({ statement, ms: round2(t.ms / n), calls: Math.round((t.calls / n) * 100) / 100 })).sort((a, b) => b.ms - a.ms),
    highlight_ms: round2(highlightMs / n),
  };
}

const round2 = (ms: number) => Math.round(ms * 100) / 100;

function latency(values: number[]): Latency {
  return {
    p50: round2(percentile(values, 50)),
    p90: round2(percentile(values, 90)),
    p99: round2(percentile(values, 99)),
    mean: round2(mean(values)),
    max: round2(Math.max(...values)),
  };
}

/** The goals: keyword and hybrid p50 / p99, semantic p50, a selective filter's cost, the peer ratio. */
const GOAL = { keywordP50: 15, keywordP99: 60, semanticP50: 10, semanticRecall: 0.95, filteredTimes: 3, peerTimes: 5 };

/** The API latency the goals are checked on: less the query's embedding where one is made. */
export function goalLatency(r: Pick<VariantResult, 'api_excluding_embedding_ms' | 'latency_ms'>): Latency {
  return (r.api_excluding_embedding_ms ?? r.latency_ms!.api)!;
}

/**
 * The issue's goals, on API latency (embedding excluded): bm25, fulltext and hybrid p50 ≤ 15 ms and
 * p99 ≤ 60 ms; semantic p50 ≤ 10 ms; with the 1 % filter, p50 at most 3× the same type unfiltered;
 * bm25 p50 at most 5× the peer engine's; semantic recall@10 against exact search at least 0.95.
 */
/** `peerBeside`: the peer's latency beside the service's bm25, which the ratio uses when there is one. */
function goals(variants: VariantResult[], peer: SearchResult['peer'] | null, peerBeside: Latency | null): SearchResult['goals'] {
  const checks: SearchResult['goals']['checks'] = [];
  const check = (what: string, value: number | null, limit: number, atLeast = false) =>
    checks.push({
      what: `${what} ${atLeast ? '≥' : '≤'} ${limit}`,
      value: value == null ? null : Math.round(value * 100) / 100,
      met: value == null ? null : atLeast ? value >= limit : value <= limit,
    });
  for (const v of variants) {
    if (!v.available || !v.latency_ms) continue;
    if (v.recall_at_10) check(`${v.name}: recall@10 against exact search`, v.recall_at_10.mean, GOAL.semanticRecall, true);
    const plain = variants.find((u) => u.search_type === v.search_type && !u.filter);
    if (v.filter && plain?.latency_ms && v.name !== plain.name) {
      if (v.search_type === 'bm25' || v.search_type === 'hybrid')
        check(`${v.name}: p50 / unfiltered p50`, goalLatency(v).p50 / goalLatency(plain).p50, GOAL.filteredTimes);
      continue;
    }
    if (v.search_type === 'semantic') check(`${v.name}: API p50 ms`, goalLatency(v).p50, GOAL.semanticP50);
    else {
      check(`${v.name}: API p50 ms`, goalLatency(v).p50, GOAL.keywordP50);
      check(`${v.name}: API p99 ms`, goalLatency(v).p99, GOAL.keywordP99);
    }
    if (v.search_type === 'bm25' && peer && 'bm25_top' in peer)
      check(
        peerBeside ? 'bm25: API p50 / peer p50 beside it' : 'bm25: API p50 / peer p50',
        goalLatency(v).p50 / (peerBeside ?? peer.bm25_top).p50,
        GOAL.peerTimes,
      );
  }
  return { checks };
}

// ---------------------------------------------------------------------------------------------
// Query plans and table state

/**
 * EXPLAIN (ANALYZE, BUFFERS) of the statements behind each variant's median API query: the raw
 * statements, and the service's own where they differ (the semantic count, the full-text statement
 * with its total), captured by logging the SQL retrieve() sends.
 */
async function explainPlans(
  service: RunningService,
  db: Knex,
  datasetRow: DatasetRow,
  raw: RawEngines,
  vectors: Map<string, string>,
  pass: PassOutcome,
  variants: Variant[],
): Promise<Record<string, string>> {
  const plans: Record<string, string> = {};
  const explain = async (sql: string, bindings: readonly unknown[], n?: number, analyze = true) => {
    const run = async (trx: Knex.Transaction) => {
      if (n !== undefined) await useIterativeScan(trx, n);
      const { rows } = await trx.raw<{ rows: Record<string, string>[] }>(
        `explain ${analyze ? '(analyze, buffers) ' : ''}${sql}`,
        bindings as Knex.RawBinding[],
      );
      // The query vector's 384 numbers and the candidates' 1,000 ids say nothing about the plan.
      return rows
        .map((r) =>
          Object.values(r)[0]
            .replace(/'\[[-0-9.,e]{40,}\]'/g, "'[…]'")
            .replace(/'\{[0-9a-f,-]{200,}\}'/g, (ids) => `'{…${ids.split(',').length} ids…}'`),
        )
        .join('\n');
    };
    return db.transaction(run);
  };
  for (const variant of variants) {
    const probe = pass.probes[variant.name];
    if (!probe) continue;
    if (pass.slow.has(variant.name)) {
      // Measured on few queries or one: the statements of the probe, not run again when too slow.
      const analyze = !pass.single.has(variant.name);
      let k = 0;
      for (const s of probe.statements.filter(
        (x) => !/from "(api_keys|datasets|organizations)"|^\s*insert|select \* from "chunks" where "dataset_id" = \? and "id" in/i.test(x.sql),
      )) {
        plans[`${variant.name} · service statement ${++k}${analyze ? '' : ', not run (EXPLAIN only)'} ("${probe.query}"): ${s.sql.slice(0, 120)}`] =
          await explain(s.sql, s.bindings, undefined, analyze);
      }
      continue;
    }
    for (const [which, q] of [
      ['p50', pass.medianQuery[variant.name]],
      ['p99', pass.p99Query[variant.name]],
    ] as const) {
      const vector = vectors.get(q)!;
      if (variant.type === 'semantic') {
        const s = raw.semanticSql(vector, variant.filter, PAGE_SIZE);
        plans[`${variant.name} · ${which} query · kNN ("${q}")`] = await explain(s.sql, s.bindings, PAGE_SIZE);
      }
      let k = 0;
      for (const s of await statementsOf(service, datasetRow, variant, q)) {
        // The kNN statement's plan is above; the others (counts, full-text, candidate checks) here.
        if (/order by "distance"/.test(s.sql) && variant.type === 'semantic') continue;
        const n = /embedding::vector/.test(s.sql) ? hybridWindow(PAGE_SIZE) : undefined;
        plans[`${variant.name} · ${which} query · service statement ${++k} ("${q}"): ${s.sql.slice(0, 120)}`] = await explain(s.sql, s.bindings, n);
      }
    }
  }
  return plans;
}

/** The SELECT statements retrieve() sends for a query (knex's log), with `?` placeholders. */
async function statementsOf(service: RunningService, datasetRow: DatasetRow, variant: Variant, query: string): Promise<{ sql: string; bindings: unknown[] }[]> {
  const db = service.services.store.db;
  const sent: { sql: string; bindings: unknown[] }[] = [];
  const listener = (data: { sql: string; bindings?: unknown[] }) => sent.push({ sql: data.sql, bindings: [...(data.bindings ?? [])] });
  db.on('query', listener);
  try {
    await retrieve(service.services, variant.type, {
      dataset: datasetRow,
      query,
      filter: variant.filter,
      limit: PAGE_SIZE,
      offset: 0,
      scoreThreshold: undefined,
      prefix: false,
    });
  } finally {
    db.off('query', listener);
  }
  return sent
    .filter((s) => /^\s*(with|select)\b/i.test(s.sql) && !/set_config/.test(s.sql))
    .map((s) => ({ sql: questionMarks(s.sql, s.bindings.length), bindings: s.bindings }));
}

/** knex logs the SQL with $1, $2…; knex.raw wants `?` (the pg dialect numbers them in order, once each). */
function questionMarks(sql: string, bindings: number): string {
  let n = 0;
  const out = sql.replace(/\$(\d+)\b/g, (_, k: string) => {
    if (Number(k) !== ++n) throw new Error(`unexpected placeholder order in ${sql.slice(0, 200)}`);
    return '?';
  });
  if (n !== bindings) throw new Error(`${n} placeholders for ${bindings} bindings in ${sql.slice(0, 200)}`);
  return out;
}

/** When each table was last analyzed and how many rows the planner thinks it has. */
async function tableStats(service: RunningService, db: Knex): Promise<Record<string, unknown>[]> {
  try {
    const { rows } = await db.raw<{ rows: Record<string, unknown>[] }>(
      `select s.relname, s.n_live_tup, c.reltuples, s.last_analyze, s.last_autoanalyze, s.last_autovacuum
       from pg_stat_user_tables s join pg_class c on c.oid = s.relid
       where s.relname in ('chunks', 'chunk_vectors') order by s.relname`,
    );
    return rows;
  } catch (error) {
    return [{ error: error instanceof Error ? error.message : String(error), store: service.services.store.kind }];
  }
}

// ---------------------------------------------------------------------------------------------
// Printing

export function formatSearch(mode: string, r: SearchResult): string {
  const o = r.options;
  const ms = (v: number | null | undefined) => fmt(v, v != null && v < 10 ? 2 : 1);
  const variantTable = (variants: VariantResult[]) => {
    const rows: (string | number)[][] = [
      [
        'search',
        'API p50',
        'API p99',
        'raw p50',
        'raw p99',
        'API/raw p50',
        'API/raw p99',
        'API−embed p50',
        'API−embed p99',
        '1st pass p50',
        'retrieve() p50',
        'retrieve() p99',
        'hits',
        'top-10 overlap',
      ],
    ];
    for (const v of variants) {
      if (!v.available) {
        rows.push([v.name, 'unavailable', '', '', '', '', '', '', '', '', '', '', '', '']);
        continue;
      }
      const l = v.latency_ms!;
      rows.push([
        v.queries_measured! < r.queries.count ? `${v.name} (${v.queries_measured} quer${v.queries_measured === 1 ? 'y' : 'ies'})` : v.name,
        ms(l.api?.p50),
        ms(l.api?.p99),
        ms(l.raw?.p50),
        ms(l.raw?.p99),
        v.ratio?.p50 == null ? '–' : `${fmt(v.ratio.p50, 2)}×`,
        v.ratio?.p99 == null ? '–' : `${fmt(v.ratio.p99, 2)}×`,
        ms(v.api_excluding_embedding_ms?.p50),
        ms(v.api_excluding_embedding_ms?.p99),
        ms(v.first_pass && goalLatency(v.first_pass).p50),
        ms(l.retrieval?.p50),
        ms(l.retrieval?.p99),
        fmt(v.mean_hits?.api, 1),
        v.overlap_api_raw == null ? '–' : `${fmt(v.overlap_api_raw * 100)}%`,
      ]);
    }
    return table(rows);
  };
  const loads = (variants: VariantResult[]) => variants.flatMap((v) => v.loadavg ?? []);
  const notes = (variants: VariantResult[]) => [
    `load average (1 min) during the measurements: ${fmt(Math.min(...loads(variants)), 1)}–${fmt(Math.max(...loads(variants)), 1)} on ${os.cpus().length} CPUs (this run counts for about 1)`,
    `API ids equal to retrieve()'s, in order: ${variants
      .filter((v) => v.available && v.api_equals_retrieval != null)
      .map((v) => `${v.name} ${v.api_equals_retrieval}/${v.queries_measured}`)
      .join(', ')}`,
    `semantic recall@10 against exact search over the same vectors (mean, worst query): ${variants
      .filter((v) => v.recall_at_10)
      .map((v) => `${v.name} ${fmt(v.recall_at_10!.mean, 3)}, ${fmt(v.recall_at_10!.min, 1)}`)
      .join('; ')}`,
    ...variants.filter((v) => !v.available).map((v) => `unavailable: ${v.name}: ${v.unavailable_reason}`),
    ...variants.filter((v) => v.note).map((v) => `${v.name}: ${v.note}`),
  ];
  const goalLine = (g: SearchResult['goals']) =>
    `goals: ${g.checks.map((c) => `${c.what}: ${c.value == null ? '–' : fmt(c.value, 2)} ${c.met == null ? '' : c.met ? '✓' : '✗'}`).join('; ')}`;
  const a = r.after_analyze;
  return [
    `search · ${mode} (${r.engines.store}, ${r.engines.lexical}) · ${fmt(o.chunks)} chunks loaded ${r.load.path === 'bulk' ? 'by the bulk path' : 'through the API'} in ${fmt(r.load.wall_s, 1)} s ` +
      `(${fmt(r.load.chunks_per_s)} chunks/s, ${r.load.batch}/${r.load.path === 'bulk' ? 'batch' : 'request'} ×${r.load.concurrency}) · ${r.queries.count} queries of ` +
      `${r.queries.words.min}–${r.queries.words.max} words, page_size ${o.page_size}, ${o.warmup_queries} warm-up · seed ${o.seed}`,
    '',
    ...(a ? ['as loaded (the tables never analyzed):'] : []),
    variantTable(r.variants),
    '',
    `latencies in ms. API: POST /api/chunk/search (V2, organization key). raw: the engines' top ${o.page_size} for the same query, ` +
      `query embedded beforehand. retrieve(): the service's retrieval in-process (embedding included for semantic/hybrid). ` +
      `Every variant is measured twice, in the listed order then in reverse; the figures are the second pass's, ` +
      `and "1st pass p50" is the first pass's API p50 (less the embedding for semantic and hybrid).`,
    `query embedding (${r.embedding_model}, 384 dims, the first call for each query): p50 ${ms(r.embedding_ms.p50)} ms, p99 ${ms(r.embedding_ms.p99)} ms. ` +
      `filter: tag_set match_any ${r.filter_tag.tag}, ${fmt(r.filter_tag.share * 100, 1)}% of chunks; selective: ${r.rare_filter_tag.tag}, ` +
      `${fmt(r.rare_filter_tag.share * 100, 2)}%. in-memory BM25 index built in ${fmt(r.bm25_index_build_ms)} ms after the load.`,
    'bm25_top' in r.peer
      ? `peer: ${r.peer.engine}, BM25 top ${o.page_size} in-process over the same ${fmt(r.peer.chunks)} texts: p50 ${ms(r.peer.bm25_top.p50)} ms, ` +
        `p99 ${ms(r.peer.bm25_top.p99)} ms before the service started (index built in ${fmt(r.peer.build_ms)} ms)` +
        (r.peer.beside_bm25
          ? `; beside the service's bm25 (a round just before and after it, second pass): p50 ${ms(r.peer.beside_bm25.p50)} ms, p99 ${ms(r.peer.beside_bm25.p99)} ms.`
          : '.')
      : `peer: unavailable (${r.peer.unavailable})`,
    ...notes(r.variants),
    goalLine(r.goals),
    '',
    `where an API request's time goes (${r.variants.find((v) => v.breakdown)?.breakdown?.requests ?? 0} requests again with timers on; mean ms per request):`,
    ...r.variants.flatMap((v) => {
      const b = v.breakdown;
      if (!b) return [];
      const sqlMs = b.sql.reduce((sum, t) => sum + t.ms, 0);
      return [
        `  ${v.name}: ${fmt(b.client_ms, 2)} = outside the handler (HTTP, validation, auth) ${fmt(b.outside_handler_ms, 2)} + handler ${fmt(b.handler_ms, 2)}; ` +
          `SQL ${fmt(sqlMs, 2)} in ${fmt(
            b.sql.reduce((sum, t) => sum + t.calls, 0),
            1,
          )} statements; highlights ${fmt(b.highlight_ms ?? 0, 2)}:`,
        ...b.sql.slice(0, 6).map((t) => `      ${fmt(t.ms, 2).padStart(6)} ms ×${t.calls}  ${t.statement}`),
      ];
    }),
    ...(a ? ['', `after ANALYZE (${fmt(a.analyze_ms)} ms), the same queries again:`, variantTable(a.variants), ...notes(a.variants), goalLine(a.goals)] : []),
  ].join('\n');
}
