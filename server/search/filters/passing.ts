// The chunks that pass a search's filter and term conditions, and whether they are few.
//
// An index ranked for the query (an HNSW graph, BM25 posting lists) meets a filter by reading its
// best candidates and dropping those that fail: cheap while many pass, but a filter passing 1 % of
// the chunks makes it read about a hundred candidates for every result, and at a million chunks
// that walk costs more than reading the passing chunks themselves. A filter passing at most
// `selectiveLimit` chunks is therefore answered from the chunks that pass, scored exactly; the
// limit grows with the dataset because the walk's cost follows the filter's share, whereas reading
// the passing chunks costs what their number does. Whether a filter is that selective is first
// asked of PostgreSQL's planner (its statistics, no rows read), then checked by reading at most one
// chunk more than the limit, so a wrong estimate costs a bounded read, never a wrong answer.
import type { Knex } from 'knex';
import { packIds } from '../chunkIdWords.js';
import { applyChunkFilter, hasConditions } from '../filters.js';
import { applyTermConditions, hasTermConditions } from '../query/conditions.js';
import type { RetrievalRequest } from '../types.js';
import type { HeldPassing, TagIndex } from './held.js';

/** A filter passing at most max(least, share × the dataset's chunks) chunks is selective (tests lower both). */
export const selective = { least: 2000, share: 0.02 };

export function selectiveLimit(datasetChunks: number): number {
  return Math.max(selective.least, Math.floor(datasetChunks * selective.share));
}

/** Whether the request passes fewer chunks than the whole dataset (a filter or term conditions). */
export function narrowed(request: RetrievalRequest): boolean {
  return hasConditions(request.filter) || hasTermConditions(request.conditions);
}

/** The dataset's chunks (of `from`, a query over `chunks`) that pass the request's filter and conditions. */
export function passingQuery(
  db: Knex,
  request: RetrievalRequest,
  from: Knex.QueryBuilder = db('chunks').where('chunks.dataset_id', request.dataset.id),
): Knex.QueryBuilder {
  return applyTermConditions(applyChunkFilter(from, request.filter, 'chunks', 'filters'), request.conditions);
}

/**
 * One search's reads of its filter, made once however many of its lists ask for them (hybrid's
 * two): for the requests with this filter and these term conditions. `held`, when set, answers
 * them all from memory instead (a tag filter, filters/held.ts), unless it comes back null.
 */
export class FilterReads {
  expected?: Promise<number>;
  passing?: { limit: number; ids: Promise<string[]> };
  held?: Promise<HeldPassing | null>;

  constructor(
    readonly filter: RetrievalRequest['filter'],
    readonly conditions: RetrievalRequest['conditions'],
  ) {}
}

/** The request's shared reads, when they are of its filter and conditions. */
function sharedReads(request: RetrievalRequest): FilterReads | undefined {
  const reads = request.filterReads;
  return reads && reads.filter === request.filter && reads.conditions === request.conditions ? reads : undefined;
}

/**
 * How many chunks the planner expects to pass, from its statistics (no rows are read); from memory,
 * how many the filter's lists name (dead chunks among them, too few to matter for an estimate).
 */
export async function estimatedPassing(db: Knex, request: RetrievalRequest): Promise<number> {
  const reads = sharedReads(request);
  const held = await reads?.held;
  if (held) return held.listedCount;
  if (!reads) return plannedRows(db, request);
  reads.expected ??= plannedRows(db, request);
  return reads.expected;
}

async function plannedRows(db: Knex, request: RetrievalRequest): Promise<number> {
  const result = (await db.raw('explain (format json) ?', [passingQuery(db, request).select('chunks.id')])) as unknown;
  const rows = Array.isArray(result) ? result : ((result as { rows?: unknown[] }).rows ?? []);
  const cell = Object.values((rows[0] ?? {}) as Record<string, unknown>)[0];
  const plan = (typeof cell === 'string' ? JSON.parse(cell) : cell) as { Plan?: { 'Plan Rows'?: number } }[];
  return Number(plan?.[0]?.Plan?.['Plan Rows'] ?? Number.POSITIVE_INFINITY);
}

export interface FilterEstimate {
  /** How many chunks the planner expects to pass. */
  expected: number;
  /** The dataset's selective limit, and whether the planner expects at most that many to pass. */
  limit: number;
  selective: boolean;
}

/** What the planner expects of the request's filter on a dataset of `datasetChunks` chunks. */
export async function estimateFilter(db: Knex, request: RetrievalRequest, datasetChunks: number | Promise<number>): Promise<FilterEstimate> {
  const [expected, chunks] = await Promise.all([estimatedPassing(db, request), datasetChunks]);
  const limit = selectiveLimit(chunks);
  return { expected, limit, selective: expected <= limit };
}

/** Up to `limit` of the chunks passing the filter (of a shared read, when one reads at least as many). */
export async function passingIds(db: Knex, request: RetrievalRequest, limit: number): Promise<string[]> {
  // A promise, not the query builder: awaiting a builder twice would run its statement twice.
  const read = async (n: number): Promise<string[]> => passingQuery(db, request).limit(n).pluck('chunks.id');
  const reads = sharedReads(request);
  const held = await reads?.held;
  if (held) return held.ids(limit);
  if (!reads) return read(limit);
  if (!reads.passing || reads.passing.limit < limit) reads.passing = { limit, ids: read(limit) };
  const ids = await reads.passing.ids;
  return ids.length > limit ? ids.slice(0, limit) : ids;
}

/** Up to `limit` of the chunks passing the filter, as passingIds, their ids as words one after another (chunkIdWords.js). */
export async function passingIdWords(db: Knex, request: RetrievalRequest, limit: number): Promise<Int32Array> {
  const held = await sharedReads(request)?.held;
  return held ? held.idWords(limit) : packIds(await passingIds(db, request, limit));
}

/** The passing chunks' ordinals in `index` (ascending), when the filter was answered from `index` as it is now; else null. */
export async function heldOrdinals(request: RetrievalRequest, index: TagIndex): Promise<Int32Array | null> {
  return (await sharedReads(request)?.held)?.ordinalsIn(index) ?? null;
}

/**
 * The chunks among `ids` that pass the filter: each looked up by its key (joined from the list),
 * so a broad filter's index is not read in full to intersect it with a few candidates.
 */
export async function passingAmong(db: Knex, request: RetrievalRequest, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const held = await sharedReads(request)?.held;
  if (held) return held.among(ids);
  const candidates = db
    .from(db.raw('unnest(?::uuid[]) as candidate(id)', [ids]))
    .join('chunks', (on) => on.on('chunks.id', 'candidate.id').andOnVal('chunks.dataset_id', request.dataset.id));
  return new Set(await passingQuery(db, request, candidates).pluck('chunks.id'));
}
