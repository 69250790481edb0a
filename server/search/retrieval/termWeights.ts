// How much each query term counts in full-text ranking: its inverse document frequency (a word few
// chunks hold says more about a chunk than one most chunks hold), times a fulltext boost's factor.
//
// Postgres ranks with ts_rank, which weighs a term by the label (A, B, C or D) its positions carry,
// with one weight per label: so the query's terms are put in at most four classes of similar weight
// (exactly their own weight while the query has at most four terms), each class under one label.

/** BM25's inverse document frequency: ln(1 + (N − df + 0.5) / (df + 0.5)), always above 0. */
export function idf(documents: number, frequency: number): number {
  const df = Math.min(Math.max(frequency, 0), documents);
  return Math.log(1 + (documents - df + 0.5) / (df + 0.5));
}

/** A term of a tsquery: a lexeme, matched as a prefix (`'refun':*`) or as a whole. */
export interface QueryTerm {
  lexeme: string;
  prefix: boolean;
}

/** One quoted lexeme of a tsquery's text form, with its optional prefix mark and weight letters. */
const TERM = /'((?:[^'\\]|''|\\.)*)'(:\*?[A-D]*)?/g;

/**
 * The terms of a tsquery, from its text form (`'two' <-> 'year' | 'refun':*`); duplicates once. Pass
 * the text of `querytree(q)` to leave out what the query negates.
 */
export function tsqueryTerms(text: string): QueryTerm[] {
  const seen = new Map<string, QueryTerm>();
  for (const [, quoted, mark] of text.matchAll(TERM)) {
    const lexeme = quoted.replace(/''/g, "'").replace(/\\(.)/g, '$1');
    const prefix = !!mark?.includes('*');
    seen.set(`${prefix ? '*' : ''}${lexeme}`, { lexeme, prefix });
  }
  return [...seen.values()];
}

/** One lexeme of a tsvector's text form, with its positions (`'refund':3A,17A`). */
const VECTOR_ENTRY = /'((?:[^'\\]|''|\\.)*)'(?::([0-9A-D,]+))?/g;

/** How many times each lexeme of a tsvector's text form occurs (1 for a lexeme without positions). */
export function termFrequencies(text: string): Map<string, number> {
  const frequencies = new Map<string, number>();
  for (const [, quoted, positions] of text.matchAll(VECTOR_ENTRY)) {
    frequencies.set(quoted.replace(/''/g, "'").replace(/\\(.)/g, '$1'), positions ? positions.split(',').length : 1);
  }
  return frequencies;
}

/** A term as the text of a one-term tsquery (quotes doubled, backslashes escaped, `:*` for a prefix). */
export function lexemeQuery({ lexeme, prefix }: QueryTerm): string {
  return `'${lexeme.replace(/\\/g, '\\\\').replace(/'/g, "''")}'${prefix ? ':*' : ''}`;
}

/** Labels in ts_rank's order of its weights array: {D, C, B, A}. */
const LABELS = ['A', 'B', 'C', 'D'] as const;
export type Label = (typeof LABELS)[number];

export interface RankWeights {
  /** ts_rank's weights argument, {D, C, B, A}, each in [0, 1]: the classes' weights over the largest. */
  weights: [number, number, number, number];
  /** The largest class weight: ts_rank × scale is the idf-weighted rank. */
  scale: number;
  /** The lexemes to label A, B and C (setweight); D is every stored position's label already. */
  labelled: { label: 'A' | 'B' | 'C'; lexemes: string[] }[];
}

/**
 * The ts_rank weights for terms of the given weights. A prefix term matches lexemes it cannot name
 * for setweight, so it keeps label D, in a class of its own (at most one term of a tsquery is a
 * prefix: the last word); the other terms take the remaining labels, in classes of similar weight.
 */
export function rankWeights(terms: (QueryTerm & { weight: number })[]): RankWeights {
  const prefixed = terms.filter((t) => t.prefix);
  const whole = terms.filter((t) => !t.prefix);
  // No more classes than distinct weights: each label but D costs a setweight over every match.
  const classes = similarGroups(whole, Math.min(prefixed.length ? 3 : 4, new Set(whole.map((t) => t.weight)).size));
  // Heaviest first, A, B, C; without a prefix term, the lightest class takes D and needs no setweight.
  const labels: Label[] = prefixed.length ? ['A', 'B', 'C'] : [...LABELS.slice(0, classes.length - 1), 'D'];
  const weightOf = new Map<Label, number>();
  const labelled: RankWeights['labelled'] = [];
  classes.forEach((group, i) => {
    const label = labels[i];
    weightOf.set(label, mean(group.map((t) => t.weight)));
    if (label !== 'D') labelled.push({ label, lexemes: group.map((t) => t.lexeme) });
  });
  if (prefixed.length) weightOf.set('D', Math.max(...prefixed.map((t) => t.weight)));
  const scale = Math.max(0, ...weightOf.values());
  const relative = (label: Label) => (scale > 0 ? (weightOf.get(label) ?? 0) / scale : 0);
  return { weights: [relative('D'), relative('C'), relative('B'), relative('A')], scale, labelled };
}

const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;

/**
 * The terms in at most `k` groups of consecutive weights (heaviest first) with the least squared
 * distance from their group's mean: the optimal one-dimensional k-means, by dynamic programming.
 */
function similarGroups<T extends { weight: number }>(terms: T[], k: number): T[][] {
  const sorted = [...terms].sort((a, b) => b.weight - a.weight);
  const n = sorted.length;
  if (n <= k) return sorted.map((t) => [t]);
  // cost(i, j): squared error of sorted[i..j) around its mean, from prefix sums.
  const sum = [0];
  const squares = [0];
  for (const t of sorted) {
    sum.push(sum[sum.length - 1] + t.weight);
    squares.push(squares[squares.length - 1] + t.weight * t.weight);
  }
  const cost = (i: number, j: number) => squares[j] - squares[i] - (sum[j] - sum[i]) ** 2 / (j - i);
  // best[g][j]: the least cost of the first j terms in g groups; start[g][j]: where its last group starts.
  const best = Array.from({ length: k + 1 }, () => new Array<number>(n + 1).fill(Infinity));
  const start = Array.from({ length: k + 1 }, () => new Array<number>(n + 1).fill(0));
  best[0][0] = 0;
  for (let g = 1; g <= k; g++) {
    for (let j = g; j <= n; j++) {
      for (let i = g - 1; i < j; i++) {
        const total = best[g - 1][i] + cost(i, j);
        if (total < best[g][j]) {
          best[g][j] = total;
          start[g][j] = i;
        }
      }
    }
  }
  const groups: T[][] = [];
  for (let g = k, j = n; g >= 1; j = start[g][j], g--) groups.unshift(sorted.slice(start[g][j], j));
  return groups.filter((group) => group.length > 0);
}

/** BM25's term-frequency saturation and length normalization (the usual values). */
export const BM25_K1 = 1.2;
export const BM25_B = 0.75;

/** A term to score, and how many of the dataset's documents hold it, as far as is known. */
export interface Bm25Term {
  lexeme: string;
  /** Matched as a prefix: counts once in a document it begins a word of. */
  prefix: boolean;
  found: number;
}

export interface Bm25Document {
  id: string;
  /** Its length in terms. */
  length: number;
  /** Occurrences of each whole term it holds. */
  tf: Map<string, number>;
  /** The prefix terms it holds a word of. */
  prefixes: Set<string>;
}

/**
 * BM25 of each document among `documents` (a candidate set), over a dataset of `total` documents:
 * Σ w(t) · idf(t) · tf·(k1 + 1) / (tf + k1·(1 − b + b·len/avg)), the average length taken over the
 * candidates, a term's document count at least the candidates holding it, w(t) the boost's factor
 * for boosted terms, else 1.
 */
export function bm25(
  documents: Bm25Document[],
  terms: Bm25Term[],
  total: number,
  boost?: { lexemes: string[]; factor: number },
): { id: string; score: number }[] {
  if (documents.length === 0) return [];
  const average = Math.max(1, documents.reduce((sum, d) => sum + d.length, 0) / documents.length);
  const holds = (d: Bm25Document, t: Bm25Term) => (t.prefix ? d.prefixes.has(t.lexeme) : d.tf.has(t.lexeme));
  const weights = terms.map((t) => {
    const held = documents.filter((d) => holds(d, t)).length;
    const factor = boost?.lexemes.includes(t.lexeme) ? boost.factor : 1;
    return idf(Math.max(total, held), Math.max(t.found, held)) * factor;
  });
  return documents.map((d) => {
    let score = 0;
    terms.forEach((t, i) => {
      const tf = t.prefix ? (d.prefixes.has(t.lexeme) ? 1 : 0) : (d.tf.get(t.lexeme) ?? 0);
      if (tf > 0) score += (weights[i] * tf * (BM25_K1 + 1)) / (tf + BM25_K1 * (1 - BM25_B + (BM25_B * d.length) / average));
    });
    return { id: d.id, score };
  });
}
