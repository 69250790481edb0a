// The in-memory index's page of results (`top`, which skips postings that cannot reach the page)
// and its scores of given chunks (`matchAmong`, a selective filter's) against scoring every posting
// (`best(match(…))`): the same chunks, order and scores, bit for bit, on a corpus with tied chunks,
// removed and re-added chunks, thresholds and boosted terms; the walk passing over the chunks a
// filter leaves out; and the one ranking that a filtered
// search's deeper rounds read while the index changes.
import { afterAll, describe, expect, it } from 'vitest';
import { DatasetIndex } from '../../server/search/retrieval/bm25/memory.js';
import type { Ranked } from '../../server/search/retrieval/bm25/topK.js';
import { lengthClass, shortestOfClass } from '../../server/search/retrieval/bm25/postingList.js';
import { roundsRanking } from '../../server/search/retrieval/bm25/memorySearch.js';
import { SPLIT, walkHelper } from '../../server/search/retrieval/bm25/walkHelpers.js';
import { sharedArray } from '../../server/search/sharedArrays.js';
import { prng } from '../support/prng.js';

const VOCABULARY = Array.from({ length: 60 }, (_, i) => `w${i}`);
const id = (n: number) => `00000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;

/** Words drawn with a skew (low numbers common), so lists differ in length and in what they can add. */
function chunk(random: () => number, n: number) {
  const tf = new Map<string, number>();
  const length = 3 + Math.floor(random() * 40);
  for (let i = 0; i < length; i++) {
    const word = VOCABULARY[Math.floor(VOCABULARY.length * random() ** 2)];
    tf.set(word, (tf.get(word) ?? 0) + 1);
  }
  return { id: id(n), length, terms: [...tf.keys()], tfs: [...tf.values()], tags: [] };
}

function corpus(): DatasetIndex {
  const random = prng(17);
  const index = new DatasetIndex();
  const chunks = Array.from({ length: 3000 }, (_, n) => chunk(random, n));
  for (const c of chunks) index.add(c);
  // Copies of chunks under other ids: tied scores, ordered by id.
  for (let n = 0; n < 200; n++) index.add({ ...chunks[n * 7], id: id(10_000 + n) });
  // Short chunks repeating a word more often than the index tracks frequencies one by one
  // (postingList.ts): the word's highest impacts lie there.
  for (let n = 0; n < 40; n++) index.add({ id: id(20_000 + n), length: 16 + n, terms: ['w59'], tfs: [16 + n], tags: [] });
  // Long chunks, over the lengths the walk tells apart only by class (postingList.ts's lengthClass),
  // some repeating a common word more often than a list's frequencies by ordinal hold.
  for (let n = 0; n < 60; n++)
    index.add({ id: id(40_000 + n), length: Math.round(100 * 1.11 ** n), terms: ['w0', 'w1', 'w7'], tfs: [1 + n * 7, 1 + (n % 5), 1 + n * 20], tags: [] });
  // Rare words: lists too short to track frequencies one by one.
  for (let n = 0; n < 45; n++) index.add({ id: id(30_000 + n), length: 4 + (n % 17), terms: ['w3', `rare${n % 3}`], tfs: [1, 1 + (n % 4)], tags: [] });
  // Removed, and removed then written again (a new ordinal, the old postings dead).
  for (let n = 0; n < 300; n++) index.remove(id(n * 3));
  for (let n = 0; n < 150; n++) index.add(chunk(random, n * 5));
  return index;
}

const same = (ranked: Ranked[]) => ranked.map((r) => `${r.ordinal}:${r.score}`);

describe('the in-memory BM25 top k', () => {
  const index = corpus();
  const random = prng(23);
  const parameters = [
    { k1: 1.2, b: 0.75, averageLength: 21 },
    { k1: 2, b: 0.3, averageLength: 12 },
    { k1: 0, b: 0, averageLength: 1 },
  ];
  const queries = Array.from({ length: 60 }, () => {
    const terms = [...new Set(Array.from({ length: 1 + Math.floor(random() * 5) }, () => VOCABULARY[Math.floor(random() * 64)]))];
    // Some weights boosted, some nearly equal, one sometimes zero; words outside the vocabulary match nothing.
    return { terms, weights: terms.map(() => (random() < 0.1 ? 0 : 0.5 + random() * 3) * (random() < 0.2 ? 2.5 : 1)) };
  });
  queries.push(
    { terms: ['w59'], weights: [1] },
    { terms: ['w2', 'w59'], weights: [0.5, 2] },
    { terms: ['rare0'], weights: [1] },
    { terms: ['w3', 'rare1'], weights: [0.3, 2] },
    { terms: ['w0', 'w3', 'rare2'], weights: [0.2, 0.4, 3] },
  );
  // Ordinals of a selective filter (dead ones among them), ascending.
  const filtered = Int32Array.from({ length: index.capacity }, (_, i) => i).filter(() => random() < 0.15);

  it('equals scoring every posting, for every query, page size and threshold', () => {
    let compared = 0;
    for (const p of parameters)
      for (const { terms, weights } of queries)
        for (const k of [1, 10, 37, 500]) {
          const all = index.best(index.match(terms, weights, p), 100_000, 0);
          for (const least of [0, all[Math.min(5, all.length - 1)]?.score ?? 0]) {
            const expected = index.best(index.match(terms, weights, p), k, least);
            expect(same(index.top(terms, weights, p, k, least)), `${terms} k ${k} least ${least}`).toEqual(same(expected));
            compared++;
          }
        }
    expect(compared).toBe(parameters.length * queries.length * 4 * 2);
  });

  it("scores a filter's chunks as scoring every posting does, leaving out dead chunks and those holding no term", () => {
    const kept = new Set(filtered);
    let nonEmpty = 0;
    for (const p of parameters)
      for (const { terms, weights } of queries) {
        const all = index.match(terms, weights, p);
        const expected = new Map<number, number>();
        all.ordinals.forEach((ordinal, i) => {
          if (kept.has(ordinal)) expected.set(ordinal, all.scores[i]);
        });
        const among = index.matchAmong(filtered, terms, weights, p);
        expect(new Map(Array.from(among.ordinals, (ordinal, i) => [ordinal, among.scores[i]])), `${terms}`).toEqual(expected);
        for (const k of [1, 10, 500]) {
          const ranked = index.best(among, k, 0);
          expect(same(ranked)).toEqual(
            same(
              index
                .best(all, 100_000, 0)
                .filter((r) => kept.has(r.ordinal))
                .slice(0, k),
            ),
          );
        }
        if (expected.size > 0) nonEmpty++;
      }
    expect(nonEmpty).toBeGreaterThan(queries.length);
  });

  it("walks a filter's chunks alone as scoring every posting and keeping those does", () => {
    let compared = 0;
    for (const share of [0.02, 0.15, 0.6]) {
      // 1 for an ordinal left out; dead ordinals marked too, as a filter marks them; the last
      // ordinals lie past the mask's end (chunks added after it was made), which leaves them out.
      const skipped = new Uint8Array(index.capacity - 20).map(() => (random() < share ? 0 : 1));
      for (let d = 0; d < skipped.length; d++) if (index.isDead(d)) skipped[d] = 1;
      for (const p of parameters)
        for (const { terms, weights } of queries)
          for (const k of [1, 10, 200]) {
            const expected = index
              .best(index.match(terms, weights, p), 100_000, 0)
              .filter((r) => skipped[r.ordinal] === 0)
              .slice(0, k);
            expect(same(index.top(terms, weights, p, k, 0, { skipped })), `${terms} k ${k} share ${share}`).toEqual(same(expected));
            if (expected.length > 0) compared++;
          }
    }
    expect(compared).toBeGreaterThan(parameters.length * queries.length * 3 * 2);
  });

  describe('split with the helper thread', () => {
    const postings = SPLIT.postings;
    afterAll(() => {
      SPLIT.postings = postings;
    });

    it('gives the page one walk gives, with a filter too, and walks alone when not to split', async () => {
      // Every walk long enough to split.
      SPLIT.postings = 0;
      const helper = await walkHelper();
      expect(helper).not.toBeNull();
      const answered = () => helper?.answered ?? 0;
      // A filter's mask in shared memory, as held.ts makes it; one in this thread's own memory cannot be read by the helper.
      const shared = sharedArray(Uint8Array, index.capacity);
      for (let d = 0; d < shared.length; d++) shared[d] = index.isDead(d) || random() < 0.7 ? 1 : 0;
      const own = Uint8Array.from(shared);
      let splits = 0;
      for (const p of parameters)
        for (const { terms, weights } of queries)
          for (const k of [1, 10, 200]) {
            const all = index.best(index.match(terms, weights, p), 100_000, 0);
            const least = all[Math.min(5, all.length - 1)]?.score ?? 0;
            const before = answered();
            expect(same(index.top(terms, weights, p, k, 0, { split: true })), `${terms} k ${k}`).toEqual(same(all.slice(0, k)));
            expect(same(index.top(terms, weights, p, k, least, { split: true })), `${terms} k ${k} least`).toEqual(
              same(index.best(index.match(terms, weights, p), k, least)),
            );
            const kept = all.filter((r) => shared[r.ordinal] === 0).slice(0, k);
            expect(same(index.top(terms, weights, p, k, 0, { split: true, skipped: shared })), `${terms} k ${k} filtered`).toEqual(same(kept));
            // Every walk over a term was split.
            const walks = terms.some((t) => index.holding(t) > 0) ? 3 : 0;
            expect(answered() - before).toBe(walks);
            splits += walks;
            // Neither a mask the helper cannot read nor a walk not to split goes to it.
            expect(same(index.top(terms, weights, p, k, 0, { split: true, skipped: own }))).toEqual(same(kept));
            expect(same(index.top(terms, weights, p, k, 0))).toEqual(same(all.slice(0, k)));
            expect(answered() - before).toBe(walks);
          }
      expect(splits).toBeGreaterThan(parameters.length * queries.length);
    });
  });

  it("counts the common words' frequencies by ordinal in its size, and classes lengths in order", () => {
    expect(index.size).toBeGreaterThan(index.postings);
    let before = -1;
    for (let length = 0; length <= 100_000; length++) {
      const c = lengthClass(length);
      expect(c >= before && c <= 255, `length ${length}`).toBe(true);
      // A class's bound on length is no longer than any length in it.
      expect(shortestOfClass(c), `length ${length}`).toBeLessThanOrEqual(length);
      before = c;
    }
    expect(lengthClass(127)).toBe(127);
  });

  it('ranks tied chunks by id and leaves out removed ones', () => {
    const terms = index.top(['w0', 'w1', 'w2'], [1, 1, 1], parameters[0], 3000, 0);
    const ids = terms.map((r) => index.idOf(r.ordinal));
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).not.toContain(id(3));
    for (let i = 1; i < terms.length; i++) {
      const [a, b] = [terms[i - 1], terms[i]];
      expect(a.score > b.score || (a.score === b.score && index.idOf(a.ordinal) < index.idOf(b.ordinal))).toBe(true);
    }
    expect(terms.some((r, i) => i > 0 && r.score === terms[i - 1].score)).toBe(true);
  });
});

describe('the ranking of filtered rounds', () => {
  const query = { terms: ['w0', 'w3', 'w9'], weights: [1.1, 1.7, 2.4], parameters: { k1: 1.2, b: 0.75, averageLength: 21 } };
  const ids = (hits: { id: string }[]) => hits.map((h) => h.id);

  it('deepens the same ranking while the index stays as it was', () => {
    const index = corpus();
    const ranking = roundsRanking(index, query, 0);
    const shallow = ranking(80);
    const deep = ranking(640);
    expect([shallow.restarted, deep.restarted]).toEqual([false, false]);
    expect(ids(deep.ranked).slice(0, 80)).toEqual(ids(shallow.ranked));
    const all = index.best(index.match(query.terms, query.weights, query.parameters), 640, 0);
    expect(ids(deep.ranked)).toEqual(all.map((r) => index.idOf(r.ordinal)));
  });

  it('starts again from one snapshot when the index catches up between rounds', () => {
    const index = corpus();
    const ranking = roundsRanking(index, query, 0);
    const before = ranking(80);
    // A catch-up: the best chunk is deleted, and a new one holds every query word.
    index.remove(before.ranked[0].id);
    index.add({ id: id(20_000), length: 4, terms: ['w0', 'w3', 'w9'], tfs: [3, 3, 3], tags: [] });
    index.version++;
    const after = ranking(640);
    expect(after.restarted).toBe(true);
    expect(ids(after.ranked)[0]).toBe(id(20_000));
    expect(ids(after.ranked)).not.toContain(before.ranked[0].id);
    // Deeper rounds keep reading that snapshot, whatever changes next.
    index.add({ id: id(20_001), length: 4, terms: ['w0', 'w3', 'w9'], tfs: [4, 4, 4], tags: [] });
    index.version++;
    const deeper = ranking(5120);
    expect(deeper.restarted).toBe(false);
    expect(ids(deeper.ranked).slice(0, 640)).toEqual(ids(after.ranked));
  });
});
