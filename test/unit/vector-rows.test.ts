// The held vectors' int8 codes by row (codes.wat's SIMD sums): the products of chosen rows are
// those a plain loop computes, a query's i16 codes keep every sum within an i32 at any dimension and
// miss of the query what they say, and a scan's best slots are the top inner products across
// blocks, several queries at once, removed slots left out.
import { describe, expect, it } from 'vitest';
import { RowCodes } from '../../server/search/retrieval/vectors/rows.js';
import { prng } from '../support/prng.js';

/** Not a multiple of 16: rows are padded to the SIMD loop's step. */
const DIMENSION = 40;
/** Rows a block: small, so that a list and a scan cross blocks. */
const ROWS = 64;
const SLOTS = 3 * ROWS + 21;

const random = prng(11);
const code = () => Math.round(random() * 254) - 127;

/** A set of SLOTS rows of random codes, and the codes. */
function filled(dimension = DIMENSION): { rows: RowCodes; codes: Int8Array } {
  const rows = new RowCodes(dimension, ROWS);
  const codes = Int8Array.from({ length: SLOTS * dimension }, code);
  for (let s = 0; s < SLOTS; s++) rows.write(s, codes, s * dimension);
  return { rows, codes };
}

/** A unit vector of `dimension` random components. */
function unit(dimension: number): number[] {
  const v = Array.from({ length: dimension }, () => random() * 2 - 1);
  const norm = Math.hypot(...v);
  return v.map((x) => x / norm);
}

describe('RowCodes', () => {
  it("sums a list's rows (repeats, any order, across blocks) as a plain loop does", () => {
    const { rows, codes } = filled();
    try {
      const query = rows.queryCodes(unit(DIMENSION));
      const plain = (slots: Int32Array) =>
        Array.from(slots, (s) => Array.from({ length: DIMENSION }, (_, c) => query.codes[c] * codes[s * DIMENSION + c]).reduce((a, b) => a + b, 0));
      const slots = Int32Array.from({ length: 500 }, () => Math.floor(random() * SLOTS));
      expect(Array.from(rows.products(query, slots))).toEqual(plain(slots));
      // A longer list than any before: the scratch memory grows.
      const more = Int32Array.from({ length: 5000 }, (_, i) => (7 * i) % SLOTS);
      expect(Array.from(rows.products(query, more))).toEqual(plain(more));
    } finally {
      rows.release();
    }
  });

  it('sums gathered rows as the rows they were copied from, and hands their memory back for another list', () => {
    const { rows } = filled();
    try {
      const query = rows.queryCodes(unit(DIMENSION));
      const slots = Int32Array.from({ length: 300 }, (_, i) => (11 * i) % SLOTS);
      const gathered = rows.gather(slots);
      // Other scratch use in between (a longer list's products) leaves the copies as they were.
      rows.products(
        query,
        Int32Array.from({ length: 3000 }, (_, i) => i % SLOTS),
      );
      expect(Array.from(rows.gatheredProducts(query, gathered))).toEqual(Array.from(rows.products(query, slots)));
      rows.releaseGathered(gathered);
      // A list of about the same length takes the memory handed back.
      const again = rows.gather(slots.subarray(0, 290));
      expect(again.at).toBe(gathered.at);
      expect(Array.from(rows.gatheredProducts(query, again))).toEqual(Array.from(rows.products(query, slots.subarray(0, 290))));
      rows.releaseGathered(again);
    } finally {
      rows.release();
    }
  });

  it("codes a query as finely as an i32's sums allow, and says what they miss of it", () => {
    for (const dimension of [DIMENSION, 1536, 4096]) {
      const rows = new RowCodes(dimension, ROWS);
      try {
        // Every component of one magnitude: the largest sum of codes there can be for the dimension.
        for (const query of [unit(dimension), Array.from({ length: dimension }, (_, i) => (i % 2 ? 1 : -1) / Math.sqrt(dimension))]) {
          const { codes, scale, error } = rows.queryCodes(query);
          expect(codes).toHaveLength(Math.ceil(dimension / 16) * 16);
          expect(127 * codes.reduce((sum, c) => sum + Math.abs(c), 0)).toBeLessThanOrEqual(2 ** 31 - 1);
          expect(Math.max(...codes.map(Math.abs))).toBeLessThanOrEqual(32_767);
          expect(error).toBeCloseTo(Math.hypot(...query.map((x, i) => x - codes[i] / scale)), 12);
          expect(error).toBeLessThan(1e-3);
        }
        // Rows of the most extreme codes against the extreme query: the SIMD sums do not wrap.
        const extreme = Array.from({ length: dimension }, (_, i) => (i % 2 ? 1 : -1) / Math.sqrt(dimension));
        const query = rows.queryCodes(extreme);
        const row = Int8Array.from({ length: dimension }, (_, i) => (i % 2 ? 127 : -127));
        rows.write(0, row, 0);
        expect(rows.products(query, Int32Array.of(0))[0]).toBe(127 * query.codes.reduce((sum, c) => sum + Math.abs(c), 0));
      } finally {
        rows.release();
      }
    }
  });

  it('finds each query of a scan its largest inner products across blocks, removed slots left out', () => {
    const { rows, codes } = filled();
    const ids: (string | null)[] = Array.from({ length: SLOTS }, (_, s) => `chunk ${s}`);
    try {
      const queries = Int8Array.from({ length: 3 * rows.width }, (_, i) => (i % rows.width < DIMENSION ? code() : 0));
      const scores = (q: number) =>
        Array.from({ length: SLOTS }, (_, s) =>
          Array.from({ length: DIMENSION }, (_, c) => queries[q * rows.width + c] * codes[s * DIMENSION + c]).reduce((a, b) => a + b, 0),
        );
      // The first query's best ten removed: the next ten take their places.
      const first = scores(0);
      const order = first.map((score, slot) => ({ score, slot })).sort((a, b) => b.score - a.score);
      for (const { slot } of order.slice(0, 10)) ids[slot] = null;
      const counts = [10, 1, SLOTS + 5];
      const found = rows.best(queries, counts, ids);
      for (let q = 0; q < 3; q++) {
        const all = scores(q);
        const live = all.map((score, slot) => ({ score, slot })).filter(({ slot }) => ids[slot] !== null);
        const expected = live.sort((a, b) => b.score - a.score).slice(0, counts[q]);
        expect(new Set(found[q]).size).toBe(found[q].length);
        for (const slot of found[q]) expect(ids[slot]).not.toBeNull();
        expect(Array.from(found[q], (slot) => all[slot]).sort((a, b) => b - a)).toEqual(expected.map((e) => e.score));
      }
      // Fewer slots held (a block only partly written): none beyond them is found.
      for (const slot of rows.best(queries.subarray(0, rows.width), [SLOTS], ids.slice(0, ROWS + 3))[0]) expect(slot).toBeLessThan(ROWS + 3);
    } finally {
      rows.release();
    }
  });

  it('scores cleared rows 0, and starts from zeros in memory another set gave back', () => {
    const { rows } = filled();
    const query = rows.queryCodes(unit(DIMENSION));
    rows.clear(5);
    expect(rows.products(query, Int32Array.of(5))[0]).toBe(0);
    rows.release();
    const second = new RowCodes(DIMENSION, ROWS);
    try {
      second.write(2 * ROWS, new Int8Array(DIMENSION).fill(1), 0);
      expect(Array.from(second.products(query, Int32Array.of(0, ROWS + 1, 2 * ROWS)))).toEqual([0, 0, query.codes.reduce((a, b) => a + b, 0)]);
    } finally {
      second.release();
    }
  });
});
