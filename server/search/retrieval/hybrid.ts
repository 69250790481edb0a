// Hybrid retrieval: the semantic and the keyword top lists, fused by reciprocal rank fusion. The
// keyword list is BM25 (scored the same with every lexical engine) unless the dataset disables it,
// then the lexical engine's full-text list.
//
// Each list holds the top max(offset + limit, 100) chunks (at most 1000) that pass the filter; a
// chunk's fused score is Σ weight / (k + rank) over the lists it is in (rank 1 is the best, k = 60),
// so a chunk high in both lists beats one that tops only one. The scores of the two engines are
// never compared, only their orders. `total` is the size of the union of the two lists (after the
// threshold, which applies to the fused score): the chunks hybrid search can return, capped at
// twice the window.
//
// On indexes no change has reached for a while (mirrors.ts), both lists are made from them at once
// and fused, and the statement that reads the page's rows checks that the database is still at
// their version (fusedSettled): such a search sends that statement alone.
import type { Services } from '../../services.js';
import type { Hit, RetrievalRequest, RetrievalResult } from '../types.js';
import { datasetConfig } from '../../domain/datasetConfig.js';
import { FilterReads } from '../filters/passing.js';
import { bm25Top, confirms, heldTagFilter, prepareBm25, settledTop } from './bm25/index.js';
import { fulltextTop } from './fulltext.js';
import { nearest, type SemanticQuery, semanticQuery, settledNearest, vectorsSettled } from './semantic.js';

export const RRF_K = 60;
const MIN_WINDOW = 100;
const MAX_WINDOW = 1000;

export interface FusionWeights {
  semantic: number;
  fulltext: number;
}

/** Reciprocal rank fusion of ranked lists (best first), best first, ties by id. */
export function reciprocalRankFusion(lists: { hits: Hit[]; weight: number }[], k = RRF_K): Hit[] {
  const scores = new Map<string, number>();
  for (const { hits, weight } of lists) {
    for (const [i, hit] of hits.entries()) scores.set(hit.id, (scores.get(hit.id) ?? 0) + weight / (k + i + 1));
  }
  return [...scores].map(([id, score]) => ({ id, score })).sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

export function hybridWindow(wanted: number): number {
  return Math.min(MAX_WINDOW, Math.max(wanted, MIN_WINDOW));
}

/** Both lists fused, the threshold applied to the fused score. */
function fuse(semantic: Hit[], keyword: Hit[], weights: FusionWeights, threshold: number | null | undefined): Hit[] {
  const hits = reciprocalRankFusion([
    { hits: semantic, weight: weights.semantic },
    { hits: keyword, weight: weights.fulltext },
  ]);
  return threshold == null ? hits : hits.filter((h) => h.score >= threshold);
}

/** The candidates of both lists, fused, the threshold applied to the fused score. */
async function fused(services: Services, request: RetrievalRequest, weights: FusionWeights): Promise<Hit[]> {
  const window = hybridWindow(request.offset + request.limit);
  // Each list unthresholded: the threshold is on the fused score. A selective filter's passing
  // chunks are read once for both lists.
  const reads = new FilterReads(request.filter, request.conditions);
  // Neither list's hits are the page's: no rows read ahead for them. Each list takes a core while
  // the other is made (BM25's walk on this thread, the lexical engine's process, the held vectors'
  // worker): neither offers its work to a helper thread, which would take a core from the other
  // list (bench/README.md, at d7971ff and a5719a5). A search alone has the held vectors' scan take
  // a helper once BM25's walk is over (vectors/handoff.js).
  const each = { ...request, scoreThreshold: null, filterReads: reads, readAhead: undefined, oneThread: true, helpOnceKeywords: !request.oneThread };
  // Embedded once, whichever way the lists are made.
  const querying = semanticQuery(services, each);
  const bm25 = datasetConfig(request.dataset).BM25_ENABLED;
  if (bm25 && request.readAhead && services.bm25.settled(request.dataset.id) && vectorsSettled(services, each)) {
    const settled = await fusedSettled(services, request, request.readAhead, each, querying, window, weights).catch(() => null);
    if (settled) return settled;
  }
  // BM25's statistics carry the dataset's version, which spares the held vectors their own look.
  const prepared = bm25 ? prepareBm25(services.store.db, each) : null;
  // A tag filter is answered from BM25's held postings for both lists.
  if (prepared) reads.held = heldTagFilter(services, each, prepared);
  // BM25 scores on this thread a turn of the event loop after the statistics' statement is sent
  // (on a settled index, while it travels; else once the statistics come): by then the semantic
  // list has handed its graph walk to the vectors' worker, and the two run at once.
  const keywords = prepared ? bm25Top(services, each, window, prepared) : fulltextTop(services, each, window);
  // The keyword list doubles as the semantic list's extra candidates (semantic.ts), unless the
  // vector is not the query text's own; either way the held vectors hear when it is made, and a
  // scan still under way may then take the core BM25's walk let go of (vectors/handoff.js). The
  // semantic list starts without waiting for the statistics: on settled indexes it is made while
  // they are read.
  const seenVersion = prepared?.then((bm25) => bm25.version);
  // Awaited by the held vectors, when they are asked; not left unhandled should the statement fail.
  seenVersion?.catch(() => undefined);
  const [semantic, keyword] = await Promise.all([
    querying.then((query) => nearest(services, query, { ...each, seenVersion }, window, request.vector ? keywords.then(() => []) : keywords)),
    keywords,
  ]);
  return fuse(semantic, keyword, weights, request.scoreThreshold);
}

/**
 * Both lists made from the dataset's settled indexes at once (the held vectors' walk on their
 * worker, BM25's on this thread), fused, and checked by the statement that reads the page's rows
 * (the request's readAhead): kept when the database is at the indexes' version and makes the
 * query's terms as BM25's index holds them. Null when the indexes are not settled, or not at one
 * version, or a write came in between: the caller makes the lists again.
 */
async function fusedSettled(
  services: Services,
  request: RetrievalRequest,
  readAhead: NonNullable<RetrievalRequest['readAhead']>,
  each: RetrievalRequest,
  querying: Promise<SemanticQuery>,
  window: number,
  weights: FusionWeights,
): Promise<Hit[] | null> {
  const query = await querying;
  const keyword = settledTop(services, each, window);
  const keywordHits = keyword.then((k) => k?.hits ?? []);
  const semantic = settledNearest(services, query, each, window, request.vector ? keywordHits.then(() => []) : keywordHits);
  // Awaited below; not left unhandled should the other fail first.
  keyword.catch(() => undefined);
  semantic?.hits.catch(() => undefined);
  const [bm25, semanticHits] = await Promise.all([keyword, semantic?.hits]);
  if (!bm25 || !semantic || !semanticHits || semantic.version !== bm25.statistics.version) return null;
  const hits = fuse(semanticHits, bm25.hits, weights, request.scoreThreshold);
  const page = hits.slice(request.offset, request.offset + request.limit);
  const check = await readAhead(
    page.map((h) => h.id),
    request.query,
  );
  return confirms(check, bm25.statistics) ? hits : null;
}

export async function hybridSearch(
  services: Services,
  request: RetrievalRequest,
  weights: FusionWeights = { semantic: 1, fulltext: 1 },
): Promise<RetrievalResult> {
  const hits = await fused(services, request, weights);
  return { hits: hits.slice(request.offset, request.offset + request.limit), total: request.countTotal ? hits.length : null };
}
