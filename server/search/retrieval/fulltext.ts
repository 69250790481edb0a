// Full-text retrieval: the lexical engine finds and ranks the chunks that match the query's words,
// PostgreSQL applies the filter (the same filter compiler for every engine).
//
// - Postgres full-text: one statement over `lexical_documents`, joined to `chunks` when there is a
//   filter, so paging and `total` (counted only when asked) are exact whatever the filter. The query goes through websearch_to_tsquery unchanged ("quoted
//   phrases", `or`, -negation) and is ranked as server/engines/lexical/postgres.ts ranks it.
// - Typesense: a window of the engine's best candidates is filtered in PostgreSQL, keeping the
//   engine's order. Chunks past the window are not seen, so `total` counts the candidates that pass
//   the filter: exact while the query matches fewer chunks than the window, capped at the window
//   otherwise (see `typesenseWindow`).
import type { Knex } from 'knex';
import type { Services } from '../../services.js';
import { applyChunkFilter } from '../filters.js';
import { anyLexeme } from '../query/boost.js';
import { applyTermConditions, hasTermConditions } from '../query/conditions.js';
import type { Hit, RetrievalRequest, RetrievalResult } from '../types.js';

/** The most candidates asked of Typesense for one search. */
export const MAX_CANDIDATES = 1000;
/** Candidates per hit wanted, so that a filter that passes a fraction of them still fills the page. */
const CANDIDATE_FACTOR = 4;
/** Typesense's page size: fewer candidates would not save a request. */
const MIN_CANDIDATES = 250;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** The final lexeme of a tsquery's text form, e.g. `'polici'` in `'refund' & 'polici'`. */
const LAST_LEXEME = "'([^']|'')*'$";

/**
 * How many candidates Typesense is asked for, to serve hits up to `wanted` (offset + limit): with a
 * filter, several per wanted hit, since the filter drops some; without one, every candidate counts.
 */
export function typesenseWindow(wanted: number, filtered: boolean): number {
  return Math.min(MAX_CANDIDATES, Math.max(wanted, MIN_CANDIDATES) * (filtered ? CANDIDATE_FACTOR : 1));
}

/**
 * Whether prefix matching applies: the query ends in a word being typed (not a closed "phrase", not
 * a -negated word, whose prefix would exclude every word it begins).
 */
export function endsInPrefix(query: string): boolean {
  const trimmed = query.trimEnd();
  return /[\p{L}\p{N}]$/u.test(trimmed) && !/(^|\s)-[\p{L}\p{N}_']*$/u.test(trimmed);
}

/**
 * The tsquery of the text, as SQL and its bindings. With `prefix`, the last lexeme matches as a
 * prefix (`'refun':*` matches `refund`): websearch_to_tsquery keeps the syntax of the rest, and the
 * last lexeme of its text form gets `:*`.
 */
function tsquery(query: string, prefix: boolean): { sql: string; bindings: string[] } {
  const parsed = anyWord(query) ? `replace(websearch_to_tsquery('english', ?)::text, ' & ', ' | ')::tsquery` : `websearch_to_tsquery('english', ?)`;
  return prefix && endsInPrefix(query)
    ? { sql: `regexp_replace((${parsed})::text, ?, ?)::tsquery`, bindings: [query, LAST_LEXEME, '\\&:*'] }
    : { sql: parsed, bindings: [query] };
}

/**
 * A plain query (no "quoted phrase", no -word) matches chunks holding any of its words, ranked by how
 * densely they hold them, as search engines do for natural-language queries; quotes and minus signs
 * ask for strict matching, which websearch_to_tsquery gives.
 */
function anyWord(query: string): boolean {
  return !query.includes('"') && !/(^|\s)-\S/.test(query);
}

/** Whether the filter has any condition (only then do the matches need their chunk rows). */
function filters(filter: RetrievalRequest['filter']): boolean {
  return !!filter && [filter.must, filter.should, filter.must_not].some((conditions) => (conditions?.length ?? 0) > 0);
}

/**
 * The dataset's documents matching the query, with their rank, above the threshold and, when there
 * is a filter, joined to their chunks and filtered: what both the page and the count read.
 */
function postgresMatches(db: Knex, request: RetrievalRequest): Knex.QueryBuilder {
  const q = tsquery(request.query, request.prefix ?? false);
  // Cover density, normalized by 1 + log(length): the ranking of PostgresLexicalIndex.search; a
  // fulltext boost adds the boosted terms' own rank (factor − 1) times (search/query/boost.ts).
  const boost = request.termBoost;
  const rank = boost ? 'ts_rank_cd(ld.tsv, q.q, 1) + ?::float8 * ts_rank_cd(ld.tsv, ?::tsquery, 1)' : 'ts_rank_cd(ld.tsv, q.q, 1)';
  const rankBindings = boost ? [boost.factor - 1, anyLexeme(boost.lexemes)] : [];
  const builder = db
    .from(db.raw(`lexical_documents as ld cross join (select ${q.sql} as q) as q`, q.bindings))
    .where('ld.dataset_id', request.dataset.id)
    .whereRaw('ld.tsv @@ q.q')
    .select('ld.id', db.raw(`${rank} as score`, rankBindings));
  if (request.scoreThreshold != null) builder.whereRaw(`${rank} >= ?`, [...rankBindings, request.scoreThreshold]);
  if (!filters(request.filter) && !hasTermConditions(request.conditions)) return builder;
  builder.join('chunks', (on) => on.on('chunks.id', 'ld.id').andOn('chunks.dataset_id', 'ld.dataset_id'));
  return applyTermConditions(applyChunkFilter(builder, request.filter, 'chunks', 'filters'), request.conditions);
}

async function postgresSearch(services: Services, request: RetrievalRequest): Promise<RetrievalResult> {
  const db = services.store.db;
  if (!request.countTotal) {
    const page: { id: string; score: number }[] = await postgresMatches(db, request).orderBy([{ column: 'score', order: 'desc' }, 'ld.id']).limit(request.limit).offset(request.offset);
    return { hits: page.map((r) => ({ id: r.id, score: Number(r.score) })), total: null };
  }
  // One statement: the count and the page of the same matches. The left join keeps the count's
  // row when the page is empty (an offset past the end).
  const rows: { total: number; id: string | null; score: number | null }[] = await db
    .with('matches', postgresMatches(db, request))
    .select('totals.total', 'page.id', 'page.score')
    .from(db.raw('(select count(*)::int as total from matches) as totals'))
    .joinRaw('left join (select id, score from matches order by score desc, id limit ? offset ?) as page on true', [request.limit, request.offset])
    .orderByRaw('page.score desc, page.id');
  const hits = rows.flatMap((r) => (r.id == null ? [] : [{ id: r.id, score: Number(r.score) }]));
  return { hits, total: rows[0]?.total ?? 0 };
}

async function postgresCount(services: Services, request: RetrievalRequest): Promise<number> {
  const db = services.store.db;
  const [row] = await db.from(postgresMatches(db, request).as('matches')).count<{ count: string | number }[]>('* as count');
  return Number(row.count);
}

/**
 * Typesense's candidates for hits up to `wanted`, best first, that pass the threshold and the filter
 * (and still exist as chunks). Typesense matches the last query word as a prefix by default, so
 * `prefix` needs nothing more (and a search without it matches prefixes too).
 */
async function typesenseCandidates(services: Services, request: RetrievalRequest, wanted: number): Promise<Hit[]> {
  const filtered = filters(request.filter) || hasTermConditions(request.conditions);
  const found = await withTermBoost(services, request, await services.lexical.search({ datasetId: request.dataset.id, query: request.query, limit: typesenseWindow(wanted, filtered) }));
  const threshold = request.scoreThreshold;
  const candidates = found.filter((h) => UUID.test(h.id) && (threshold == null || h.score >= threshold));
  if (candidates.length === 0) return [];
  if (!filtered) return candidates.sort(byScoreThenId);
  const db = services.store.db;
  const query = db('chunks').where('chunks.dataset_id', request.dataset.id).whereRaw('chunks.id = any(?::uuid[])', [candidates.map((h) => h.id)]);
  const kept = new Set<string>(await applyTermConditions(applyChunkFilter(query, request.filter, 'chunks', 'filters'), request.conditions).pluck('chunks.id'));
  return candidates.filter((h) => kept.has(h.id)).sort(byScoreThenId);
}

/**
 * Typesense's hits rescored for a fulltext boost: text_match(query) + (factor − 1) · text_match of the
 * boosted words, scored among the same hits (search/query/boost.ts).
 */
async function withTermBoost(services: Services, request: RetrievalRequest, hits: Hit[]): Promise<Hit[]> {
  const boost = request.termBoost;
  const candidates = hits.filter((h) => UUID.test(h.id));
  if (!boost || !services.lexical.scoreAmong || candidates.length === 0) return candidates;
  const scored = await services.lexical.scoreAmong({ datasetId: request.dataset.id, query: boost.words.join(' '), ids: candidates.map((h) => h.id) });
  const boosted = new Map(scored.map((h) => [h.id, h.score]));
  return candidates.map((h) => ({ id: h.id, score: h.score + (boost.factor - 1) * (boosted.get(h.id) ?? 0) }));
}

/** The engine's order; equal scores by id, so pages do not depend on the engine's tie order. */
const byScoreThenId = (a: Hit, b: Hit) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** A page of full-text hits and the number of matches (see the header for Typesense's). */
export async function fulltextSearch(services: Services, request: RetrievalRequest): Promise<RetrievalResult> {
  if (services.lexical.kind === 'postgres') return postgresSearch(services, request);
  // Counting reads as many candidates as it may (the count is capped at the window).
  const hits = await typesenseCandidates(services, request, request.countTotal ? MAX_CANDIDATES : request.offset + request.limit);
  return { hits: hits.slice(request.offset, request.offset + request.limit), total: request.countTotal ? hits.length : null };
}

/** The `n` best full-text hits, best first (for fusion). */
export async function fulltextTop(services: Services, request: RetrievalRequest, n: number): Promise<Hit[]> {
  if (services.lexical.kind === 'postgres') return (await postgresSearch(services, { ...request, limit: n, offset: 0 })).hits;
  return (await typesenseCandidates(services, request, n)).slice(0, n);
}

export async function countFulltext(services: Services, request: RetrievalRequest): Promise<number> {
  if (services.lexical.kind === 'postgres') return postgresCount(services, request);
  return (await typesenseCandidates(services, request, MAX_CANDIDATES)).length;
}
