// Keyword recommendations (`bm25`, `fulltext`): each chunk is a sparse vector over the terms stored
// on its row (stemmed, stop words dropped; the same terms in every engine), and chunks are compared
// by the dot product of those vectors with each term scaled by its rarity in the dataset:
//
//   sim(a, c) = Σ_t idf(t) · w_a(t) · w_c(t),   idf(t) = ln(1 + (N − df + 0.5) / (df + 0.5))
//
// where w is, for `bm25`, the BM25 term weight tf·(k+1) / (tf + k·(1 − b + b·len/avg)) with the
// dataset's BM25_K, BM25_B and BM25_AVG_LEN, and for `fulltext`, (1 + ln tf) / (1 + ln len), the
// length normalisation of the full-text ranking. The strategies combine the examples as dense ones do
// (./dense.ts): average_vector into one vector 2·mean(positives) − mean(negatives), best_score by the
// best similarity to a positive against the best to a negative.
//
// To keep the statements bounded, an example contributes its MAX_TERMS_PER_EXAMPLE best terms (by
// idf·w) and the average vector its MAX_QUERY_TERMS best positive and negative terms; rarity is looked
// up for at most MAX_IDF_TERMS terms, those weighing most over all examples.
import type { Knex } from 'knex';
import type * as T from '../../../sdk/src/generated/types.gen.js';
import { datasetConfig } from '../../domain/datasetConfig.js';
import type { DatasetRow } from '../../domain/datasets.js';
import type { Services } from '../../services.js';
import { applyChunkFilter } from '../filters.js';
import { averageLength } from '../retrieval/bm25/index.js';
import type { Hit } from '../types.js';
import type { Examples } from './examples.js';
import type { Recommender, RecommendStrategy } from './types.js';

export const MAX_TERMS_PER_EXAMPLE = 32;
export const MAX_QUERY_TERMS = 64;
export const MAX_IDF_TERMS = 2000;

const TF = 'coalesce(array_length(u.positions, 1), 1)::float8';
const LEN = 'coalesce(c.bm25_length, 0)::float8';

/** A term of one example vector (the average vector is example 0), its weight with idf applied. */
interface QueryTerm {
  example: number;
  positive: boolean;
  lexeme: string;
  weight: number;
}

/** The SQL of a chunk's weight for a term, over the row `c` and its term `u`. */
async function termWeight(db: Knex, dataset: DatasetRow, kind: 'bm25' | 'fulltext'): Promise<string> {
  if (kind === 'fulltext') return `((1 + ln(${TF})) / (1 + ln(greatest(${LEN}, 1))))`;
  const config = datasetConfig(dataset);
  const [k, b] = [config.BM25_K, config.BM25_B];
  const avg = await averageLength(db, dataset);
  // Validated numbers of the dataset's configuration, written as literals.
  for (const value of [k, b, avg]) if (!Number.isFinite(value)) throw new Error(`not a BM25 parameter: ${value}`);
  return `(${TF} * (${k}::float8 + 1) / (${TF} + ${k}::float8 * (1 - ${b}::float8 + ${b}::float8 * ${LEN} / ${avg}::float8)))`;
}

/** A tsquery text matching any of the lexemes, each quoted. */
function anyOf(lexemes: string[]): string {
  return lexemes.map((t) => `'${t.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`).join(' | ');
}

/** Each example chunk's term weights. */
async function exampleWeights(db: Knex, dataset: DatasetRow, weight: string, ids: string[]): Promise<Map<string, Map<string, number>>> {
  const byChunk = new Map<string, Map<string, number>>(ids.map((id) => [id, new Map()]));
  if (ids.length === 0) return byChunk;
  const { rows } = (await db.raw(
    `select c.id, u.lexeme, ${weight} as weight
       from chunks c cross join lateral unnest(c.bm25_terms) as u
      where c.dataset_id = ? and c.id = any(?::uuid[])`,
    [dataset.id, ids],
  )) as unknown as { rows: { id: string; lexeme: string; weight: number }[] };
  for (const row of rows) byChunk.get(row.id)?.set(row.lexeme, Number(row.weight));
  return byChunk;
}

/** idf of each lexeme over the whole dataset (so a filter does not change the scores). */
async function inverseDocumentFrequencies(db: Knex, datasetId: string, lexemes: string[]): Promise<Map<string, number>> {
  const idf = new Map<string, number>();
  if (lexemes.length === 0) return idf;
  const [{ count }] = await db('chunks').where({ dataset_id: datasetId }).count<{ count: string | number }[]>('* as count');
  const total = Number(count);
  const { rows } = (await db.raw(
    `select u.lexeme, count(*)::int as df
       from chunks c cross join lateral unnest(c.bm25_terms) as u
      where c.dataset_id = ? and c.bm25_terms @@ to_tsquery('simple', ?) and u.lexeme = any(?::text[])
      group by u.lexeme`,
    [datasetId, anyOf(lexemes), lexemes],
  )) as unknown as { rows: { lexeme: string; df: number }[] };
  for (const { lexeme, df } of rows) idf.set(lexeme, Math.log(1 + (total - df + 0.5) / (df + 0.5)));
  return idf;
}

/** The terms weighing most over all examples, at most `max`. */
function heaviestTerms(vectors: Map<string, number>[], max: number): string[] {
  const sums = new Map<string, number>();
  for (const vector of vectors) for (const [term, w] of vector) sums.set(term, (sums.get(term) ?? 0) + Math.abs(w));
  return [...sums]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .slice(0, max)
    .map(([term]) => term);
}

/** The `max` terms of largest |weight| (ties by term, so the choice does not depend on row order). */
function strongest(terms: [string, number][], max: number): [string, number][] {
  return terms.sort((a, b) => Math.abs(b[1]) - Math.abs(a[1]) || (a[0] < b[0] ? -1 : 1)).slice(0, max);
}

function mean(vectors: Map<string, number>[]): Map<string, number> {
  const sum = new Map<string, number>();
  for (const vector of vectors) for (const [term, w] of vector) sum.set(term, (sum.get(term) ?? 0) + w / vectors.length);
  return sum;
}

/** The query terms of a strategy, weights scaled by idf. */
function queryTerms(strategy: RecommendStrategy, positives: Map<string, number>[], negatives: Map<string, number>[], idf: Map<string, number>): QueryTerm[] {
  const scaled = (vector: Map<string, number>): [string, number][] => [...vector].filter(([t]) => idf.has(t)).map(([t, w]) => [t, w * idf.get(t)!]);
  if (strategy === 'average_vector') {
    const p = mean(positives);
    const q = new Map(p);
    if (negatives.length > 0) {
      const n = mean(negatives);
      for (const term of new Set([...p.keys(), ...n.keys()])) q.set(term, 2 * (p.get(term) ?? 0) - (n.get(term) ?? 0));
    }
    const terms = scaled(q);
    const chosen = [
      ...strongest(
        terms.filter(([, w]) => w > 0),
        MAX_QUERY_TERMS,
      ),
      ...strongest(
        terms.filter(([, w]) => w < 0),
        MAX_QUERY_TERMS,
      ),
    ];
    return chosen.map(([lexeme, weight]) => ({ example: 0, positive: true, lexeme, weight }));
  }
  const perExample = (vectors: Map<string, number>[], positive: boolean, first: number): QueryTerm[] =>
    vectors.flatMap((vector, i) =>
      strongest(scaled(vector), MAX_TERMS_PER_EXAMPLE).map(([lexeme, weight]) => ({ example: first + i, positive, lexeme, weight })),
    );
  return [...perExample(positives, true, 0), ...perExample(negatives, false, positives.length)];
}

export async function sparseRecommender(
  services: Services,
  dataset: DatasetRow,
  examples: Examples,
  strategy: RecommendStrategy,
  kind: 'bm25' | 'fulltext',
): Promise<Recommender> {
  const db = services.store.db;
  const weight = await termWeight(db, dataset, kind);
  const weights = await exampleWeights(db, dataset, weight, [...examples.positive, ...examples.negative]);
  const positives = examples.positive.map((id) => weights.get(id)!);
  const negatives = examples.negative.map((id) => weights.get(id)!);
  const idf = await inverseDocumentFrequencies(db, dataset.id, heaviestTerms([...positives, ...negatives], MAX_IDF_TERMS));
  const terms = queryTerms(strategy, positives, negatives, idf);
  const onlyNegatives = examples.positive.length === 0;
  // Candidates hold a term that raises the score: a positive one (with negatives alone, every chunk is one).
  const matching = [...new Set(terms.filter((t) => (onlyNegatives ? true : t.positive && t.weight > 0)).map((t) => t.lexeme))];
  return async (filter, n) => {
    if (n <= 0 || (!onlyNegatives && matching.length === 0)) return [];
    return scoreCandidates(db, dataset, { weight, terms, matching, strategy, onlyNegatives, withNegatives: negatives.length > 0 }, filter, n);
  };
}

interface Scoring {
  weight: string;
  terms: QueryTerm[];
  matching: string[];
  strategy: RecommendStrategy;
  onlyNegatives: boolean;
  withNegatives: boolean;
}

async function scoreCandidates(db: Knex, dataset: DatasetRow, scoring: Scoring, filter: T.ChunkFilter, n: number): Promise<Hit[]> {
  const { terms } = scoring;
  const filtered = applyChunkFilter(db('chunks').select('chunks.id').where('chunks.dataset_id', dataset.id), filter, 'chunks', 'filters');
  // Each candidate's similarity to each example (average_vector: to the one query vector).
  const perChunk = `
    with q as (select * from unnest(?::int[], ?::boolean[], ?::text[], ?::float8[]) as q(example, positive, lexeme, weight)),
    matches as (
      select c.id, q.example, q.positive, sum(q.weight * ${scoring.weight}) as s
        from chunks c cross join lateral unnest(c.bm25_terms) as u join q on q.lexeme = u.lexeme
       where c.dataset_id = ? and c.bm25_terms @@ to_tsquery('simple', ?) and c.id in (?)
       group by c.id, q.example, q.positive),
    per_chunk as (
      select id, max(s) filter (where positive) as pos, max(s) filter (where not positive) as neg from matches group by id)`;
  const bindings: Knex.RawBinding[] = [
    terms.map((t) => t.example),
    terms.map((t) => t.positive),
    terms.map((t) => t.lexeme),
    terms.map((t) => t.weight),
    dataset.id,
    anyOf(scoring.matching.length ? scoring.matching : terms.map((t) => t.lexeme)),
    filtered,
  ];
  let select: string;
  if (scoring.onlyNegatives) {
    // Every chunk passing the filter; those sharing no term with a negative score 0, the best there is.
    select = `select f.id, -(coalesce(p.neg, 0) * coalesce(p.neg, 0)) as score from (?) as f left join per_chunk p on p.id = f.id order by score desc, f.id limit ?`;
    bindings.push(filtered, n);
  } else if (scoring.strategy === 'best_score' && scoring.withNegatives) {
    select = `select id, case when pos > coalesce(neg, 0) then pos else -(coalesce(neg, 0) * coalesce(neg, 0)) end as score from per_chunk where pos is not null order by score desc, id limit ?`;
    bindings.push(n);
  } else {
    select = `select id, pos as score from per_chunk where pos is not null order by score desc, id limit ?`;
    bindings.push(n);
  }
  if (terms.length === 0) {
    // Negatives without terms: nothing to be unlike, every chunk scores 0.
    const ids: string[] = await filtered.clone().orderBy('chunks.id').limit(n).pluck('chunks.id');
    return ids.map((id) => ({ id, score: 0 }));
  }
  const { rows } = (await db.raw(`${perChunk} ${select}`, bindings)) as unknown as { rows: { id: string; score: number }[] };
  return rows.map((r) => ({ id: r.id, score: Number(r.score) }));
}
