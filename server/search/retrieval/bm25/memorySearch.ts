// BM25 over a dataset's in-memory index (memory.ts): chunks holding a query term are scored in
// memory, exactly, and only the filter is asked of SQL, unless it is a filter on tags, which the
// index answers itself (filters/held.ts). A filter passing few chunks (filters/passing.ts) has those
// chunks read and each one scored. A broader tag filter is one walk that passes over the chunks
// failing it. A broader filter of SQL's has the best candidates checked against it, deeper until k
// pass; the first round is sized by the share of chunks expected to pass (the planner's estimate),
// so that it usually holds k of them.
import type { Knex } from 'knex';
import { type HeldPassing, heldPassing, tagFilterOf } from '../../filters/held.js';
import { estimateFilter, heldOrdinals, passingAmong, passingIds, selectiveLimit } from '../../filters/passing.js';
import type { Hit, RetrievalRequest } from '../../types.js';
import type { Bm25Query } from './index.js';
import type { DatasetIndex, Matches } from './memory.js';
import type { Ranked } from './topK.js';
import { countPassingMatches } from './postings.js';

/** Each next round checks this many times as many candidates. */
const DEEPER = 8;
/** The first round checks about twice the candidates the expected share needs for k to pass, within these multiples of k. */
const FIRST_ROUND = { least: 2, most: 64 };

export interface MemorySearch {
  /** Results asked for (offset included), and the least score they may have. */
  k: number;
  least: number;
  /** Count the matches too: those passing the filter, or those reaching `countAbove` when set. */
  count: boolean;
  countAbove: number | null;
  narrowed: boolean;
  /** Whether a long walk may be shared with a helper thread (walkHelpers.ts). */
  split: boolean;
}

export async function memoryBm25(
  db: Knex,
  request: RetrievalRequest,
  index: DatasetIndex,
  query: Bm25Query,
  plan: MemorySearch,
): Promise<{ hits: Hit[]; total: number | null }> {
  if (!plan.narrowed) return topOf(index, query, plan);
  const tags = tagFilterOf(request.filter, request.conditions);
  if (tags) return heldFiltered(index, query, plan, heldPassing(index, tags));
  const chunks = Math.max(index.chunks, 1);
  const filter = await estimateFilter(db, request, chunks);
  let share = filter.expected / chunks;
  if (filter.selective) {
    const ordinals = await passingOrdinals(db, request, index, filter.limit);
    if (ordinals) return among(index, query, ordinals, plan);
    // The planner was wrong: more than the limit pass.
    share = Math.max(share, filter.limit / chunks);
  }
  const hits = await filteredDeep(index, query, plan, firstRound(plan.k, share), (ids) => passingAmong(db, request, ids));
  return filteredTotal(db, request, index, query, plan, hits);
}

/** A tag filter, from the index alone: few passing chunks scored each, or one walk passing over the others. */
function heldFiltered(index: DatasetIndex, query: Bm25Query, plan: MemorySearch, held: HeldPassing): { hits: Hit[]; total: number | null } {
  // Judged by the chunks the filter names, dead ones too: either way the answer is exact.
  if (held.listedCount <= selectiveLimit(index.chunks)) return among(index, query, held.ordinals(), plan);
  const { terms, weights, parameters } = query;
  const hits = toHits(index, index.top(terms, weights, parameters, plan.k, plan.least, { split: plan.split, skipped: held.skipped() }));
  if (!plan.count) return { hits, total: null };
  const matches = index.match(query.terms, query.weights, query.parameters);
  let total = 0;
  for (let i = 0; i < matches.ordinals.length; i++) {
    if (held.passes(matches.ordinals[i]) && (plan.countAbove == null || matches.scores[i] >= plan.countAbove)) total++;
  }
  return { hits, total };
}

/** The best k of all the matches, and their count when asked (which needs every match scored). */
function topOf(index: DatasetIndex, query: Bm25Query, plan: MemorySearch): { hits: Hit[]; total: number | null } {
  const { terms, weights, parameters } = query;
  if (!plan.count) return { hits: toHits(index, index.top(terms, weights, parameters, plan.k, plan.least, { split: plan.split })), total: null };
  const matches = index.match(terms, weights, parameters);
  return { hits: toHits(index, index.best(matches, plan.k, plan.least)), total: countAbove(matches, plan.countAbove) };
}

/** The best k of the chunks at `ordinals`, and their count when asked. */
function among(index: DatasetIndex, query: Bm25Query, ordinals: Int32Array, plan: MemorySearch): { hits: Hit[]; total: number | null } {
  const matches = index.matchAmong(ordinals, query.terms, query.weights, query.parameters);
  return { hits: toHits(index, index.best(matches, plan.k, plan.least)), total: plan.count ? countAbove(matches, plan.countAbove) : null };
}

function firstRound(k: number, share: number): number {
  const multiple = Math.min(FIRST_ROUND.most, Math.max(FIRST_ROUND.least, 2 / share));
  return Math.ceil(Math.max(k, 1) * multiple);
}

/** Which of the candidates' ids pass the filter. */
type Check = (ids: string[]) => Promise<Set<string>>;

/** The filter's verdict on the ranked candidates from `from` on: those passing, and whether k have (or the ranking ends before `depth`). */
async function checked(check: Check, ranked: Hit[], from: number, depth: number, k: number): Promise<{ hits: Hit[]; checked: number; complete: boolean }> {
  const fresh = ranked.slice(from);
  const passed = await check(fresh.map((h) => h.id));
  const hits = fresh.filter((h) => passed.has(h.id));
  return { hits, checked: ranked.length, complete: hits.length >= k || ranked.length < depth };
}

/** The index's ordinals (ascending) of the chunks passing the filter, when at most `most` do; else null. */
async function passingOrdinals(db: Knex, request: RetrievalRequest, index: DatasetIndex, most: number): Promise<Int32Array | null> {
  // A tag filter answered from this index: its ordinals, without a look-up of each id.
  const held = await heldOrdinals(request, index);
  if (held) return held.length > most ? null : held;
  const ids = await passingIds(db, request, most + 1);
  if (ids.length > most) return null;
  // A chunk written since the index caught up is not in it yet, as it is not in its matches.
  return index.ordinalsOf(ids);
}

/** A filter passing many chunks: the best candidates are checked against it, deeper until k pass (at most k returned). */
async function filteredDeep(index: DatasetIndex, query: Bm25Query, plan: MemorySearch, firstRound: number, check: Check): Promise<Hit[]> {
  const ranking = roundsRanking(index, query, plan.least);
  let hits: Hit[] = [];
  for (let depth = firstRound, from = 0; ; depth *= DEEPER) {
    const { ranked, restarted } = ranking(depth);
    if (restarted) {
      hits = [];
      from = 0;
    }
    const round = await checked(check, ranked, from, depth, plan.k - hits.length);
    hits.push(...round.hits);
    from = round.checked;
    if (round.complete) return hits.slice(0, plan.k);
  }
}

/**
 * The best `depth` candidates, for rounds that must read one ranking: the index's top while the
 * index does not change (a deeper top starts with the shallower one); from the first change on,
 * every match scored once (ordinals are never reused, so the matches stay valid), and `restarted`
 * says the rounds must start again from the top.
 */
export function roundsRanking(index: DatasetIndex, query: Omit<Bm25Query, 'chunks'>, least: number): (depth: number) => { ranked: Hit[]; restarted: boolean } {
  const { terms, weights, parameters } = query;
  const version = index.version;
  let matches: Matches | null = null;
  return (depth) => {
    if (matches) return { ranked: toHits(index, index.best(matches, depth, least)), restarted: false };
    if (index.version === version) return { ranked: toHits(index, index.top(terms, weights, parameters, depth, least)), restarted: false };
    matches = index.match(terms, weights, parameters);
    return { ranked: toHits(index, index.best(matches, depth, least)), restarted: true };
  };
}

/** The filtered hits, and the number of matches passing the filter (and the threshold) when asked. */
async function filteredTotal(
  db: Knex,
  request: RetrievalRequest,
  index: DatasetIndex,
  query: Bm25Query,
  plan: MemorySearch,
  hits: Hit[],
): Promise<{ hits: Hit[]; total: number | null }> {
  if (!plan.count) return { hits, total: null };
  const total =
    plan.countAbove == null
      ? await countPassingMatches(db, request, query.terms)
      : (await passingAmong(db, request, aboveIds(index, index.match(query.terms, query.weights, query.parameters), plan.countAbove))).size;
  return { hits, total };
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
