// `scoring_options.fulltext_boost` for a query: the query's terms that are also terms of the phrase
// (stemmed as the chunks' terms are) weigh `boost_factor` times as much in keyword scoring. Phrase
// terms the query does not have add nothing (as the reference does): the boost reorders what the
// query finds. How each search type weighs the terms:
//
//   bm25      each boosted term's part of the sum is multiplied by the factor (per-term weights)
//   fulltext  the same: full-text ranks by BM25 (retrieval/fulltext.ts)
//   hybrid    its keyword list as above; the fused ranks follow.
import type { Knex } from 'knex';
import type * as T from '../../../sdk/src/generated/types.gen.js';
import { badRequest } from '../../errors.js';

export interface TermBoost {
  /** The boosted terms, as stemmed lexemes (chunk terms and Postgres full-text). */
  lexemes: string[];
  /** The query's words that give those terms, as typed (engines that match words, not stems). */
  words: string[];
  factor: number;
}

export function checkedFulltextBoost(boost: T.FullTextBoost | null | undefined): T.FullTextBoost | null {
  if (!boost) return null;
  if (!Number.isFinite(boost.boost_factor) || boost.boost_factor < 0) {
    throw badRequest(`scoring_options.fulltext_boost.boost_factor: must be a finite number, at least 0, got ${boost.boost_factor}`);
  }
  if (boost.phrase.trim() === '') throw badRequest('scoring_options.fulltext_boost.phrase: must not be empty');
  return boost;
}

/** The boost for one query text, or undefined when it changes nothing. */
export async function termBoost(db: Knex, query: string, boost: T.FullTextBoost | null): Promise<TermBoost | undefined> {
  if (!boost || boost.boost_factor === 1) return undefined;
  const { rows } = await db.raw<{ rows: { word: string; lexeme: string }[] }>(
    `select distinct w.word, l.lexeme
     from regexp_split_to_table(?, '\\s+') as w(word), unnest(tsvector_to_array(to_tsvector('english', w.word))) as l(lexeme)
     where l.lexeme = any(tsvector_to_array(to_tsvector('english', ?)))`,
    [query, boost.phrase],
  );
  if (rows.length === 0) return undefined;
  return { lexemes: [...new Set(rows.map((r) => r.lexeme))].sort(), words: [...new Set(rows.map((r) => r.word))].sort(), factor: boost.boost_factor };
}
