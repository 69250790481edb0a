// Semantic retrieval: the query's vector (the dataset's embedder, purpose 'query') against the
// dataset's vectors, with the filter evaluated on the `chunks` row.
//
// Once the dataset's vectors are held in memory (vectors/), they answer a search without a filter
// (the exact distances of the candidates of a graph walked in native code), one with a selective
// filter (the exact distances of the passing chunks, whose ids alone are read from the table), and
// one with a broad filter (the graph's nearest candidates checked against it, deeper until enough
// pass).
//
// Otherwise pgvector answers: for the manhattan metric through the dataset's partial HNSW index,
// and for the other metrics, which keep no such index (store/vectors.ts), by the same statements
// computing every distance. HNSW filters after it walks the graph: with a filter, the first
// `ef_search` candidates may hold few rows that pass. pgvector 0.8's iterative scan (relaxed order)
// keeps walking until enough rows pass or `hnsw.max_scan_tuples` is reached; relaxed order means the
// rows come back almost sorted, so they are sorted again here. A filter passing few chunks
// (filters/passing.ts) skips the walk: every passing chunk's distance is computed, exactly. If the
// index yields fewer rows than exist (the walk gave up), the same exact scan answers.
import type { Knex } from 'knex';
import { datasetConfig, type DatasetConfiguration } from '../../domain/datasetConfig.js';
import { datasetChunkCount, type DatasetRow } from '../../domain/datasets.js';
import { embedderFor, EmbeddingError } from '../../engines/embeddings/index.js';
import { badRequest } from '../../errors.js';
import type { Services } from '../../services.js';
import { distanceOperators, EF_SEARCH_STEP, hnswSettings, MAX_EF_SEARCH, type DistanceMetric } from '../../store/vectors.js';
import { ID_WORDS } from '../chunkIdWords.js';
import { heldPassing, tagFilterOf } from '../filters/held.js';
import { estimateFilter, narrowed, passingAmong, passingIdWords, passingQuery, selectiveLimit } from '../filters/passing.js';
import type { Hit, RetrievalRequest, RetrievalResult } from '../types.js';
import type { HeldVectors, Nearest, ScanSharing } from './vectors/index.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Score (higher is better) of a distance, as SQL over the distance expression `d`. */
export const scoreSql: Record<DistanceMetric, (d: string) => string> = {
  cosine: (d) => `(1 - ${d})`,
  dot: (d) => `(-${d})`, // <#> is the negated inner product
  euclidean: (d) => `(1 / (1 + ${d}))`,
  manhattan: (d) => `(1 / (1 + ${d}))`,
};

/** Score of a distance, as `scoreSql` computes it. */
export const scoreOf: Record<DistanceMetric, (d: number) => number> = {
  cosine: (d) => 1 - d,
  dot: (d) => -d,
  euclidean: (d) => 1 / (1 + d),
  manhattan: (d) => 1 / (1 + d),
};

/** The query embedded and the SQL pieces of a dataset's vector search. */
export interface SemanticQuery {
  datasetId: string;
  /** `(embedding::vector(D)) <op> ?::vector(D)`: the indexed expression, one binding. */
  distance: string;
  score: string;
  /** The query vector in pgvector's precision (float4): the held vectors' query. */
  readonly values: Float32Array;
  /** The same vector as a pgvector literal, the statements' binding; written when first asked for. */
  readonly vector: string;
}

/** Embeds the query with the dataset's embedder; an endpoint failure is the caller's 400. */
export async function semanticQuery(services: Services, request: RetrievalRequest): Promise<SemanticQuery> {
  const config: DatasetConfiguration = datasetConfig(request.dataset);
  // The id is spliced into the SQL (a partial index is only chosen for a literal that matches its predicate).
  if (!UUID.test(request.dataset.id)) throw new Error(`not a dataset id: ${request.dataset.id}`);
  let vector: number[];
  try {
    [vector] = request.vector ? [request.vector] : await embedderFor(config, services.config.outbound).embed([request.query], 'query');
  } catch (error) {
    if (error instanceof EmbeddingError) throw badRequest(`the query could not be embedded: ${error.message}`);
    throw error;
  }
  return vectorSearch(request.dataset, vector);
}

/**
 * The SQL pieces of a search of the dataset's vectors for `vector` (numbers, or a pgvector literal).
 * Each form is made from the other only when asked for: formatting the literal was a tenth of a
 * semantic search's time on the service's thread, and a search the held vectors answer needs none.
 */
export function vectorSearch(dataset: DatasetRow, vector: number[] | string): SemanticQuery {
  const config = datasetConfig(dataset);
  const dimension = config.EMBEDDING_SIZE;
  const distance = `(chunk_vectors.embedding::vector(${dimension})) ${distanceOperators[config.DISTANCE_METRIC]} ?::vector(${dimension})`;
  let values = typeof vector === 'string' ? null : Float32Array.from(vector);
  let literal = typeof vector === 'string' ? vector : null;
  return {
    datasetId: dataset.id,
    distance,
    score: scoreSql[config.DISTANCE_METRIC](`(${distance})`),
    get values() {
      return (values ??= Float32Array.from(JSON.parse(literal!) as number[]));
    },
    // Each float4 written as the shortest decimal that reads back as it: the statements see the held vectors' query.
    get vector() {
      return (literal ??= `[${values!.join(',')}]`);
    },
  };
}

/** The dataset's vectors. */
function datasetVectors(db: Knex, query: SemanticQuery): Knex.QueryBuilder {
  // A literal, so the planner can use the partial index `... where dataset_id = '<id>'`.
  return db.from('chunk_vectors').whereRaw(`chunk_vectors.dataset_id = '${query.datasetId}'`);
}

/** The dataset's vectors joined to their chunks, the filter applied. */
function candidates(db: Knex, query: SemanticQuery, request: RetrievalRequest): Knex.QueryBuilder {
  return passingQuery(db, request, datasetVectors(db, query).join('chunks', 'chunks.id', 'chunk_vectors.chunk_id'));
}

/** The columns of a `Row`: the chunk, and its vector's distance and score to the query. */
function rowColumns(db: Knex, query: SemanticQuery): (string | Knex.Raw)[] {
  return ['chunk_vectors.chunk_id as id', db.raw(`${query.distance} as distance`, [query.vector]), db.raw(`${query.score} as score`, [query.vector])];
}

interface Row {
  id: string;
  distance: number;
  score: number;
}

const byDistance = (a: Row, b: Row) => a.distance - b.distance || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

function passing(rows: Row[], threshold: number | null | undefined): Hit[] {
  return rows
    .filter((r) => Number.isFinite(r.score) && (threshold == null || r.score >= threshold))
    .sort(byDistance)
    .map((r) => ({ id: r.id, score: r.score }));
}

/** The candidate list for `n` rows: at least `n`, in steps, at most pgvector's maximum. */
function efSearch(n: number): number {
  return Math.min(MAX_EF_SEARCH, Math.max(1, Math.ceil(n / EF_SEARCH_STEP)) * EF_SEARCH_STEP);
}

/**
 * Sets, for the rest of the transaction, what an HNSW scan for `n` rows needs: a candidate list of
 * at least `n` (up to pgvector's maximum of 1000), and an iterative scan that goes on walking the graph
 * while too few rows pass the filter.
 */
export async function useIterativeScan(trx: Knex.Transaction, n: number): Promise<void> {
  const settings = Object.entries(hnswSettings(efSearch(n)));
  await trx.raw(`select ${settings.map(() => 'set_config(?, ?, true)').join(', ')}`, settings.flat());
}

/**
 * Runs an HNSW scan for `n` rows with the settings it needs: every connection starts with those of
 * the smallest candidate list (store/db.ts), so only a scan for more rows opens a transaction to
 * raise them.
 */
export async function withScanSettings<T>(db: Knex, n: number, scan: (on: Knex) => Promise<T>): Promise<T> {
  if (efSearch(n) === EF_SEARCH_STEP) return scan(db);
  return db.transaction(async (trx) => {
    await useIterativeScan(trx, n);
    return scan(trx);
  });
}

/**
 * The `n` nearest chunks passing the filter, through the HNSW index with an iterative scan. Every
 * connection starts with the settings of the smallest candidate list (store/db.ts), so only a search
 * for more rows needs a transaction to raise it.
 */
async function nearestByIndex(services: Services, query: SemanticQuery, request: RetrievalRequest, n: number): Promise<Row[]> {
  // Ordered by the indexed expression alone (an extra sort key would rule the index out).
  const scan = (db: Knex) => candidates(db, query, request).select(rowColumns(db, query)).orderBy('distance').limit(n) as Promise<Row[]>;
  return withScanSettings(services.store.db, n, scan);
}

/** The exact distances of the given chunks (already filtered) to the query. */
async function distancesOf(services: Services, query: SemanticQuery, ids: string[]): Promise<Row[]> {
  if (ids.length === 0) return [];
  const db = services.store.db;
  return datasetVectors(db, query).whereRaw('chunk_vectors.chunk_id = any(?::uuid[])', [ids]).select(rowColumns(db, query));
}

/**
 * The `n` nearest chunks passing the filter and the threshold, nearest first (ties by id): the
 * index's candidates and the given keyword hits, each at its exact distance. Chunks sharing the
 * query's words are where a text embedding's neighbours often are, and where an HNSW walk from afar
 * misses some (hybrid search has them anyway); scored by their vectors, they can only bring the
 * answer closer to the exact one.
 */
async function nearestCandidates(services: Services, query: SemanticQuery, request: RetrievalRequest, n: number, keywords: Promise<Hit[]>): Promise<Hit[]> {
  const [indexed, keywordHits] = await Promise.all([nearestByIndex(services, query, request, n), keywords]);
  const seen = new Set(indexed.map((r) => r.id));
  const rescored = await distancesOf(
    services,
    query,
    keywordHits.map((h) => h.id).filter((id) => !seen.has(id)),
  );
  return passing([...indexed, ...rescored], request.scoreThreshold).slice(0, n);
}

/** The `n` nearest of `rows` (a query over `chunk_vectors`) above the threshold, every distance computed. */
function exactly(db: Knex, query: SemanticQuery, request: RetrievalRequest, rows: Knex.QueryBuilder, n: number): Knex.QueryBuilder {
  const builder = rows
    .select(rowColumns(db, query))
    // `+ 0` makes it something else than the indexed expression: a sort of the filtered rows, exact.
    .orderByRaw(`(${query.distance}) + 0, chunk_vectors.chunk_id`, [query.vector])
    .limit(n);
  if (request.scoreThreshold != null) builder.whereRaw(`${query.score} >= ?`, [query.vector, request.scoreThreshold]);
  return builder;
}

/** The same as the index gives, computed exactly over every filtered row (no index). */
async function nearestExactly(services: Services, query: SemanticQuery, request: RetrievalRequest, n: number): Promise<Hit[]> {
  const db = services.store.db;
  return passing(await exactly(db, query, request, candidates(db, query, request), n), request.scoreThreshold);
}

/** The dataset's vectors held in memory, current, when they are (else pgvector answers). */
async function heldVectors(services: Services, request: RetrievalRequest): Promise<HeldVectors | null> {
  const config = datasetConfig(request.dataset);
  return services.vectors.held(request.dataset.id, config.EMBEDDING_SIZE, config.DISTANCE_METRIC, await request.seenVersion);
}

/** The held vectors' answer as hits, the threshold applied; null when it is not whole (released meanwhile, graph short). */
async function heldHits(request: RetrievalRequest, answer: Promise<Nearest>): Promise<Hit[] | null> {
  const found = await answer.catch(() => null);
  if (!found?.complete) return null;
  const score = scoreOf[datasetConfig(request.dataset).DISTANCE_METRIC];
  return passing(
    found.ids.map((id, i) => ({ id, distance: found.distances[i], score: score(found.distances[i]) })),
    request.scoreThreshold,
  );
}

/** A scan of the held vectors is shared with helper threads unless the search keeps to one thread (hybrid's alone: once its keyword list is made). */
const scanSharing = (request: RetrievalRequest): ScanSharing => ({ shareScan: !request.oneThread || (request.helpOnceKeywords ? 'delivered' : false) });

/**
 * The `n` nearest chunks from the dataset's vectors held in memory, the keyword hits among the
 * candidates; null when the search is not theirs to answer (a filter, vectors not held yet, or the
 * graph came back short).
 */
async function nearestHeld(services: Services, query: SemanticQuery, request: RetrievalRequest, n: number, keywords: Promise<Hit[]>): Promise<Hit[] | null> {
  if (narrowed(request)) return null;
  const search = (held: HeldVectors) => heldSearch(held, query, request, n, keywords);
  // Started on the vectors held now while their version is checked: kept when no write came in between.
  const early = settledVectors(services, request);
  const earlyVersion = early?.version;
  const earlyAnswer = early && search(early);
  earlyAnswer?.catch(() => undefined);
  // With the page's rows read early, their statement reads the version too: none of its own.
  if (earlyAnswer && request.readAhead) {
    const hits = await heldHits(request, earlyAnswer);
    const check = hits && (await request.readAhead(hits.slice(request.offset).map((h) => h.id)).catch(() => null));
    if (hits && check?.version === earlyVersion) return hits;
  }
  const held = await heldVectors(services, request);
  if (!held) return null;
  return heldHits(request, held === early && held.version === earlyVersion ? earlyAnswer! : search(held));
}

/** The `n` nearest in `held`, the keyword hits among the candidates: the graph is walked (or the vectors scanned) on the vectors' worker while the keyword list is made on this thread. */
function heldSearch(held: HeldVectors, query: SemanticQuery, request: RetrievalRequest, n: number, keywords: Promise<Hit[]>): Promise<Nearest> {
  return held.nearestWith(query.values, n, async () => (await keywords).map((h) => h.id), scanSharing(request));
}

/** The dataset's held vectors when no change has reached them for a while (mirrors.ts, settled); else null. */
function settledVectors(services: Services, request: RetrievalRequest): HeldVectors | null {
  const config = datasetConfig(request.dataset);
  return services.vectors.settledHeld(request.dataset.id, config.EMBEDDING_SIZE, config.DISTANCE_METRIC);
}

/** Whether settledNearest can answer the request now. */
export function vectorsSettled(services: Services, request: RetrievalRequest): boolean {
  return !narrowed(request) && settledVectors(services, request) !== null;
}

/**
 * The `n` nearest, the keyword hits among the candidates, from the dataset's vectors held in memory
 * and settled (mirrors.ts), with the version they are of, which the caller checks (hybrid); null
 * for a filtered search or vectors not settled. The hits are null when the graph came back short.
 */
export function settledNearest(
  services: Services,
  query: SemanticQuery,
  request: RetrievalRequest,
  n: number,
  keywords: Promise<Hit[]>,
): { version: number; hits: Promise<Hit[] | null> } | null {
  const held = narrowed(request) ? null : settledVectors(services, request);
  return held && { version: held.version, hits: heldHits(request, heldSearch(held, query, request, n, keywords)) };
}

/**
 * The `n` nearest chunks passing the filter: when the planner expects few to pass, those chunks,
 * every one compared (held vectors, else `nearestAmong`); otherwise, from the held vectors, the
 * graph's nearest candidates checked against the filter, deeper until `n` pass. Null when neither
 * applies (pgvector then answers).
 */
async function nearestFiltered(
  services: Services,
  query: SemanticQuery,
  request: RetrievalRequest,
  n: number,
  keywords: Promise<Hit[]>,
): Promise<Hit[] | null> {
  if (n <= 0 || !narrowed(request)) return null;
  const db = services.store.db;
  const early = settledAmong(services, query, request, n);
  const holding = heldVectors(services, request);
  // Held vectors know how many chunks they hold; else the dataset's count is read.
  const chunks = holding.then((held) => held?.chunks ?? datasetChunkCount(db, request.dataset.id));
  const filter = await estimateFilter(db, request, chunks);
  const held = await holding;
  const total = Math.max(await chunks, 1);
  let share = filter.expected / total;
  if (filter.selective) {
    if (!held) return nearestAmong(services, query, request, n, filter.limit);
    // Made on these very vectors, at the version they are current at: what follows would make it again.
    if (early && held === early.held && held.version === early.version) return early.answer;
    // The passing chunks' ids, then their held vectors' distances: no vector read from the table.
    const ids = await passingIdWords(db, request, filter.limit + 1);
    if (ids.length / ID_WORDS <= filter.limit) return heldHits(request, held.nearestAmong(query.values, n, ids));
    // The planner was wrong: more than the limit pass.
    share = Math.max(share, filter.limit / total);
  }
  if (!held) return null;
  return nearestHeldChecked(
    services,
    held,
    query,
    request,
    n,
    share,
    (await keywords).map((h) => h.id),
  );
}

/**
 * A selective tag filter's nearest chunks from indexes no change has reached for a while (mirrors.ts,
 * settled): the filter answered from BM25's tag lists and every passing chunk measured in the held
 * vectors (which keep the list for the filter's next search), both of one version, started before
 * the search has checked that version. The caller keeps the answer when the vectors it checks are
 * these at that version; as BM25's tag lists were at it too, the filter passed the chunks it passes
 * in the database. Null when the indexes are not settled, not of one version, or the filter is not
 * such.
 */
function settledAmong(
  services: Services,
  query: SemanticQuery,
  request: RetrievalRequest,
  n: number,
): { held: HeldVectors; version: number; answer: Promise<Hit[] | null> } | null {
  const tags = tagFilterOf(request.filter, request.conditions);
  const config = datasetConfig(request.dataset);
  // A filter of must_not alone passes most chunks: not worth listing them to find out.
  if (!tags || tags.must.length + tags.should.length === 0 || !config.BM25_ENABLED) return null;
  const index = services.bm25.settled(request.dataset.id);
  const held = settledVectors(services, request);
  if (!index || !held || index.version !== held.version) return null;
  const passing = heldPassing(index, tags);
  if (passing.count > selectiveLimit(held.chunks)) return null;
  // The filter's chunks at this version: the worker keeps them ready for the filter's next search.
  const key = `${held.version} ${JSON.stringify(tags)}`;
  const answer = held.nearestInList(query.values, n, key, () => passing.idWords(passing.count));
  return { held, version: held.version, answer: heldHits(request, answer) };
}

/** Each next round of a broad filter's check reads this many times as many candidates. */
const DEEPER = 8;

/**
 * A broad filter over the held vectors: the nearest candidates (the first round sized so that about
 * four times `n` are expected to pass, at most 64 times `n`), ranked exactly, are checked against the
 * filter in PostgreSQL, deeper until `n` pass or the graph has no more; null when the graph comes
 * back short.
 */
async function nearestHeldChecked(
  services: Services,
  held: HeldVectors,
  query: SemanticQuery,
  request: RetrievalRequest,
  n: number,
  share: number,
  also: string[],
): Promise<Hit[] | null> {
  for (let depth = Math.ceil(n * Math.min(64, Math.max(4, 4 / share))); ; depth *= DEEPER) {
    const found = await heldHits(request, held.nearest(query.values, depth, also, scanSharing(request)));
    if (!found) return null;
    const passed = await passingAmong(
      services.store.db,
      request,
      found.map((h) => h.id),
    );
    const hits = found.filter((h) => passed.has(h.id));
    // Fewer than asked for: the graph gave every vector it holds (or the threshold cut them).
    if (hits.length >= n || found.length < depth) return hits.slice(0, n);
  }
}

/**
 * The `n` nearest chunks passing the filter, exactly, when at most `most` pass; else null. One
 * statement, which reads at most `most` + 1 passing chunks.
 */
export async function nearestAmong(services: Services, query: SemanticQuery, request: RetrievalRequest, n: number, most: number): Promise<Hit[] | null> {
  const db = services.store.db;
  const few = passingQuery(db, request)
    .select('chunks.id')
    .limit(most + 1);
  const rows = datasetVectors(db, query).with('few', few).join('few', 'few.id', 'chunk_vectors.chunk_id').whereRaw('(select count(*) from few) <= ?', [most]);
  const hits = passing(await exactly(db, query, request, rows, n), request.scoreThreshold);
  if (hits.length > 0) return hits;
  // None: none passes (or reaches the threshold), or more than `most` pass.
  const [{ count }] = await db.with('few', few).from('few').count<{ count: string | number }[]>('* as count');
  return Number(count) <= most ? hits : null;
}

/**
 * How many chunks of the dataset pass the filter and, when one is given, the threshold (then every
 * filtered vector's distance is computed: exact, and a sequential scan).
 */
export async function countSemantic(services: Services, query: SemanticQuery | null, request: RetrievalRequest): Promise<number> {
  const db = services.store.db;
  let builder: Knex.QueryBuilder;
  if (request.scoreThreshold == null) {
    builder = passingQuery(db, request);
  } else {
    if (!query) throw new Error('counting within a score threshold needs the query');
    builder = candidates(db, query, request).whereRaw(`${query.score} >= ?`, [query.vector, request.scoreThreshold]);
  }
  const [row] = await builder.count<{ count: string | number }[]>('* as count');
  return Number(row.count);
}

/** The index's answer if it has every row it should have, else the exact one. */
async function complete(services: Services, query: SemanticQuery, request: RetrievalRequest, n: number, hits: Hit[], total: number): Promise<Hit[]> {
  // Short: the scan gave up (max_scan_tuples, memory) before it found every row there is.
  return hits.length < Math.min(n, total) ? nearestExactly(services, query, request, n) : hits;
}

/**
 * The `n` best chunks for the query, best first (for fusion; counts only when the index comes back
 * short). `keywords`: the query's keyword hits, when the caller fetches them anyway.
 */
export async function nearest(
  services: Services,
  query: SemanticQuery,
  request: RetrievalRequest,
  n: number,
  keywords: Promise<Hit[]> = Promise.resolve([]),
): Promise<Hit[]> {
  if (n <= 0) return [];
  const found = (await nearestHeld(services, query, request, n, keywords)) ?? (await nearestFiltered(services, query, request, n, keywords));
  if (found) return found;
  const hits = await nearestCandidates(services, query, request, n, keywords);
  if (hits.length >= n) return hits;
  return complete(services, query, request, n, hits, await countSemantic(services, query, request));
}

/** The `n` nearest from memory, else among few passing chunks, else through the HNSW index. */
async function firstFound(services: Services, query: SemanticQuery, request: RetrievalRequest, n: number): Promise<Hit[]> {
  const none = Promise.resolve([]);
  return (
    (await nearestHeld(services, query, request, n, none)) ??
    (await nearestFiltered(services, query, request, n, none)) ??
    (await nearestCandidates(services, query, request, n, none))
  );
}

/** A page of semantic hits, and how many chunks pass the filter (and the threshold) when asked. */
export async function semanticSearch(services: Services, request: RetrievalRequest): Promise<RetrievalResult> {
  const query = await semanticQuery(services, request);
  const n = request.offset + request.limit;
  if (!request.countTotal) return { hits: (await nearest(services, query, request, n)).slice(request.offset), total: null };
  // Both at once: in parallel on PostgreSQL, queued together in PGlite's worker.
  const [found, total] = await Promise.all([n > 0 ? firstFound(services, query, request, n) : Promise.resolve([]), countSemantic(services, query, request)]);
  const hits = await complete(services, query, request, n, found, total);
  return { hits: hits.slice(request.offset), total };
}
