// A query's terms as PostgreSQL's English analysis (to_tsvector('english', …)) makes them, for
// queries of plain words: lower-cased, its stop words dropped, the rest stemmed by Snowball English.
// PostgreSQL stays the truth: a search that starts from these terms checks them against the
// database's own and starts again when they differ (bm25/index.ts), so a guess that is wrong only
// costs time.
import { stem } from 'porter2';

// PostgreSQL's English stop words (tsearch_data/english.stop).
const STOP_WORDS = new Set(
  (
    'i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she her hers herself it its itself ' +
    'they them their theirs themselves what which who whom this that these those am is are was were be been being have has had ' +
    'having do does did doing a an the and but if or because as until while of at by for with about against between into through ' +
    'during before after above below to from up down in out on off over under again further then once here there when where why how ' +
    'all any both each few more most other some such no nor not only own same so than too very s t can will just don should now'
  ).split(' '),
);

/** Letters between separators PostgreSQL's parser reads as blanks alone. */
const PLAIN = /^[A-Za-z\s,;!?()"']*$/;
const SEPARATORS = /[\s,;!?()"']+/;

/**
 * The query's distinct terms, sorted, as PostgreSQL would make them; null for a query holding
 * anything but ASCII letters and plain separators (digits, hyphens, dots and other scripts are
 * parsed in ways not followed here).
 */
export function englishTerms(query: string): string[] | null {
  if (!PLAIN.test(query)) return null;
  const terms = new Set<string>();
  for (const word of query.toLowerCase().split(SEPARATORS)) {
    if (word !== '' && !STOP_WORDS.has(word)) terms.add(stem(word));
  }
  return [...terms].sort();
}
