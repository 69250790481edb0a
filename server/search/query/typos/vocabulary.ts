// Look-ups in a dataset's vocabulary (`dataset_words`, kept by the chunk triggers of migration
// 009_vocabulary): which query words the dataset holds, which of its words are near a misspelt one,
// and which begin with a word being typed.
import type { Knex } from 'knex';

export interface VocabularyWord {
  word: string;
  /** How many chunks of the dataset hold it. */
  chunks: number;
}

/**
 * Trigram similarity a candidate needs. One edit changes at most three of a word's trigrams (a swap of
 * two letters four), so a low bar keeps the words one or two edits away; the exact edit distance is
 * computed on the candidates.
 */
const SIMILARITY_THRESHOLD = 0.15;
/** Candidates kept per misspelt word, the most similar first. */
const CANDIDATES = 100;

/**
 * The words (lowercase) that some chunk of the dataset holds. Every full-text search with typo
 * tolerance asks, so it is one named statement (an array parameter, whatever the number of words),
 * parsed and planned once per connection.
 */
export async function knownWords(db: Knex, datasetId: string, words: string[]): Promise<Set<string>> {
  if (words.length === 0) return new Set();
  const { rows } = await db
    .raw<{ rows: { word: string }[] }>('select word from dataset_words where dataset_id = ? and chunks > 0 and word = any(?::text[])', [datasetId, words])
    .options({ name: 'dataset_known_words' });
  return new Set(rows.map((row) => row.word));
}

/**
 * For each word, the dataset's words that may be it misspelt: the same first letter, at most
 * `lengthSlack` letters longer or shorter, and sharing enough trigrams (the trigram index finds them).
 */
export async function nearWords(db: Knex, datasetId: string, words: string[], lengthSlack: number): Promise<Map<string, VocabularyWord[]>> {
  const near = new Map<string, VocabularyWord[]>(words.map((w) => [w, []]));
  if (words.length === 0) return near;
  const rows = await db.transaction(async (trx) => {
    // `%` compares with this threshold; set for this transaction only.
    await trx.raw(`select set_config('pg_trgm.similarity_threshold', ?, true)`, [String(SIMILARITY_THRESHOLD)]);
    const { rows } = await trx.raw<{ rows: { query: string; word: string; chunks: number }[] }>(
      `select q.word as query, v.word, v.chunks
       from unnest(?::text[]) as q(word)
       cross join lateral (
         select d.word, d.chunks from dataset_words d
         where d.dataset_id = ? and d.chunks > 0 and d.word % q.word
           and left(d.word, 1) = left(q.word, 1)
           and char_length(d.word) between char_length(q.word) - ? and char_length(q.word) + ?
         order by similarity(d.word, q.word) desc, d.chunks desc, d.word
         limit ?) v`,
      [words, datasetId, lengthSlack, lengthSlack, CANDIDATES],
    );
    return rows;
  });
  for (const row of rows) near.get(row.query)?.push({ word: row.word, chunks: Number(row.chunks) });
  return near;
}

/** A LIKE pattern matching the words that begin with `prefix`. */
const startsWith = (prefix: string) => `${prefix.replace(/[\\%_]/g, '\\$&')}%`;

/** For each prefix, up to `limit` of the dataset's words that begin with it (not itself), the words more chunks hold first. */
export async function completions(db: Knex, datasetId: string, prefixes: string[], limit: number): Promise<Map<string, string[]>> {
  const found = new Map<string, string[]>(prefixes.map((p) => [p, []]));
  if (prefixes.length === 0 || limit <= 0) return found;
  const { rows } = await db.raw<{ rows: { prefix: string; word: string }[] }>(
    `select p.prefix, v.word
       from unnest(?::text[], ?::text[]) as p(prefix, pattern)
       cross join lateral (select word from dataset_words
                            where dataset_id = ? and chunks > 0 and word like p.pattern and word <> p.prefix
                            order by chunks desc, word limit ?) as v`,
    [prefixes, prefixes.map(startsWith), datasetId, limit],
  );
  for (const row of rows) found.get(row.prefix)?.push(row.word);
  return found;
}
