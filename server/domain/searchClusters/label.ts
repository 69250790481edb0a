// A cluster's label: the words that set its queries apart from the other clusters' (a class-based
// TF-IDF). A word counts by the searches of the cluster's most representative queries (those
// nearest its centroid) that hold it, times how few clusters hold it at all; a word of few of
// those searches is left out. Words are compared
// by their stems, as the search index stems them (Snowball English), and shown as most often
// written. No I/O here.
import { stem } from 'porter2';
import { eng as STOP_WORDS_LIST } from 'stopword';

/** Words in a label. */
export const LABEL_WORDS = 3;
/** The queries nearest a cluster's centroid that its label is made from. */
export const LABEL_QUERIES = 25;
/** A word in fewer of those queries' searches than this share tells little of the topic: left out. */
export const MIN_SHARE = 0.2;

const STOP_WORDS = new Set(STOP_WORDS_LIST);
const WORD = /[\p{L}\p{N}]+/gu;

export interface LabelQuery {
  text: string;
  /** How many searches asked it. */
  searches: number;
  /** From its vector to the cluster's centroid. */
  distance: number;
}

interface Term {
  stem: string;
  word: string;
}

/** The meaningful words of a query, each once: lowercase, accents folded, stop words and single letters left out. */
export function queryTerms(text: string): Term[] {
  const seen = new Map<string, Term>();
  const words = text.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase().match(WORD) ?? [];
  for (const word of words) {
    if (word.length < 2 || STOP_WORDS.has(word)) continue;
    const key = stemOf(word);
    if (!seen.has(key)) seen.set(key, { stem: key, word });
  }
  return [...seen.values()];
}

function stemOf(word: string): string {
  try {
    return stem(word);
  } catch {
    return word;
  }
}

/** One label per cluster, in the clusters' order; a cluster whose queries hold no word is labelled by its nearest query. */
export function clusterLabels(clusters: LabelQuery[][]): string[] {
  const weighted = clusters.map((queries) => termCounts(representative(queries)));
  const clustersWith = new Map<string, number>();
  for (const counts of weighted) for (const key of counts.keys()) clustersWith.set(key, (clustersWith.get(key) ?? 0) + 1);
  return weighted.map((counts, i) => {
    const searches = representative(clusters[i]).reduce((sum, q) => sum + q.searches, 0);
    const scored = [...counts.values()]
      .filter((term) => term.searches >= MIN_SHARE * searches)
      .map((term) => ({
        ...term,
        weight: term.searches * Math.log(1 + clusters.length / clustersWith.get(term.stem)!),
      }));
    // Heaviest first; ties by the word, so a label never depends on the order queries came in.
    scored.sort((a, b) => b.weight - a.weight || a.word.localeCompare(b.word));
    const words = scored.slice(0, LABEL_WORDS).map((term) => term.word);
    return words.length > 0 ? words.join(', ') : (representative(clusters[i])[0]?.text.trim() ?? '');
  });
}

function representative(queries: LabelQuery[]): LabelQuery[] {
  return [...queries].sort((a, b) => a.distance - b.distance || b.searches - a.searches || a.text.localeCompare(b.text)).slice(0, LABEL_QUERIES);
}

/** Per stem: the searches whose query holds it, and the way it is written most often. */
function termCounts(queries: LabelQuery[]): Map<string, { stem: string; word: string; searches: number }> {
  const counts = new Map<string, { stem: string; searches: number; forms: Map<string, number> }>();
  for (const query of queries) {
    for (const term of queryTerms(query.text)) {
      let count = counts.get(term.stem);
      if (!count) counts.set(term.stem, (count = { stem: term.stem, searches: 0, forms: new Map() }));
      count.searches += query.searches;
      count.forms.set(term.word, (count.forms.get(term.word) ?? 0) + query.searches);
    }
  }
  return new Map(
    [...counts].map(([key, count]) => {
      const [word] = [...count.forms].sort(([a, x], [b, y]) => y - x || a.length - b.length || a.localeCompare(b))[0];
      return [key, { stem: key, word, searches: count.searches }];
    }),
  );
}
