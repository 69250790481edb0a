// Typo correction (`typo_options`): misspelt query words are replaced by words of the dataset's own
// vocabulary, and the search runs with the corrected text. The same for every search type and
// lexical engine (Typesense's own typo tolerance may still widen its matching).
//
// A query word (a run of letters, with punctuation around it at most) is left alone when it is in
// `disable_on_word`, when some chunk of the dataset holds it, when it is an English word, or when its
// length is in neither typo range. Otherwise it may be corrected with up to one edit (a letter
// added, dropped, changed, or two neighbours swapped) when its length is in `one_typo_word_range`
// (default 5 to 8 letters), two when in `two_typo_word_range` (default 8 letters or more; the
// two-typo range wins where they overlap). Among the dataset's words within that many edits that
// start with the same letter (first letters are rarely mistyped, and it keeps corrections
// plausible), the fewest edits win, then the word more chunks hold, then alphabetical order. The correction keeps the word's capitals and the punctuation around it. Words of a
// "quoted phrase" are never corrected when quotes are honoured (`use_quote_negated_terms`).
//
// `prioritize_domain_specifc_words` (default true): a query word the dataset holds that is not an
// English word (a product name, a code word) is required in every result.
import dl from 'damerau-levenshtein';
import type * as T from '../../../../sdk/src/generated/types.gen.js';
import { badRequest } from '../../../errors.js';
import type { Knex } from 'knex';
import { isWord } from '../words.js';
import { englishWordTest } from './english.js';
import { knownWords, nearWords, type VocabularyWord } from './vocabulary.js';

export interface Correction {
  /** The query with its misspelt words replaced (the same text when none was). */
  text: string;
  corrected: boolean;
  /** Domain-specific query words every result must hold. */
  required: string[];
}

interface Range {
  min: number;
  max: number;
}

const DEFAULT_ONE_TYPO: Range = { min: 5, max: 8 };
const DEFAULT_TWO_TYPOS: Range = { min: 8, max: Infinity };
const LENGTH_SLACK = 2;

/** A whitespace-separated token: punctuation, letters, punctuation. */
const TOKEN = /^(\p{P}*)([\p{L}\p{M}]+)(\p{P}*)$/u;

export function typoRanges(options: T.TypoOptions, path = 'typo_options'): { one: Range; two: Range } {
  return {
    one: range(options.one_typo_word_range, DEFAULT_ONE_TYPO, `${path}.one_typo_word_range`),
    two: range(options.two_typo_word_range, DEFAULT_TWO_TYPOS, `${path}.two_typo_word_range`),
  };
}

function range(given: T.TypoRange | null | undefined, fallback: Range, path: string): Range {
  if (!given) return fallback;
  const max = given.max ?? Infinity;
  if (max < given.min) throw badRequest(`${path}: max (${given.max}) is below min (${given.min})`);
  return { min: given.min, max };
}

/** How many edits a word of this length may be corrected by. */
export function allowedTypos(length: number, ranges: { one: Range; two: Range }): 0 | 1 | 2 {
  const within = (r: Range) => length >= r.min && length <= r.max;
  return within(ranges.two) ? 2 : within(ranges.one) ? 1 : 0;
}

/** The best correction of `word` among the candidates, or null. */
export function bestCorrection(word: string, candidates: VocabularyWord[], maxTypos: number): string | null {
  let best: { word: string; edits: number; chunks: number } | null = null;
  for (const candidate of candidates) {
    if (!plausible(word, candidate.word)) continue;
    const edits = dl(word, candidate.word).steps;
    if (edits === 0 || edits > maxTypos) continue;
    const better =
      !best ||
      edits < best.edits ||
      (edits === best.edits && (candidate.chunks > best.chunks || (candidate.chunks === best.chunks && candidate.word < best.word)));
    if (better) best = { word: candidate.word, edits, chunks: candidate.chunks };
  }
  return best?.word ?? null;
}

function plausible(word: string, candidate: string): boolean {
  return [...word][0] === [...candidate][0] && Math.abs([...word].length - [...candidate].length) <= LENGTH_SLACK;
}

interface Token {
  start: number;
  end: number;
  before: string;
  word: string;
  after: string;
}

/** The query's correctable tokens, with their places (tokens inside honoured quotes left out). */
function tokensOf(text: string, quoteNegated: boolean): Token[] {
  const quoted = quoteNegated ? [...text.matchAll(/"[^"]*"/g)].map((m) => [m.index, m.index + m[0].length]) : [];
  const tokens: Token[] = [];
  for (const match of text.matchAll(/\S+/g)) {
    const start = match.index;
    if (quoted.some(([from, to]) => start >= from && start < to)) continue;
    const parts = TOKEN.exec(match[0]);
    if (!parts || !isWord(parts[2])) continue;
    tokens.push({ start, end: start + match[0].length, before: parts[1], word: parts[2], after: parts[3] });
  }
  return tokens;
}

/** The replacement with the original's capitals: WORD, Word or word. */
function withCase(original: string, replacement: string): string {
  if (original.length > 1 && original === original.toUpperCase() && original !== original.toLowerCase()) return replacement.toUpperCase();
  const first = original[0];
  if (first !== first.toLowerCase()) return replacement[0].toUpperCase() + replacement.slice(1);
  return replacement;
}

export async function correctTypos(db: Knex, datasetId: string, text: string, options: T.TypoOptions, quoteNegated: boolean): Promise<Correction> {
  const unchanged: Correction = { text, corrected: false, required: [] };
  if (!options.correct_typos) return unchanged;
  const ranges = typoRanges(options);
  const disabled = new Set((options.disable_on_word ?? []).map((w) => w.toLowerCase()));
  const tokens = tokensOf(text, quoteNegated);
  const words = [...new Set(tokens.map((t) => t.word.toLowerCase()))].filter((w) => !disabled.has(w));
  if (words.length === 0) return unchanged;

  const [known, isEnglish] = await Promise.all([knownWords(db, datasetId, words), englishWordTest()]);
  const required = options.prioritize_domain_specifc_words === false ? [] : words.filter((w) => known.has(w) && !isEnglish(w));
  const misspelt = words.filter((w) => !known.has(w) && !isEnglish(w) && allowedTypos([...w].length, ranges) > 0);
  const near = await nearWords(db, datasetId, misspelt, LENGTH_SLACK);
  const corrections = new Map<string, string>();
  for (const word of misspelt) {
    const correction = bestCorrection(word, near.get(word) ?? [], allowedTypos([...word].length, ranges));
    if (correction) corrections.set(word, correction);
  }
  if (corrections.size === 0) return { ...unchanged, required };

  let corrected = '';
  let at = 0;
  for (const token of tokens) {
    const correction = corrections.get(token.word.toLowerCase());
    if (!correction) continue;
    corrected += text.slice(at, token.start) + token.before + withCase(token.word, correction) + token.after;
    at = token.end;
  }
  return { text: corrected + text.slice(at), corrected: true, required };
}
