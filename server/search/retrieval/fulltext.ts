// Full-text retrieval: the lexical engine finds the chunks that match the query's words, ranked by
// how well they match, weighing each query term by its rarity in the dataset (idf), so that a chunk
// holding a query's rare word outranks one holding only its common words. PostgreSQL applies the
// filter (the same filter compiler for every engine).
//
// - Postgres full-text: one statement over `lexical_documents`, joined to `chunks` when there is a
//   filter, so paging and `total` (counted only when asked) are exact whatever the filter. The query
//   goes through websearch_to_tsquery ("quoted phrases", `or`, -negation; a plain query matches any
//   of its words). Ranking: ts_rank (normalization 1: divided by 1 + log of the length) with each
//   term weighted by its idf over the dataset, counted just before (termWeights.ts); ts_rank
//   saturates a term's repeats, as BM25 does.
// - Typesense: its window of best matches and the chunks of the query's rarer words, ranked by BM25
//   over their stored terms and filtered in PostgreSQL (typesenseRanking.ts). Chunks that are neither
//   are not seen, so `total` counts the candidates that pass the filter: exact while the query
//   matches fewer chunks than the window, capped otherwise (see `typesenseWindow`).
import type { Knex } from 'knex';
import type { Services } from '../../services.js';
import { applyChunkFilter, hasConditions } from '../filters.js';
import { applyTermConditions, hasTermConditions } from '../query/conditions.js';
import type { Hit, RetrievalRequest, RetrievalResult } from '../types.js';
import { datasetSizes } from './datasetSize.js';
import { idf, lexemeQuery, rankWeights, tsqueryTerms } from './termWeights.js';
import { rankedTypesenseCandidates } from './typesenseRanking.js';

/** The most candidates asked of Typesense for one search. */
export const MAX_CANDIDATES = 1000;
/** Candidates per hit wanted, so that a filter that passes a fraction of them still fills the page. */
const CANDIDATE_FACTOR = 4;
/** Typesense's page size: fewer candidates would not save a request. */
const MIN_CANDIDATES = 250;
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
 * A plain query (no "quoted phrase", no -word) matches chunks holding any of its words, as search
 * engines do for natural-language queries, the rarer words weighing more; quotes and minus signs ask
 * for strict matching, which websearch_to_tsquery gives.
 */
function anyWord(query: string): boolean {
  return !query.includes('"') && !/(^|\s)-\S/.test(query);
}

/** Whether chunk rows must be read to narrow the matches (a filter, quoted or negated terms). */
function narrowed(request: RetrievalRequest): boolean {
  return hasConditions(request.filter) || hasTermConditions(request.conditions);
}

/** The rank of a match, as SQL over `ld.tsv` and `q.q`, with its bindings. */
interface Rank {
  sql: string;
  bindings: Knex.RawBinding[];
}

/**
 * The idf-weighted rank: the query's terms (what it does not negate), how many of the dataset's
 * documents hold each, then ts_rank with their weights (termWeights.ts). The counts take one pass
 * over the documents holding any of the terms (the matches of a plain query), whatever the query's
 * operators, and the dataset's size (datasetSize.ts); those statements are marked `idf`, as they
 * count whether or not the matches are counted.
 */
async function postgresRank(db: Knex, request: RetrievalRequest): Promise<Rank> {
  const plain: Rank = { sql: 'ts_rank(ld.tsv, q.q, 1)', bindings: [] };
  const q = tsquery(request.query, request.prefix ?? false);
  const { rows: trees } = await db.raw<{ rows: { tree: string | null }[] }>(`select querytree(${q.sql})::text as tree`, q.bindings);
  const terms = tsqueryTerms(trees[0]?.tree ?? '');
  if (terms.length === 0) return plain;
  const queries = terms.map(lexemeQuery);
  const datasetId = request.dataset.id;
  const documents = await datasetSizes.get(`lexical_documents/${datasetId}`, async () => {
    const { rows } = await db.raw<{ rows: { count: number }[] }>('select /* idf */ count(*)::int as count from lexical_documents where dataset_id = ?', [
      datasetId,
    ]);
    return rows[0].count;
  });
  const { rows } = await db.raw<{ rows: { frequencies: number[] }[] }>(
    `select /* idf */ array[${queries.map(() => 'count(*) filter (where ld.tsv @@ ?::tsquery)').join(', ')}]::int[] as frequencies
     from lexical_documents ld where ld.dataset_id = ? and ld.tsv @@ ?::tsquery`,
    [...queries, datasetId, queries.join(' | ')],
  );
  const { frequencies } = rows[0];
  const boost = request.termBoost;
  const weighted = terms.map((term, i) => ({ ...term, weight: idf(documents, frequencies[i]) * (boost?.lexemes.includes(term.lexeme) ? boost.factor : 1) }));
  const { weights, scale, labelled } = rankWeights(weighted);
  // The stored positions all carry label D: each other class's lexemes are relabelled.
  let tsv = 'ld.tsv';
  for (const { label } of labelled) tsv = `setweight(${tsv}, '${label}', ?::text[])`;
  return { sql: `?::float8 * ts_rank(?::float4[], ${tsv}, q.q, 1)`, bindings: [scale, weights, ...labelled.map((l) => l.lexemes)] };
}

/**
 * The dataset's documents matching the query, with their rank, above the threshold and, when there
 * is a filter, joined to their chunks and filtered: what both the page and the count read.
 */
function postgresMatches(db: Knex, request: RetrievalRequest, rank: Rank | null): Knex.QueryBuilder {
  const q = tsquery(request.query, request.prefix ?? false);
  const builder = db
    .from(db.raw(`lexical_documents as ld cross join (select ${q.sql} as q) as q`, q.bindings))
    .where('ld.dataset_id', request.dataset.id)
    .whereRaw('ld.tsv @@ q.q')
    .select('ld.id');
  if (rank) builder.select(db.raw(`${rank.sql} as score`, rank.bindings));
  if (rank && request.scoreThreshold != null) builder.whereRaw(`${rank.sql} >= ?`, [...rank.bindings, request.scoreThreshold]);
  if (!narrowed(request)) return builder;
  builder.join('chunks', (on) => on.on('chunks.id', 'ld.id').andOn('chunks.dataset_id', 'ld.dataset_id'));
  return applyTermConditions(applyChunkFilter(builder, request.filter, 'chunks', 'filters'), request.conditions);
}

async function postgresSearch(services: Services, request: RetrievalRequest): Promise<RetrievalResult> {
  const db = services.store.db;
  const rank = await postgresRank(db, request);
  if (!request.countTotal) {
    const page: { id: string; score: number }[] = await postgresMatches(db, request, rank)
      .orderBy([{ column: 'score', order: 'desc' }, 'ld.id'])
      .limit(request.limit)
      .offset(request.offset);
    return { hits: page.map((r) => ({ id: r.id, score: Number(r.score) })), total: null };
  }
  // One statement: the count and the page of the same matches. The left join keeps the count's
  // row when the page is empty (an offset past the end).
  const rows: { total: number; id: string | null; score: number | null }[] = await db
    .with('matches', postgresMatches(db, request, rank))
    .select('totals.total', 'page.id', 'page.score')
    .from(db.raw('(select count(*)::int as total from matches) as totals'))
    .joinRaw('left join (select id, score from matches order by score desc, id limit ? offset ?) as page on true', [request.limit, request.offset])
    .orderByRaw('page.score desc, page.id');
  const hits = rows.flatMap((r) => (r.id == null ? [] : [{ id: r.id, score: Number(r.score) }]));
  return { hits, total: rows[0]?.total ?? 0 };
}

async function postgresCount(services: Services, request: RetrievalRequest): Promise<number> {
  const db = services.store.db;
  // Only a threshold needs the rank.
  const rank = request.scoreThreshold != null ? await postgresRank(db, request) : null;
  const [row] = await db.from(postgresMatches(db, request, rank).as('matches')).count<{ count: string | number }[]>('* as count');
  return Number(row.count);
}

/**
 * Typesense's candidates for hits up to `wanted`, ranked, that pass the threshold and the filter.
 * Typesense matches the last query word as a prefix by default, so `prefix` only tells the ranking
 * to count the last word as one.
 */
function typesenseCandidates(services: Services, request: RetrievalRequest, wanted: number): Promise<Hit[]> {
  const filtered = narrowed(request);
  return rankedTypesenseCandidates(services, request, {
    window: typesenseWindow(wanted, filtered),
    lastIsPrefix: !!request.prefix && endsInPrefix(request.query),
    anyWord: anyWord(request.query),
  });
}

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
