// BM25 keyword retrieval, exact, reading few postings (the same in PGlite and PostgreSQL).
//
// A chunk's score is Σ w(t) · idf(t) · tf·(k1+1) / (tf + k1·(1 − b + b·len/avg)) over the query terms
// it holds (stemmed, stop words dropped; w(t) is the fulltext boost's factor for boosted terms, else
// 1), with the dataset's BM25_K, BM25_B and average length: BM25_AVG_LEN when the dataset sets it,
// else the dataset's actual average chunk length in terms (the standard choice). idf(t) =
// ln(1 + (N − df + 0.5) / (df + 0.5)) is counted over the whole dataset, so a filter narrows the
// results without changing their scores.
//
// The top k, exactly (bounds.ts):
//   1. each term's leading postings (highest tf, then shortest chunk) give candidates; their exact
//      scores give θ, the k-th best so far: the true k-th best scores at least θ;
//   2. from θ, each term's postings that could lift a chunk to θ, read as index ranges; their chunks,
//      scored exactly, hold the top k. Step 2 is skipped when step 1 already read every such posting.
// With a filter, the chunks passing it that hold a query term are scored directly when they are few
// (at most the dataset's selective limit, filters/passing.ts); otherwise the leading postings are
// read deeper until k candidates pass.
//
// Once a dataset's postings are held in memory (memory.ts), its searches score there instead
// (memorySearch.ts), with the same results; this SQL path serves while that index is built. On an
// index no change has reached for a while, the search is made while the statistics are read, and
// kept when they turn out to be those it was made with (searchSettled).
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Knex } from 'knex';
import { datasetConfig } from '../../../domain/datasetConfig.js';
import type { DatasetRow } from '../../../domain/datasets.js';
import type { Services } from '../../../services.js';
import { type HeldPassing, heldPassing, tagFilterOf } from '../../filters/held.js';
import { narrowed, selectiveLimit } from '../../filters/passing.js';
import type { Hit, PageCheck, RetrievalRequest, RetrievalResult } from '../../types.js';
import { englishTerms } from '../../../text/englishTerms.js';
import { idf } from '../termWeights.js';
import { type MemorySearch, memoryBm25 } from './memorySearch.js';
import type { DatasetIndex } from './memory.js';
import { type Bm25Parameters, covers, impactFloors, mostImpact, type PostingRange, type ReadEdge, rangesReaching } from './bounds.js';
import {
  chunksInRanges,
  countPassingMatches,
  leadingPostings,
  type Posting,
  passingMatches,
  scoreChunks,
  shortestPerTf,
  type TermStatistics,
  termStatistics,
  type WeightedTerms,
} from './postings.js';

/** Leading postings read per term at least (and at least k). */
const LEADING_POSTINGS = 100;
/** With a filter, leading postings are read this much deeper while too few candidates pass... */
const DEEPER = 8;
/** ...up to this many per term. */
const MOST_LEADING_POSTINGS = 8192;
export interface Bm25Query extends WeightedTerms {
  parameters: Bm25Parameters;
  /** The dataset's chunks. */
  chunks: number;
}

/** A query made ready for BM25, and the statistics (with the dataset's version) it was made from. */
export interface PreparedBm25 {
  /** null when no chunk holds a query term. */
  query: Bm25Query | null;
  version: number;
  statistics: TermStatistics;
}

/** The query's terms that some chunk holds, their weights, and the dataset's parameters, in one statement. */
export async function prepareBm25(db: Knex, request: RetrievalRequest): Promise<PreparedBm25> {
  return preparedFrom(request, await termStatistics(db, request.dataset.id, request.query));
}

function preparedFrom(request: RetrievalRequest, statistics: TermStatistics): PreparedBm25 {
  const { version } = statistics;
  const held = statistics.terms.flatMap((term, i) => (statistics.counts[i] > 0 ? [{ term, count: statistics.counts[i] }] : []));
  if (held.length === 0 || statistics.chunks === 0) return { query: null, version, statistics };
  const config = datasetConfig(request.dataset);
  const boost = request.termBoost;
  const query = {
    terms: held.map((t) => t.term),
    weights: held.map((t) => idf(statistics.chunks, t.count) * (boost?.lexemes.includes(t.term) ? boost.factor : 1)),
    parameters: { k1: config.BM25_K, b: config.BM25_B, averageLength: config.BM25_AVG_LEN ?? actualAverage(statistics.chunks, statistics.lengthSum) },
    chunks: statistics.chunks,
  };
  return { query, version, statistics };
}

/** The statistics the database would give for `terms`, as an index holds them at its version. */
function heldStatistics(index: DatasetIndex, terms: string[]): TermStatistics {
  return { terms, chunks: index.chunks, lengthSum: index.lengthSum, counts: terms.map((t) => index.holding(t)), version: index.version };
}

/** Equal, terms in the same order too: the weights are then added up in the same order, to the last bit. */
function sameStatistics(a: TermStatistics, b: TermStatistics): boolean {
  return a.version === b.version && a.chunks === b.chunks && a.lengthSum === b.lengthSum && sameList(a.terms, b.terms) && sameList(a.counts, b.counts);
}

const sameList = (x: readonly unknown[], y: readonly unknown[]) => x.length === y.length && x.every((v, i) => v === y[i]);

/**
 * The request's tag filter answered from the dataset's held postings, current (at the version the
 * query's statistics were read at, when given); null for another filter, a dataset without BM25,
 * or while the postings are built (or cannot be read: then SQL answers).
 */
export async function heldTagFilter(services: Services, request: RetrievalRequest, prepared?: Promise<PreparedBm25>): Promise<HeldPassing | null> {
  return (await heldTags(services, request, prepared))?.passing ?? null;
}

/** As heldTagFilter, with the dataset's version the held postings are current at. */
export async function heldTags(
  services: Services,
  request: RetrievalRequest,
  prepared?: Promise<PreparedBm25>,
): Promise<{ passing: HeldPassing; version: number } | null> {
  const tags = tagFilterOf(request.filter, request.conditions);
  if (!tags || !datasetConfig(request.dataset).BM25_ENABLED) return null;
  try {
    const index = await services.bm25.current(request.dataset.id, prepared && (await prepared).version);
    return index && { passing: heldPassing(index, tags), version: index.version };
  } catch {
    return null;
  }
}

/** The length BM25 normalizes against: the dataset's BM25_AVG_LEN, else its actual average. */
export async function averageLength(db: Knex, dataset: DatasetRow): Promise<number> {
  const configured = datasetConfig(dataset).BM25_AVG_LEN;
  if (configured != null) return configured;
  const { chunks, lengthSum } = await termStatistics(db, dataset.id, null);
  return actualAverage(chunks, lengthSum);
}

const actualAverage = (chunks: number, lengthSum: number) => (chunks > 0 && lengthSum > 0 ? lengthSum / chunks : 1);

/** Where each term's leading postings stopped. */
function edges(query: Bm25Query, postings: Posting[], perTerm: number): ReadEdge[] {
  const byTerm = new Map<string, Posting[]>(query.terms.map((t) => [t, []]));
  for (const p of postings) byTerm.get(p.term)?.push(p);
  return query.terms.map((t) => {
    const list = byTerm.get(t) ?? [];
    const last = list[list.length - 1];
    return { exhausted: list.length < perTerm, tf: last?.tf ?? 0, length: last?.length ?? 0 };
  });
}

/** Each term's ranges of postings that could lift a chunk to `threshold`. */
async function rangesFor(db: Knex, request: RetrievalRequest, query: Bm25Query, threshold: number): Promise<PostingRange[][]> {
  const shortest = await shortestPerTf(db, request.dataset.id, query.terms);
  const floors = impactFloors(
    threshold,
    query.weights.map((weight, i) => ({
      weight,
      most: mostImpact(
        shortest.filter((s) => s.term === query.terms[i]),
        query.parameters,
      ),
    })),
  );
  return floors.map((floor) => (floor === Infinity ? [] : rangesReaching(floor, query.parameters)));
}

/** The best `k` chunks passing the filter and scoring at least `least`, best first. */
async function top(db: Knex, request: RetrievalRequest, query: Bm25Query, k: number, least: number): Promise<Hit[]> {
  if (k <= 0) return [];
  if (narrowed(request)) {
    const most = selectiveLimit(query.chunks);
    const matches = await passingMatches(db, request, query.terms, most + 1);
    if (matches.length <= most) return scoreChunks(db, request, matches, query, query.parameters, least, k);
  }
  for (let perTerm = Math.max(LEADING_POSTINGS, k); ; perTerm *= DEEPER) {
    const leading = await leadingPostings(db, request.dataset.id, query.terms, perTerm);
    const scored = await scoreChunks(db, request, [...new Set(leading.map((p) => p.chunkId))], query, query.parameters, least, k);
    const read = edges(query, leading, perTerm);
    if (read.every((e) => e.exhausted)) return scored;
    if (scored.length < k && narrowed(request) && perTerm < MOST_LEADING_POSTINGS) continue;
    // A hair below the k-th score: a chunk tied with it must not fall out by rounding.
    const threshold = Math.max(scored.length >= k ? scored[k - 1].score * (1 - 1e-9) : 0, least);
    const ranges = await rangesFor(db, request, query, threshold);
    if (ranges.every((r, i) => covers(read[i], r))) return scored;
    const candidates = await chunksInRanges(
      db,
      request.dataset.id,
      ranges.flatMap((list, i) => list.map((range) => ({ term: query.terms[i], range }))),
    );
    return scoreChunks(db, request, candidates, query, query.parameters, threshold, k);
  }
}

/** Every chunk passing the filter that scores at least `least` (for counting within a threshold). */
async function allAbove(db: Knex, request: RetrievalRequest, query: Bm25Query, least: number): Promise<Hit[]> {
  const ranges = await rangesFor(db, request, query, least);
  const candidates = await chunksInRanges(
    db,
    request.dataset.id,
    ranges.flatMap((list, i) => list.map((range) => ({ term: query.terms[i], range }))),
  );
  return scoreChunks(db, request, candidates, query, query.parameters, least, null);
}

/** How many chunks the search matches: those passing the filter that hold a query term, or that reach the threshold. */
async function countInSql(db: Knex, request: RetrievalRequest, query: Bm25Query): Promise<number> {
  if (request.scoreThreshold == null) return countPassingMatches(db, request, query.terms);
  return (await allAbove(db, request, query, request.scoreThreshold)).length;
}

/**
 * The top `k` (and the count, when asked), from the in-memory index when it is ready, else in SQL;
 * null when no chunk holds a query term. A search whose caller reads the page's rows early answers
 * from a settled index and has the rows' statement check it (searchChecked). Otherwise the query's
 * statistics come first (`given`: read by the caller): the version they were read at spares an
 * index already there its catch-up statement, and on a settled index the search is made while
 * they are read (searchSettled).
 */
async function search(services: Services, request: RetrievalRequest, k: number, count: boolean, given?: Promise<PreparedBm25>): Promise<Found | null> {
  const db = services.store.db;
  const least = request.scoreThreshold ?? 0;
  const plan: MemorySearch = { k, least, count, countAbove: request.scoreThreshold ?? null, narrowed: narrowed(request), split: !request.oneThread };
  if (!given && request.readAhead) {
    const checked = await searchChecked(services, request, plan, request.readAhead).catch(() => null);
    if (checked) return checked.found;
  }
  const reading = given ?? prepareBm25(db, request);
  // A search the rows' statement did not confirm would only be made again on the same index.
  const early = request.readAhead ? null : searchSettled(services, request, plan).catch(() => null);
  const { query, version, statistics } = await reading;
  const settled = await early;
  if (settled && sameStatistics(settled.statistics, statistics)) return settled.found;
  if (!query) return null;
  const index = await services.bm25.current(request.dataset.id, version);
  if (index) return memoryBm25(db, request, index, query, plan);
  return { hits: await top(db, request, query, k, least), total: count ? await countInSql(db, request, query) : null };
}

/**
 * The search made on the dataset's settled index (mirrors.ts) while the query's statistics are read,
 * from the terms guessed here and the index's own counts: the caller keeps its answer when the
 * database's statistics turn out the same (no write in between, the same terms). Null when the
 * search cannot be made early (earlySearch).
 */
async function searchSettled(services: Services, request: RetrievalRequest, plan: MemorySearch): Promise<EarlySearch | null> {
  if (!earlyTerms(services, request, plan)) return null;
  // A turn later, when the statistics' statement has been sent: the walk runs while it travels.
  await nextTurn();
  const early = earlySearch(services, request, plan);
  return early && { statistics: early.statistics, found: await early.found };
}

/**
 * The search made on the dataset's settled index, then checked by the statement that reads the
 * page's rows: kept when the database is at the index's version and makes the same terms of the
 * query, so that the search needs no statement of its own. Null when it cannot be made early
 * (earlySearch) or was not confirmed (a write came in between: the caller searches again).
 */
async function searchChecked(
  services: Services,
  request: RetrievalRequest,
  plan: MemorySearch,
  readAhead: NonNullable<RetrievalRequest['readAhead']>,
): Promise<EarlySearch | null> {
  const early = earlySearch(services, request, plan);
  if (!early) return null;
  const found = await early.found;
  const check = await readAhead(
    (found?.hits ?? []).slice(request.offset).map((h) => h.id),
    request.query,
  );
  return confirms(check, early.statistics) ? { statistics: early.statistics, found } : null;
}

/** Whether the page rows' statement read the database at the version of `statistics`, making the query's terms as they hold them. */
export function confirms(check: PageCheck, statistics: TermStatistics): boolean {
  return check.version === statistics.version && check.terms !== null && sameList(check.terms, statistics.terms);
}

/**
 * The best `k` hits for fusion from the dataset's settled index, made a turn later (work the caller
 * sends elsewhere meanwhile starts first), with the statistics they were made from, which the
 * caller checks (`confirms`). Null when the search cannot be made early (earlySearch).
 */
export async function settledTop(services: Services, request: RetrievalRequest, k: number): Promise<{ statistics: TermStatistics; hits: Hit[] } | null> {
  await nextTurn();
  const plan: MemorySearch = { k, least: request.scoreThreshold ?? 0, count: false, countAbove: null, narrowed: narrowed(request), split: !request.oneThread };
  const early = earlySearch(services, request, plan);
  return early && { statistics: early.statistics, hits: (await early.found)?.hits ?? [] };
}

/** The query's terms guessed here, when a search can be made early on the dataset's settled index; else null. */
function earlyTerms(services: Services, request: RetrievalRequest, plan: MemorySearch): string[] | null {
  if (plan.narrowed && !tagFilterOf(request.filter, request.conditions)) return null;
  const terms = englishTerms(request.query);
  return terms && services.bm25.settled(request.dataset.id) ? terms : null;
}

/**
 * The search on the dataset's settled index, from the terms guessed here and the index's own
 * counts, with the statistics it was made from. Null when the search needs SQL (a filter other
 * than on tags), the index is not settled, or the query's terms cannot be guessed.
 */
function earlySearch(services: Services, request: RetrievalRequest, plan: MemorySearch): { statistics: TermStatistics; found: Promise<Found | null> } | null {
  const terms = earlyTerms(services, request, plan);
  const index = terms && services.bm25.settled(request.dataset.id);
  if (!terms || !index) return null;
  // Statistics and walk in one go, so both are of the index's version.
  const statistics = heldStatistics(index, terms);
  const { query } = preparedFrom(request, statistics);
  return { statistics, found: query ? memoryBm25(services.store.db, request, index, query, plan) : Promise.resolve(null) };
}

interface Found {
  hits: Hit[];
  total: number | null;
}

interface EarlySearch {
  statistics: TermStatistics;
  found: Found | null;
}

export async function bm25Search(services: Services, request: RetrievalRequest): Promise<RetrievalResult> {
  const found = await search(services, request, request.offset + request.limit, !!request.countTotal);
  if (!found) return { hits: [], total: request.countTotal ? 0 : null };
  return { hits: found.hits.slice(request.offset), total: found.total };
}

/** The best `window` BM25 hits, for fusion; `prepared` when the caller has read the statistics already. */
export async function bm25Top(services: Services, request: RetrievalRequest, window: number, prepared?: Promise<PreparedBm25>): Promise<Hit[]> {
  return (await search(services, request, window, false, prepared))?.hits ?? [];
}

export async function countBm25(services: Services, request: RetrievalRequest): Promise<number> {
  return (await search(services, request, 0, true))?.total ?? 0;
}
