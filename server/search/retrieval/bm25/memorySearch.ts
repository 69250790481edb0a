// BM25 over a dataset's in-memory index (memory.ts): every chunk holding a query term is scored in
// memory, exactly, and only the filter is asked of SQL. A filter passing few chunks becomes a mask
// for the scoring; one passing many is checked on the best candidates, deeper until k pass.
import type { Knex } from 'knex';
import type { Hit, RetrievalRequest } from '../../types.js';
import type { Bm25Query } from './index.js';
import type { DatasetIndex, Matches } from './memory.js';
import { countPassingMatches, passingAmong, passingChunks } from './postings.js';

/** Candidates checked against a filter at first, per result asked, and how much deeper each next round goes. */
const DEEPER = 8;

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
  const mask = plan.narrowed ? await filterMask(db, request, index, plan.directScoring) : null;
  if (plan.narrowed && !mask) return filteredDeep(db, request, index, query, plan);
  const matches = index.match(query.terms, query.weights, query.parameters, mask);
  const hits = toHits(index, matches, index.best(matches, plan.k, plan.least));
  return { hits, total: plan.count ? countAbove(matches, plan.countAbove) : null };
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
): Promise<{ hits: Hit[]; total: number | null }> {
  const matches = index.match(query.terms, query.weights, query.parameters, null);
  const hits: Hit[] = [];
  // Ordinals are never reused, so the matches stay valid while the index catches up meanwhile.
  for (let depth = Math.max(plan.k, 1) * DEEPER, checked = 0; ; depth *= DEEPER) {
    const ranked = toHits(index, matches, index.best(matches, depth, plan.least));
    const fresh = ranked.slice(checked);
    const passed = await passingAmong(
      db,
      request,
      fresh.map((h) => h.id),
    );
    hits.push(...fresh.filter((h) => passed.has(h.id)));
    checked = ranked.length;
    if (hits.length >= plan.k || ranked.length < depth) break;
  }
  if (!plan.count) return { hits: hits.slice(0, plan.k), total: null };
  const total =
    plan.countAbove == null
      ? await countPassingMatches(db, request, query.terms)
      : (await passingAmong(db, request, aboveIds(index, matches, plan.countAbove))).size;
  return { hits: hits.slice(0, plan.k), total };
}

function toHits(index: DatasetIndex, matches: Matches, positions: number[]): Hit[] {
  return positions.map((p) => ({ id: index.idOf(matches.ordinals[p]), score: matches.scores[p] }));
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
