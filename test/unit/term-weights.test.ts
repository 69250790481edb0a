// The pieces of idf-aware full-text ranking that need no engine: idf, the terms of a tsquery, the
// ts_rank weight classes (Postgres), BM25 over a candidate set and the words a query ranks by
// (Typesense).
import { describe, expect, it } from 'vitest';
import { bm25, idf, lexemeQuery, rankWeights, termFrequencies, tsqueryTerms, type Bm25Document } from '../../server/search/retrieval/termWeights.js';
import { queryWords } from '../../server/search/retrieval/typesenseRanking.js';

describe('idf', () => {
  it('falls as a term is in more documents, and stays above 0 for a term in all of them', () => {
    expect(idf(1000, 1)).toBeGreaterThan(idf(1000, 10));
    expect(idf(1000, 10)).toBeGreaterThan(idf(1000, 500));
    expect(idf(1000, 1000)).toBeGreaterThan(0);
    expect(idf(1000, 1)).toBeCloseTo(Math.log(1 + 999.5 / 1.5), 12);
    // Counts out of range (a count taken a moment apart from the total) are held to [0, N].
    expect(idf(10, 20)).toBe(idf(10, 10));
    expect(idf(10, -1)).toBe(idf(10, 0));
  });
});

describe('tsqueryTerms', () => {
  it('reads each quoted lexeme once, with its prefix mark, whatever the operators', () => {
    expect(tsqueryTerms("'two' <-> 'year' & 'warranti' | 'refun':*")).toEqual([
      { lexeme: 'two', prefix: false },
      { lexeme: 'year', prefix: false },
      { lexeme: 'warranti', prefix: false },
      { lexeme: 'refun', prefix: true },
    ]);
    expect(tsqueryTerms("'titl' | 'titl' | 'titl':*")).toEqual([
      { lexeme: 'titl', prefix: false },
      { lexeme: 'titl', prefix: true },
    ]);
  });

  it('undoes the quoting of quotes and backslashes, and reads weight marks', () => {
    expect(tsqueryTerms("'o''neil' & 'a\\\\b':*AB & 'c':B")).toEqual([
      { lexeme: "o'neil", prefix: false },
      { lexeme: 'a\\b', prefix: true },
      { lexeme: 'c', prefix: false },
    ]);
    expect(tsqueryTerms('')).toEqual([]);
  });

  it('reads back the one-term tsqueries lexemeQuery writes', () => {
    for (const term of [
      { lexeme: "o'neil", prefix: false },
      { lexeme: 'a\\b', prefix: true },
      { lexeme: 'plain', prefix: false },
    ])
      expect(tsqueryTerms(lexemeQuery(term))).toEqual([term]);
    expect(lexemeQuery({ lexeme: "it's", prefix: true })).toBe("'it''s':*");
  });
});

describe('termFrequencies', () => {
  it("counts each lexeme's positions in a tsvector's text, 1 for one without positions", () => {
    expect(termFrequencies("'email':12A,40A 'o''neil':3 'a\\\\b':7A 'tabl'")).toEqual(
      new Map([
        ['email', 2],
        ["o'neil", 1],
        ['a\\b', 1],
        ['tabl', 1],
      ]),
    );
    expect(termFrequencies('')).toEqual(new Map());
  });
});

describe('rankWeights', () => {
  const term = (lexeme: string, weight: number, prefix = false) => ({ lexeme, weight, prefix });
  const weightOf = (w: ReturnType<typeof rankWeights>, lexeme: string) => {
    const label = w.labelled.find((l) => l.lexemes.includes(lexeme))?.label ?? 'D';
    return w.scale * w.weights[{ D: 0, C: 1, B: 2, A: 3 }[label]];
  };

  it('gives up to four terms their own weight, the heaviest under A, the lightest under D (no setweight)', () => {
    const w = rankWeights([term('rare', 6), term('common', 0.5), term('middle', 2)]);
    expect(w.scale).toBe(6);
    expect(w.labelled).toEqual([
      { label: 'A', lexemes: ['rare'] },
      { label: 'B', lexemes: ['middle'] },
    ]);
    for (const [lexeme, weight] of [
      ['rare', 6],
      ['middle', 2],
      ['common', 0.5],
    ] as const)
      expect(weightOf(w, lexeme)).toBeCloseTo(weight, 12);
    for (const x of w.weights) expect(x).toBeLessThanOrEqual(1);
  });

  it('puts more terms in four classes of similar weight', () => {
    const weights = [9, 8.8, 8.7, 5, 5.1, 2, 2.2, 0.3, 0.2, 0.25];
    const w = rankWeights(weights.map((x, i) => term(`t${i}`, x)));
    expect(w.labelled.map((l) => l.label)).toEqual(['A', 'B', 'C']);
    expect(w.labelled[0].lexemes.sort()).toEqual(['t0', 't1', 't2']);
    expect(w.labelled[1].lexemes.sort()).toEqual(['t3', 't4']);
    expect(w.labelled[2].lexemes.sort()).toEqual(['t5', 't6']);
    // Each term's class weight is close to its own.
    for (const [i, x] of weights.entries()) expect(Math.abs(weightOf(w, `t${i}`) - x)).toBeLessThan(0.2);
  });

  it('keeps a prefix term under D in a class of its own, and needs one class for equal weights', () => {
    const w = rankWeights([term('refun', 3, true), term('policy', 1), term('day', 1)]);
    expect(w.labelled).toEqual([{ label: 'A', lexemes: ['policy', 'day'] }]);
    expect(weightOf(w, 'refun')).toBeCloseTo(3, 12);
    expect(weightOf(w, 'policy')).toBeCloseTo(1, 12);
    // All weights 0 (a boost factor of 0): no division by zero.
    expect(rankWeights([term('a', 0)]).weights).toEqual([0, 0, 0, 0]);
  });
});

describe('bm25 over candidates', () => {
  const doc = (id: string, length: number, tf: Record<string, number>, prefixes: string[] = []): Bm25Document => ({
    id,
    length,
    tf: new Map(Object.entries(tf)),
    prefixes: new Set(prefixes),
  });
  const order = (scored: { id: string; score: number }[]) => [...scored].sort((a, b) => b.score - a.score).map((s) => s.id);

  it('ranks a rare term above a common one repeated', () => {
    const docs = [doc('rare', 10, { zeppelin: 1 }), doc('common', 10, { servic: 3 }), doc('other', 10, {})];
    const terms = [
      { lexeme: 'zeppelin', prefix: false, found: 1 },
      { lexeme: 'servic', prefix: false, found: 900 },
    ];
    expect(order(bm25(docs, terms, 1000))).toEqual(['rare', 'common', 'other']);
    expect(bm25(docs, terms, 1000).find((s) => s.id === 'other')!.score).toBe(0);
  });

  it('saturates repeats, favours the shorter of two chunks, and counts a prefix once', () => {
    const terms = [{ lexeme: 'tea', prefix: false, found: 10 }];
    const [one, two, four] = bm25([doc('1', 10, { tea: 1 }), doc('2', 10, { tea: 2 }), doc('4', 10, { tea: 4 })], terms, 100).map((s) => s.score);
    expect(two - one).toBeGreaterThan(four - two);
    const [short, long] = bm25([doc('short', 5, { tea: 1 }), doc('long', 50, { tea: 1 })], terms, 100).map((s) => s.score);
    expect(short).toBeGreaterThan(long);
    const prefix = bm25([doc('p', 10, {}, ['te']), doc('q', 10, {})], [{ lexeme: 'te', prefix: true, found: 10 }], 100);
    expect(prefix[0].score).toBeCloseTo(one, 12);
    expect(prefix[1].score).toBe(0);
  });

  it('takes a count at least the candidates holding the term, and multiplies boosted terms', () => {
    const docs = [doc('a', 10, { x: 1 }), doc('b', 10, { x: 1 })];
    // Counted in 0 documents (a count of another form of the word), yet two candidates hold it.
    expect(bm25(docs, [{ lexeme: 'x', prefix: false, found: 0 }], 100)[0].score).toBeCloseTo(
      bm25(docs, [{ lexeme: 'x', prefix: false, found: 2 }], 100)[0].score,
      12,
    );
    const plain = bm25(docs, [{ lexeme: 'x', prefix: false, found: 5 }], 100)[0].score;
    expect(bm25(docs, [{ lexeme: 'x', prefix: false, found: 5 }], 100, { lexemes: ['x'], factor: 3 })[0].score).toBeCloseTo(3 * plain, 12);
  });
});

describe('queryWords', () => {
  it('lists the distinct words Typesense reads, without -negated words or phrases', () => {
    expect(queryWords('Refund  policy, refund —')).toEqual(['refund', 'policy,']);
    expect(queryWords('"two year" warranty -television -"old model" two-factor')).toEqual(['two', 'year', 'warranty', 'two-factor']);
    expect(queryWords('"unclosed phrase')).toEqual(['unclosed', 'phrase']);
  });
});
