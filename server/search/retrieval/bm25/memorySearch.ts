// BM25 over a dataset's in-memory index (memory.ts): chunks holding a query term are scored in
// memory, exactly, and only the filter is asked of SQL. For a page, the best candidates are checked
// against the filter first: a broad filter passes k of them at once. When too few pass (or k is a
// fusion window), a filter passing few chunks becomes a mask for the scoring; one passing many is
// checked deeper until k pass.
import type { Knex } from 'knex';
import type { Hit, RetrievalRequest } from '../../types.js';
import type { Bm25Query } from './index.js';
import type { DatasetIndex, Matches, Ranked } from './memory.js';
import { countPassingMatches, passingAmong, passingChunks } from './postings.js';

/** Candidates checked against a filter at first, per result asked, and how much deeper each next round goes. */
const DEEPER = 8;
/** The most candidates checked before the mask is tried. */
const FIRST_CHECK_MOST = 200;

export interface MemorySearch {
  /** Results asked for (offset included), and the least score they may have. */
  k: number;
  least: number;
  /** Count the matches too: those passing the filter, or those reaching `countAbove` when set. */
  count: boolean;
  countAbove: number | null;
  /** A filter passing at most this many chunks becomes a mask. */
  directScoring: number;
  narrowed: boolean;
}

export async function memoryBm25(
  db: Knex,
  request: RetrievalRequest,
  index: DatasetIndex,
  query: Bm25Query,
  plan: MemorySearch,
): Promise<{ hits: Hit[]; total: number | null }> {
  if (!plan.narrowed) return topOf(index, query, null, plan);
  // A page's worth of candidates is cheap to check first; a fusion window's is not, when the filter
  // is selective: then the mask is tried first.
  const depth = firstDepth(plan);
  const checkFirst = depth <= FIRST_CHECK_MOST;
  if (checkFirst) {
    const ranked = toHits(index, index.top(query.terms, query.weights, query.parameters, null, depth, plan.least));
    const first = await checked(db, request, ranked, 0, depth, plan.k);
    if (first.complete) return filteredTotal(db, request, index, query, plan, first.hits);
  }
  const mask = await filterMask(db, request, index, plan.directScoring);
  if (!mask) return filteredDeep(db, request, index, query, plan, checkFirst ? depth * DEEPER : depth);
  return topOf(index, query, mask, plan);
}

/** The best k of the chunks in `accept` (all when null), and their count when asked (which needs every match scored). */
function topOf(index: DatasetIndex, query: Bm25Query, accept: Uint8Array | null, plan: MemorySearch): { hits: Hit[]; total: number | null } {
  const { terms, weights, parameters } = query;
  if (!plan.count) return { hits: toHits(index, index.top(terms, weights, parameters, accept, plan.k, plan.least)), total: null };
  const matches = index.match(terms, weights, parameters, accept);
  return { hits: toHits(index, index.best(matches, plan.k, plan.least)), total: countAbove(matches, plan.countAbove) };
}

const firstDepth = (plan: MemorySearch) => Math.max(plan.k, 1) * DEEPER;

/** The filter's verdict on the ranked candidates from `from` on: those passing, and whether k have (or the ranking ends before `depth`). */
async function checked(
  db: Knex,
  request: RetrievalRequest,
  ranked: Hit[],
  from: number,
  depth: number,
  k: number,
): Promise<{ hits: Hit[]; checked: number; complete: boolean }> {
  const fresh = ranked.slice(from);
  const passed = await passingAmong(
    db,
    request,
    fresh.map((h) => h.id),
  );
  const hits = fresh.filter((h) => passed.has(h.id));
  return { hits, checked: ranked.length, complete: hits.length >= k || ranked.length < depth };
}

/** A mask over the index's ordinals of the chunks passing the filter, when at most `most` do; else null. */
async function filterMask(db: Knex, request: RetrievalRequest, index: DatasetIndex, most: number): Promise<Uint8Array | null> {
  const ids = await passingChunks(db, request, most + 1);
  if (ids.length > most) return null;
  const mask = new Uint8Array(index.capacity);
  for (const id of ids) {
    const ordinal = index.ordinal(id);
    // A chunk written since the index caught up is not in it yet, as it is not in its matches.
    if (ordinal !== undefined) mask[ordinal] = 1;
  }
  return mask;
}

/** A filter passing many chunks: the best candidates are checked against it, deeper until k pass. */
async function filteredDeep(
  db: Knex,
  request: RetrievalRequest,
  index: DatasetIndex,
  query: Bm25Query,
  plan: MemorySearch,
  firstRound: number,
): Promise<{ hits: Hit[]; total: number | null }> {
  const ranking = roundsRanking(index, query, plan.least);
  let hits: Hit[] = [];
  for (let depth = firstRound, from = 0; ; depth *= DEEPER) {
    const { ranked, restarted } = ranking(depth);
    if (restarted) {
      hits = [];
      from = 0;
    }
    const round = await checked(db, request, ranked, from, depth, plan.k - hits.length);
    hits.push(...round.hits);
    from = round.checked;
    if (round.complete) break;
  }
  return filteredTotal(db, request, index, query, plan, hits);
}

/**
 * The best `depth` candidates, for rounds that must read one ranking: the index's top while the
 * index does not change (a deeper top starts with the shallower one); from the first change on,
 * every match scored once (ordinals are never reused, so the matches stay valid), and `restarted`
 * says the rounds must start again from the top.
 */
export function roundsRanking(index: DatasetIndex, query: Bm25Query, least: number): (depth: number) => { ranked: Hit[]; restarted: boolean } {
  const { terms, weights, parameters } = query;
  const version = index.version;
  let matches: Matches | null = null;
  return (depth) => {
    if (matches) return { ranked: toHits(index, index.best(matches, depth, least)), restarted: false };
    if (index.version === version) return { ranked: toHits(index, index.top(terms, weights, parameters, null, depth, least)), restarted: false };
    matches = index.match(terms, weights, parameters, null);
    return { ranked: toHits(index, index.best(matches, depth, least)), restarted: true };
  };
}

/** The first k filtered hits, and the number of matches passing the filter (and the threshold) when asked. */
async function filteredTotal(
  db: Knex,
  request: RetrievalRequest,
  index: DatasetIndex,
  query: Bm25Query,
  plan: MemorySearch,
  hits: Hit[],
): Promise<{ hits: Hit[]; total: number | null }> {
  if (!plan.count) return { hits: hits.slice(0, plan.k), total: null };
  const total =
    plan.countAbove == null
      ? await countPassingMatches(db, request, query.terms)
      : (await passingAmong(db, request, aboveIds(index, index.match(query.terms, query.weights, query.parameters, null), plan.countAbove))).size;
  return { hits: hits.slice(0, plan.k), total };
}

function toHits(index: DatasetIndex, ranked: Ranked[]): Hit[] {
  return ranked.map((r) => ({ id: index.idOf(r.ordinal), score: r.score }));
}

function countAbove(matches: Matches, least: number | null): number {
  if (least == null) return matches.scores.length;
  let count = 0;
  for (const score of matches.scores) if (score >= least) count++;
  return count;
}

function aboveIds(index: DatasetIndex, matches: Matches, least: number): string[] {
  const ids: string[] = [];
  for (let i = 0; i < matches.scores.length; i++) if (matches.scores[i] >= least) ids.push(index.idOf(matches.ordinals[i]));
  return ids;
}
