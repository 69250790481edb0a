// Conditions a query's own text puts on the chunks it may return, whatever the search type and the
// lexical engine: "quoted" phrases must appear and -negated words must not (use_quote_negated_terms),
// and typo correction may require the dataset's own non-English words.
//
// They are evaluated in PostgreSQL on each chunk's BM25 terms (its lexical text, stemmed, with
// positions), so "quoted words" match as a phrase, with stemming ("refunds" matches "refund"), and
// mean the same for semantic, full-text, hybrid and BM25 retrieval, on Postgres and Typesense alike.
import type { Knex } from 'knex';

export interface TermConditions {
  /** tsquery text (as `::tsquery` reads it) every returned chunk matches; null for none. */
  required: string | null;
  /** tsquery text no returned chunk matches; null for none. */
  excluded: string | null;
}

export const NO_CONDITIONS: TermConditions = { required: null, excluded: null };

export function hasTermConditions(conditions: TermConditions | null | undefined): conditions is TermConditions {
  return !!conditions && (conditions.required != null || conditions.excluded != null);
}

/**
 * Compiles the phrases (one word or several, matched in order) into tsqueries, with the stemming of
 * the chunks' terms. A phrase made only of stop words has no lexeme and sets no condition.
 */
export async function compileTermConditions(db: Knex, phrases: { required: string[]; excluded: string[] }): Promise<TermConditions> {
  if (phrases.required.length === 0 && phrases.excluded.length === 0) return NO_CONDITIONS;
  const { rows } = await db.raw<{ rows: { required: string; excluded: string }[] }>(
    `select (select string_agg('(' || q::text || ')', ' & ') from unnest(?::text[]) p, phraseto_tsquery('english', p) q where numnode(q) > 0) as required,
            (select string_agg('(' || q::text || ')', ' | ') from unnest(?::text[]) p, phraseto_tsquery('english', p) q where numnode(q) > 0) as excluded`,
    [phrases.required, phrases.excluded],
  );
  return { required: rows[0]?.required ?? null, excluded: rows[0]?.excluded ?? null };
}

/** Adds the conditions to a query over `chunks` (aliased `alias`). */
export function applyTermConditions(builder: Knex.QueryBuilder, conditions: TermConditions | null | undefined, alias = 'chunks'): Knex.QueryBuilder {
  if (!conditions) return builder;
  if (conditions.required != null) builder.whereRaw(`coalesce(??.bm25_terms @@ ?::tsquery, false)`, [alias, conditions.required]);
  if (conditions.excluded != null) builder.whereRaw(`not coalesce(??.bm25_terms @@ ?::tsquery, false)`, [alias, conditions.excluded]);
  return builder;
}

/** Both sets of conditions: everything either requires, nothing either excludes. */
export function combineTermConditions(a: TermConditions | null | undefined, b: TermConditions): TermConditions {
  const join = (x: string | null | undefined, y: string | null, operator: '&' | '|') => (x == null ? y : y == null ? x : `(${x}) ${operator} (${y})`);
  return { required: join(a?.required, b.required, '&'), excluded: join(a?.excluded, b.excluded, '|') };
}
