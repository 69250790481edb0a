// Full-text retrieval: BM25 (bm25/, exact, over the in-memory index) over the query's words and the
// dataset's words the lexical engine matches them to, so both engines rank the same way and only
// differ in what a word matches:
//
// - every word of the query ranks (stemmed, stop words dropped, idf over the whole dataset), whether
//   or not a chunk holds the others: a plain query matches chunks holding any of its words;
// - "quoted phrases" must appear in every result and -words must not (checked on the chunks' stemmed
//   terms, as `use_quote_negated_terms` checks them); the phrases' words rank too;
// - the lexical engine is asked only about the words the dataset does not hold (the first 16), and
//   about the last word when it is being typed (`prefix`): it answers the dataset's words they
//   match, which rank beside them. PostgreSQL completes the word being typed from the dataset's
//   vocabulary; Typesense also matches near spellings (its typo tolerance).
//
// So `total` is exact on both engines, and a fulltext search costs a BM25 search (started before the
// vocabulary answers; a second when the engine widens the query) and, at most, one question to the
// engine.
import type { Services } from '../../services.js';
import { combineTermConditions, compileTermConditions } from '../query/conditions.js';
import { knownWords } from '../query/typos/vocabulary.js';
import { surfaceWords } from '../query/words.js';
import type { Hit, RetrievalRequest, RetrievalResult } from '../types.js';
import { bm25Search, bm25Top, countBm25 } from './bm25/index.js';

/** The most of the dataset's words one query word is widened to (as Typesense's `max_candidates`). */
export const MATCHED_WORDS = 8;
/** The most query words the engine is asked about: a long query of unknown words asks no more. */
export const MOST_WORDS_ASKED = 16;

/** A query as full-text reads it. */
export interface FulltextQuery {
  /** The words that rank: every word not negated, those of phrases included. */
  words: string[];
  /** "Quoted phrases" every result holds. */
  phrases: string[];
  /** -words and -"phrases" no result holds. */
  negated: string[];
}

/** Splits a query into its ranking words, its required phrases and its negated words. */
export function parseFulltext(query: string): FulltextQuery {
  const parsed: FulltextQuery = { words: [], phrases: [], negated: [] };
  for (const [token, minus, phrase] of query.matchAll(/(-?)"([^"]*)"?|\S+/g)) {
    if (phrase !== undefined) {
      if (!phrase.trim()) continue;
      (minus ? parsed.negated : parsed.phrases).push(phrase);
      if (!minus) parsed.words.push(...phrase.split(/\s+/).filter(Boolean));
    } else if (/^-./.test(token)) parsed.negated.push(token.slice(1));
    else parsed.words.push(token);
  }
  return parsed;
}

/**
 * Whether prefix matching applies: the query ends in a word being typed (not a closed "phrase", not
 * a -negated word, whose prefix would exclude every word it begins).
 */
export function endsInPrefix(query: string): boolean {
  const trimmed = query.trimEnd();
  return /[\p{L}\p{N}]$/u.test(trimmed) && !/(^|\s)-[\p{L}\p{N}_']*$/u.test(trimmed);
}

/** The last word, when it is being typed (prefix search): the engine completes it. */
function typedWord(request: RetrievalRequest, words: string[]): string | undefined {
  return request.prefix && endsInPrefix(request.query) ? surfaceWords(words[words.length - 1] ?? '').at(-1) : undefined;
}

/** The query words to ask the engine about: those the dataset does not hold, and the word being typed. */
async function wordsToMatch(
  services: Services,
  request: RetrievalRequest,
  words: string[],
  typed: string | undefined,
): Promise<{ word: string; prefix: boolean }[]> {
  const surface = [...new Set(words.flatMap((w) => surfaceWords(w)))];
  if (surface.length === 0) return [];
  const held = await knownWords(services.store.db, request.dataset.id, surface);
  const asked = surface.filter((word) => word !== typed && !held.has(word)).slice(0, typed ? MOST_WORDS_ASKED - 1 : MOST_WORDS_ASKED);
  return [...asked.map((word) => ({ word, prefix: false })), ...(typed ? [{ word: typed, prefix: true }] : [])];
}

/**
 * `run` on the request as the BM25 search it is: the ranking words and the dataset's words the
 * engine matches them to as its query, the phrases and -words as conditions.
 *
 * Most queries hold only words the dataset holds, and the engine is then not asked: so `run` starts
 * on the query's own words while the vocabulary is looked up, and runs again only if the engine
 * widens the query. A word being typed is always asked about, so prefix searches wait.
 */
async function asBm25<T>(services: Services, request: RetrievalRequest, run: (request: RetrievalRequest) => Promise<T>): Promise<T> {
  const parsed = parseFulltext(request.query);
  const typed = typedWord(request, parsed.words);
  const conditions = compileTermConditions(services.store.db, { required: parsed.phrases, excluded: parsed.negated });
  const asking = wordsToMatch(services, request, parsed.words, typed);
  const runWith = async (matched: string[]) =>
    run({ ...request, query: [...parsed.words, ...matched].join(' '), conditions: combineTermConditions(request.conditions, await conditions) });
  const guess = typed ? null : runWith([]);
  // Awaited later, or never when the engine's words replace the guess: not left unhandled meanwhile.
  conditions.catch(() => undefined);
  guess?.catch(() => undefined);
  const asked = await asking;
  const matched = asked.length ? (await services.lexical.matchedWords({ datasetId: request.dataset.id, words: asked, limit: MATCHED_WORDS })).flat() : [];
  return matched.length === 0 && guess ? guess : runWith(matched);
}

/** A page of full-text hits, and the number of matches when asked. */
export async function fulltextSearch(services: Services, request: RetrievalRequest): Promise<RetrievalResult> {
  return asBm25(services, request, (bm25) => bm25Search(services, bm25));
}

/** The `n` best full-text hits, best first (for fusion). */
export async function fulltextTop(services: Services, request: RetrievalRequest, n: number): Promise<Hit[]> {
  return asBm25(services, request, (bm25) => bm25Top(services, bm25, n));
}

export async function countFulltext(services: Services, request: RetrievalRequest): Promise<number> {
  return asBm25(services, request, (bm25) => countBm25(services, bm25));
}
