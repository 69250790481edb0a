// A query text as the engines get it. With `use_quote_negated_terms`, "quoted phrases" must appear in
// every result and -words (or -"phrases") must not: they become conditions (conditions.ts), and the
// engines search the remaining words, the quoted ones included (so they still count for ranking) and
// the negated ones left out. Without it, quotes and minus signs are ordinary characters. With
// `remove_stop_words`, stop words leave the searched text (not the conditions).
import { plainQuery, withoutStopWords } from '../request.js';

export interface ParsedQuery {
  /** What the engines search and the embedder embeds. */
  text: string;
  /** Phrases every result contains. */
  required: string[];
  /** Phrases (often one word) no result contains. */
  excluded: string[];
}

export interface ParseOptions {
  quoteNegated: boolean;
  removeStopWords: boolean;
}

/** A -"phrase", a "phrase", or any other run of non-space characters. */
const TOKEN = /(-?)"([^"]*)"|\S+/g;

export function parseQuery(query: string, options: ParseOptions): ParsedQuery {
  const parsed = options.quoteNegated ? withConditions(query) : { text: plainQuery(query), required: [], excluded: [] };
  return options.removeStopWords ? { ...parsed, text: withoutStopWords(parsed.text) } : parsed;
}

function withConditions(query: string): ParsedQuery {
  const kept: string[] = [];
  const required: string[] = [];
  const excluded: string[] = [];
  for (const [token, minus, phrase] of query.matchAll(TOKEN)) {
    if (phrase !== undefined) {
      const words = clean(phrase);
      if (!words) continue;
      if (minus) excluded.push(words);
      else {
        required.push(words);
        kept.push(words);
      }
    } else if (token.length > 1 && token.startsWith('-')) {
      const word = clean(token.slice(1));
      if (word) excluded.push(word);
    } else {
      const word = clean(token);
      if (word) kept.push(word);
    }
  }
  return { text: kept.join(' '), required, excluded };
}

/** Stray quote marks (an unclosed quote) are ordinary characters: dropped. */
function clean(text: string): string {
  return text.replace(/"/g, ' ').replace(/\s+/g, ' ').trim();
}
