// The SQL of BM25 retrieval: the statistics, postings and chunk terms it reads (migration 014 keeps
// the postings and counts; migration 008 the terms on each chunk row).
import type { Knex } from 'knex';
import type { RetrievalRequest } from '../../types.js';
import { passingQuery } from '../../filters/passing.js';
import { lexemeQuery } from '../termWeights.js';
import type { Bm25Parameters, PostingRange } from './bounds.js';
import { parseTsvectorText } from './tsvectorText.js';
import { namedStatement, runNamed } from '../../../store/namedStatements.js';

export interface TermStatistics {
  /** The query's terms as the chunks' terms were made (stemmed, stop words dropped), distinct. */
  terms: string[];
  /** Chunks of the dataset (with terms). */
  chunks: number;
  /** Their lengths in terms, summed. */
  lengthSum: number;
  /** Per term, how many chunks hold it. */
  counts: number[];
  /** The dataset's version (changes.ts) these statistics were read at. */
  version: number;
}

/**
 * The query's terms and the statistics BM25 weighs them by, in one statement (no query: the totals
 * alone). Each term's count is looked up by key, whatever the planner knows of the dataset's terms.
 * A named statement: each connection parses and plans it once.
 */
export async function termStatistics(db: Knex, datasetId: string, query: string | null): Promise<TermStatistics> {
  const rows = await runNamed<{
    total_chunks: string | null;
    total_length: string | null;
    dataset_version: string | null;
    query_terms: string[];
    term_chunks: number[];
  }>(db, TERM_STATISTICS, [query, datasetId, datasetId]);
  const [row] = rows;
  return {
    terms: row.query_terms,
    chunks: Number(row.total_chunks ?? 0),
    lengthSum: Number(row.total_length ?? 0),
    counts: row.term_chunks.map(Number),
    version: Number(row.dataset_version ?? 0),
  };
}

const TERM_STATISTICS = namedStatement(
  'bm25_term_statistics',
  `
  with q as (select distinct lexeme from unnest(to_tsvector('english', coalesce(?::text, ''))))
  select t.chunks as total_chunks, t.length_sum as total_length, t.version as dataset_version,
         array(select lexeme from q order by lexeme) as query_terms,
         array(select coalesce((select c.chunks from bm25_term_counts c where c.dataset_id = ? and c.term = q.lexeme), 0)
                 from q order by lexeme) as term_chunks
    from (select 1) as one left join bm25_dataset_totals t on t.dataset_id = ?`,
);

export interface Posting {
  term: string;
  chunkId: string;
  tf: number;
  length: number;
}

/** Each term's first `perTerm` postings: highest term frequency first, then shortest chunk. */
export async function leadingPostings(db: Knex, datasetId: string, terms: string[], perTerm: number): Promise<Posting[]> {
  const { rows } = await db.raw<{ rows: { term: string; chunk_id: string; tf: number; len: number }[] }>(
    `select q.term, p.chunk_id, p.tf, p.len
       from unnest(?::text[]) as q(term)
       cross join lateral (select chunk_id, tf, len from bm25_postings
                            where dataset_id = ? and term = q.term
                            order by tf desc, len, chunk_id limit ?) as p`,
    [terms, datasetId, perTerm],
  );
  return rows.map((r) => ({ term: r.term, chunkId: r.chunk_id, tf: r.tf, length: r.len }));
}

/**
 * Per term, each term frequency its postings have with the shortest chunk having it: where its
 * highest impacts lie, whatever the parameters. A skip scan, one index probe per frequency.
 */
export async function shortestPerTf(db: Knex, datasetId: string, terms: string[]): Promise<{ term: string; tf: number; length: number }[]> {
  const { rows } = await db.raw<{ rows: { term: string; tf: number; len: number }[] }>(
    `with recursive steps(term, tf, len) as (
       select q.term, f.tf, f.len
         from unnest(?::text[]) as q(term)
         cross join lateral (select tf, len from bm25_postings where dataset_id = ? and term = q.term order by tf desc, len limit 1) as f
       union all
       select s.term, n.tf, n.len
         from steps s
         cross join lateral (select tf, len from bm25_postings where dataset_id = ? and term = s.term and tf < s.tf order by tf desc, len limit 1) as n)
     select term, tf, len from steps`,
    [terms, datasetId, datasetId],
  );
  return rows.map((r) => ({ term: r.term, tf: r.tf, length: r.len }));
}

/** The chunks holding a posting in one of the ranges (each an index range scan), distinct. */
export async function chunksInRanges(db: Knex, datasetId: string, ranges: { term: string; range: PostingRange }[]): Promise<string[]> {
  if (ranges.length === 0) return [];
  const { rows } = await db.raw<{ rows: { chunk_id: string }[] }>(
    `select distinct p.chunk_id
       from unnest(?::text[], ?::int[], ?::int[], ?::int[]) as r(term, tf_from, tf_to, max_len)
       cross join lateral (select chunk_id from bm25_postings
                            where dataset_id = ? and term = r.term and tf between r.tf_from and r.tf_to and len <= r.max_len) as p`,
    [ranges.map((r) => r.term), ranges.map((r) => r.range.tfFrom), ranges.map((r) => r.range.tfTo), ranges.map((r) => r.range.maxLength), datasetId],
  );
  return rows.map((r) => r.chunk_id);
}

/** A tsquery matching chunks that hold any of the terms. */
const anyTerm = (terms: string[]) => terms.map((lexeme) => lexemeQuery({ lexeme, prefix: false })).join(' | ');

/** Up to `limit` of the chunks passing the filter that hold any of the terms. */
export async function passingMatches(db: Knex, request: RetrievalRequest, terms: string[], limit: number): Promise<string[]> {
  return passingQuery(db, request)
    .whereRaw('chunks.bm25_terms @@ ?::tsquery', [anyTerm(terms)])
    .limit(limit)
    .pluck('chunks.id');
}

/** How many chunks passing the filter hold any of the terms. */
export async function countPassingMatches(db: Knex, request: RetrievalRequest, terms: string[]): Promise<number> {
  const [row] = await passingQuery(db, request)
    .whereRaw('chunks.bm25_terms @@ ?::tsquery', [anyTerm(terms)])
    .count<{ count: string | number }[]>('* as count');
  return Number(row.count);
}

export interface WeightedTerms {
  terms: string[];
  /** Per term: idf times its boost factor. */
  weights: number[];
}

/**
 * The BM25 scores of the chunks among `ids` that pass the filter, at least `least`, best first (ties
 * by id), at most `limit` of them (null: all), each computed from every query term the chunk holds.
 */
export async function scoreChunks(
  db: Knex,
  request: RetrievalRequest,
  ids: string[],
  query: WeightedTerms,
  { k1, b, averageLength }: Bm25Parameters,
  least: number,
  limit: number | null,
): Promise<{ id: string; score: number }[]> {
  if (ids.length === 0) return [];
  const chunks = passingQuery(db, request)
    .whereRaw('chunks.id = any(?::uuid[])', [ids])
    .select('chunks.id', 'chunks.bm25_length as len', 'chunks.bm25_terms as terms');
  // Each chunk's terms cut down to the query's before they become rows: the stored terms carry
  // label D, setweight marks the query's A and ts_filter keeps those.
  const { rows } = await db.raw<{ rows: { id: string; score: number }[] }>(
    `select id, score from (
       select c.id, sum(q.weight * u.tf * (?::float8 + 1) / (u.tf + ?::float8 * (1 - ?::float8 + ?::float8 * c.len / ?::float8))) as score
         from (?) as c
         cross join lateral (select lexeme, coalesce(array_length(positions, 1), 1) as tf
                               from unnest(ts_filter(setweight(c.terms, 'A', ?::text[]), '{a}'))) as u
         join unnest(?::text[], ?::float8[]) as q(term, weight) on q.term = u.lexeme
        group by c.id) as scored
      where score >= ?
      order by score desc, id
      limit ?`,
    [k1, k1, b, b, averageLength, chunks, query.terms, query.terms, query.weights, least, limit],
  );
  return rows.map((r) => ({ id: r.id, score: Number(r.score) }));
}

/** A chunk's terms as the in-memory index holds them (memory.ts). */
export interface ChunkTerms {
  id: string;
  length: number;
  terms: string[];
  tfs: number[];
  /** Its tag_set, which the index holds too (for tag filters). */
  tags: string[];
}

const chunkTermsColumns = "c.id, coalesce(c.bm25_length, 0) as length, c.bm25_terms::text as terms, coalesce(c.tag_set, '{}') as tags";

type PrintedTerms = { id: string; length: number | string; terms: string; tags: string[] };

function chunkTermsOf(row: PrintedTerms): ChunkTerms {
  return { id: row.id, length: Number(row.length), ...parseTsvectorText(row.terms), tags: row.tags };
}

/** Forgets a purged dataset's totals and change log (its chunks, postings and counts are gone already). */
export async function forgetDataset(db: Knex, datasetId: string): Promise<void> {
  await db('bm25_changes').where({ dataset_id: datasetId }).del();
  await db('bm25_dataset_totals').where({ dataset_id: datasetId }).del();
}

/** Up to `limit` of the dataset's chunks with terms, after the id `after`, in id order. */
export async function chunkTermsPage(db: Knex, datasetId: string, after: string | null, limit: number): Promise<ChunkTerms[]> {
  const { rows } = await db.raw<{ rows: PrintedTerms[] }>(
    `select ${chunkTermsColumns} from chunks c
      where c.dataset_id = ? and c.id > coalesce(?::uuid, '00000000-0000-0000-0000-000000000000') and c.bm25_terms is not null
      order by c.id limit ?`,
    [datasetId, after, limit],
  );
  return rows.map(chunkTermsOf);
}

/** The chunks among `ids` that are the dataset's and have terms, as they are now. */
export async function chunkTerms(db: Knex, datasetId: string, ids: string[]): Promise<ChunkTerms[]> {
  const { rows } = await db.raw<{ rows: PrintedTerms[] }>(
    `select ${chunkTermsColumns} from chunks c where c.id = any(?::uuid[]) and c.dataset_id = ? and c.bm25_terms is not null`,
    [ids, datasetId],
  );
  return rows.map(chunkTermsOf);
}
