// The held vectors' codes by column (codes.wat's SIMD sums). In the open block (the last, being
// written), a scan's candidates are the top inner products a plain loop over the same int8 codes
// finds, across steps within the block, for queries with an odd or even count of nonzero components
// of either sign, leaving cleared slots out, alone or with a helper thread claiming pieces. A full
// block is sealed into 4-bit codes, whose sums estimate the int8 ones: its candidates hold the true
// best, its cleared slots are left out, and a scan shared with a helper finds the same slots as one
// alone. A set made in memory another set gave back starts from zeros; the best of a scan, ties
// ordered by slot, are the same however it was offered them.
import { describe, expect, it } from 'vitest';
import { Best } from '../../server/search/retrieval/vectors/best.js';
import { ColumnCodes } from '../../server/search/retrieval/vectors/columns.js';
import { deliver, handoff } from '../../server/search/retrieval/vectors/handoff.js';
import { scanHelpers } from '../../server/search/retrieval/vectors/helpers.js';
import { prng } from '../support/prng.js';

const DIMENSION = 40;
/** Rows a block: small, so that a scan crosses blocks and ends inside one. */
const ROWS = 64;

const random = prng(5);
const code = () => Math.round(random() * 254) - 127;

/** `count` codes of DIMENSION, one slot after another. */
const codesOf = (count: number) => Int8Array.from({ length: count * DIMENSION }, code);

/** A query's codes with `nonzero` components set (at distinct places), the others zero. */
function query(nonzero: number): Int8Array {
  const q = new Int8Array(DIMENSION);
  const places = [...Array(DIMENSION).keys()].sort(() => random() - 0.5).slice(0, nonzero);
  for (const p of places) q[p] = code() || 1;
  return q;
}

/** The inner products of `q` with every slot's codes, by a plain loop. */
const products = (codes: Int8Array, q: Int8Array, slots: number) =>
  Array.from({ length: slots }, (_, s) => q.reduce((sum, x, c) => sum + x * codes[s * DIMENSION + c], 0));

/** Whether `found` holds `n` held slots whose products are the `n` largest (ties may pick either). */
function expectTop(found: Int32Array, scores: number[], held: boolean[], n: number) {
  const live = scores.map((score, slot) => ({ score, slot })).filter(({ slot }) => held[slot]);
  const expected = live.sort((a, b) => b.score - a.score).slice(0, n);
  expect(found).toHaveLength(expected.length);
  expect(new Set(found).size).toBe(found.length);
  for (const slot of found) expect(held[slot]).toBe(true);
  expect(Array.from(found, (slot) => scores[slot]).sort((a, b) => b - a)).toEqual(expected.map((e) => e.score));
}

/** A scan alone, and one that a helper thread may join. */
const SHARINGS: [string, { threads?: number; splitBytes?: number }][] = [
  ['alone', {}],
  ['shared with a helper thread', { threads: 2, splitBytes: 0 }],
];

/** Columns of `slots` slots of `codes`, in blocks of `rows` (all but the last sealed, when full). */
function columnsOf(codes: Int8Array, slots: number, rows: number, sharing = {}): ColumnCodes {
  const columns = new ColumnCodes(DIMENSION, rows, sharing);
  for (let s = 0; s < slots; s++) columns.write(s, codes, s * DIMENSION);
  return columns;
}

/** How many of the `k` held slots with the largest `scores` are among `found`. */
function foundOfBest(found: Int32Array, scores: number[], held: boolean[], k: number): number {
  const best = scores
    .map((score, slot) => ({ score, slot }))
    .filter(({ slot }) => held[slot])
    .sort((a, b) => b.score - a.score)
    .slice(0, k);
  const set = new Set(found);
  return best.filter(({ slot }) => set.has(slot)).length;
}

describe('ColumnCodes, the open block', () => {
  // One block, never full: its codes stay int8.
  const SLOTS = ROWS - 11;

  it.each(SHARINGS)('finds the largest inner products, for any count and sign of nonzero components, %s', (_, sharing) => {
    const codes = codesOf(SLOTS);
    const columns = columnsOf(codes, SLOTS, ROWS, sharing);
    const held = new Array<boolean>(SLOTS).fill(true);
    const answered = scanHelpers(1)[0].answered;
    try {
      expect(columns.estimates).toBe(false);
      for (const nonzero of [1, 2, 5, 8, 20, DIMENSION]) {
        const q = query(nonzero);
        const scores = products(codes, q, SLOTS);
        for (const n of [1, 10, SLOTS, SLOTS + 5]) expectTop(columns.best(q, n, SLOTS), scores, held, n);
      }
      // Shared, the helper joined the scans it reached before this thread had claimed every piece.
      expect(scanHelpers(1)[0].answered - answered).toBe(columns.shared);
      if (!('splitBytes' in sharing)) expect(columns.shared).toBe(0);
    } finally {
      columns.release();
    }
  });

  it.each(SHARINGS)('leaves cleared slots out, and scans only the slots asked for, %s', (_, sharing) => {
    const codes = codesOf(SLOTS);
    const columns = columnsOf(codes, SLOTS, ROWS, sharing);
    const held = new Array<boolean>(SLOTS).fill(true);
    try {
      const q = query(6);
      const scores = products(codes, q, SLOTS);
      // The best ten cleared: the next ten take their places.
      const best = scores.map((score, slot) => ({ score, slot })).sort((a, b) => b.score - a.score);
      for (const { slot } of best.slice(0, 10)) {
        columns.clear(slot);
        held[slot] = false;
      }
      expectTop(columns.best(q, 10, SLOTS), scores, held, 10);
      // Written again, as zeros: held, they score 0, still outscored by the next ten.
      const zeros = new Int8Array(DIMENSION);
      for (const { slot } of best.slice(0, 10)) {
        columns.write(slot, zeros, 0);
        held[slot] = true;
        scores[slot] = 0;
      }
      expect(best[19].score).toBeGreaterThan(0);
      expectTop(columns.best(q, 10, SLOTS), scores, held, 10);
      // Fewer slots asked for: none beyond them is a candidate.
      for (const slot of columns.best(q, SLOTS, 19)) expect(slot).toBeLessThan(19);
      expect(columns.best(q, SLOTS, 19)).toHaveLength(19);
    } finally {
      columns.release();
    }
  });

  it('keeps a scan to this thread when it is not to be shared, with the same answers', () => {
    const codes = codesOf(SLOTS);
    const columns = columnsOf(codes, SLOTS, ROWS, { threads: 2, splitBytes: 0 });
    const held = new Array<boolean>(SLOTS).fill(true);
    const answered = scanHelpers(1)[0].answered;
    try {
      const q = query(8);
      const scores = products(codes, q, SLOTS);
      for (let i = 0; i < 20; i++) expectTop(columns.best(q, 10, SLOTS, false), scores, held, 10);
      expect(scanHelpers(1)[0].answered).toBe(answered);
      expect(columns.shared).toBe(0);
    } finally {
      columns.release();
    }
  });

  it('finds the largest inner products in a block summed in several steps, a step cut short at the end', () => {
    // The worker's block size: a block's rows are summed some thousands at a time.
    const rows = 65_536;
    const slots = rows - 5_000 + 7;
    const codes = codesOf(slots);
    const columns = columnsOf(codes, slots, rows);
    const held = Array.from({ length: slots }, (_, s) => s % 97 !== 3);
    held.forEach((kept, s) => {
      if (!kept) columns.clear(s);
    });
    try {
      for (const nonzero of [1, 7, DIMENSION]) {
        const q = query(nonzero);
        const scores = products(codes, q, slots);
        for (const n of [10, 100]) expectTop(columns.best(q, n, slots), scores, held, n);
      }
    } finally {
      columns.release();
    }
  });
});

describe('ColumnCodes, sealed blocks', () => {
  // Three full blocks, sealed, and an open one.
  const SLOTS = 3 * ROWS + 21;

  it.each(SHARINGS)('estimates the inner products of full blocks closely enough that twice the candidates hold the best, %s', (_, sharing) => {
    const codes = codesOf(SLOTS);
    const columns = columnsOf(codes, SLOTS, ROWS, sharing);
    const held = new Array<boolean>(SLOTS).fill(true);
    try {
      expect(columns.estimates).toBe(true);
      let found = 0;
      let asked = 0;
      for (let i = 0; i < 30; i++) {
        const q = query([1, 2, 5, 8, 20, DIMENSION][i % 6]);
        const scores = products(codes, q, SLOTS);
        // The best of all is always among the best 10 estimated.
        expect(foundOfBest(columns.best(q, 10, SLOTS), scores, held, 1)).toBe(1);
        found += foundOfBest(columns.best(q, 20, SLOTS), scores, held, 10);
        asked += 10;
        // Asked for every slot, every held one comes back, once.
        const all = columns.best(q, SLOTS + 5, SLOTS);
        expect(new Set(all).size).toBe(SLOTS);
      }
      expect(found / asked).toBeGreaterThanOrEqual(0.97);
    } finally {
      columns.release();
    }
  });

  it('leaves cleared slots of a sealed block out, and scores a sealed slot written again by its new codes', () => {
    const codes = codesOf(SLOTS);
    const columns = columnsOf(codes, SLOTS, ROWS);
    const held = new Array<boolean>(SLOTS).fill(true);
    try {
      const q = query(6);
      const scores = products(codes, q, SLOTS);
      const best = scores.map((score, slot) => ({ score, slot })).sort((a, b) => b.score - a.score);
      const sealedBest = best.filter(({ slot }) => slot < 3 * ROWS).slice(0, 10);
      for (const { slot } of sealedBest) {
        columns.clear(slot);
        held[slot] = false;
      }
      for (const slot of columns.best(q, SLOTS, SLOTS)) expect(held[slot]).toBe(true);
      expect(columns.best(q, SLOTS, SLOTS)).toHaveLength(SLOTS - 10);
      // Written again as the query's own codes: in the steps of its block's columns, still the best.
      const own = Int8Array.from(q, (x) => Math.sign(x) * 127);
      columns.write(sealedBest[0].slot, own, 0);
      expect(Array.from(columns.best(q, 1, SLOTS))).toEqual([sealedBest[0].slot]);
    } finally {
      columns.release();
    }
  });

  it('seals a block whose last row was never written once a later block is', () => {
    // A restored set writes none of its removed slots: here the first block's last.
    const codes = codesOf(ROWS + 1);
    const columns = new ColumnCodes(DIMENSION, ROWS);
    try {
      for (let s = 0; s < ROWS - 1; s++) columns.write(s, codes, s * DIMENSION);
      expect(columns.estimates).toBe(false);
      columns.write(ROWS, codes, ROWS * DIMENSION);
      expect(columns.estimates).toBe(true);
      // The unwritten slot is not held; every other one is.
      const all = columns.best(query(5), ROWS + 1, ROWS + 1);
      expect(all).toHaveLength(ROWS);
      expect(Array.from(all)).not.toContain(ROWS - 1);
    } finally {
      columns.release();
    }
  });

  it('has a helper claim pieces of a long scan beside this thread, with the answers of a scan alone; one not to be shared, once a keyword list is handed over', () => {
    // Blocks of the worker's size, a million slots (15 sealed): a scan of all 40 columns reads 20 MB,
    // some milliseconds, time enough for the helper to join.
    const rows = 65_536;
    const slots = 1_000_000;
    const columns = columnsOf(codesOf(slots), slots, rows, { threads: 2, splitBytes: 0 });
    const answered = scanHelpers(1)[0].answered;
    try {
      for (let i = 0; i < 10; i++) {
        // Few nonzero components, small: many scores tie, and the lower slot wins a tie wherever
        // the pieces fell.
        const q = query(i < 5 ? DIMENSION : 8).map((x) => (i < 5 ? x : Math.sign(x)));
        const sorted = (found: Int32Array) => Array.from(found).sort((a, b) => a - b);
        const shared = columns.best(q, 100, slots);
        expect(new Set(shared).size).toBe(100);
        expect(sorted(shared)).toEqual(sorted(columns.best(q, 100, slots, false)));
      }
      expect(columns.shared).toBeGreaterThan(0);
      expect(scanHelpers(1)[0].answered - answered).toBe(columns.shared);
      // Not to be shared (hybrid's BM25 walk holds the other core): no helper joins until the
      // keyword list is delivered, and the scan closes the hand-off, too late for a list after it.
      const q = query(DIMENSION);
      const alone = Array.from(columns.best(q, 100, slots, false)).sort((a, b) => a - b);
      const before = columns.shared;
      for (let i = 0; i < 5; i++) {
        const waiting = handoff(100);
        expect(Array.from(columns.best(q, 100, slots, false, waiting)).sort((a, b) => a - b)).toEqual(alone);
        expect(deliver(waiting, new Int32Array(0))).toBe(false);
      }
      expect(columns.shared).toBe(before);
      for (let i = 0; i < 5; i++) {
        const delivered = handoff(100);
        expect(deliver(delivered, new Int32Array(0))).toBe(true);
        expect(Array.from(columns.best(q, 100, slots, false, delivered)).sort((a, b) => a - b)).toEqual(alone);
      }
      expect(columns.shared).toBeGreaterThan(before);
      expect(scanHelpers(1)[0].answered - answered).toBe(columns.shared);
    } finally {
      columns.release();
    }
  });

  it('starts from zeros in memory another set gave back', () => {
    // The first set's codes all 127: any left over would outscore what the second set writes.
    const first = columnsOf(new Int8Array(SLOTS * DIMENSION).fill(127), SLOTS, ROWS);
    first.release();
    // The same shape takes the memory given back; it writes the last slot of each block only
    // (sealing the full ones), codes of 1.
    const second = new ColumnCodes(DIMENSION, ROWS);
    const written = [ROWS - 1, 2 * ROWS - 1, 3 * ROWS - 1, SLOTS - 1];
    const ones = new Int8Array(DIMENSION).fill(1);
    try {
      for (const slot of written) second.write(slot, ones, 0);
      expect(second.estimates).toBe(true);
      expect(Array.from(second.best(new Int8Array(DIMENSION).fill(127), written.length, SLOTS)).sort((a, b) => a - b)).toEqual(written);
      expect(second.best(new Int8Array(DIMENSION).fill(127), SLOTS, SLOTS)).toHaveLength(written.length);
    } finally {
      second.release();
    }
  });
});

describe('Best', () => {
  it('keeps the n highest scores, the lower slot where scores tie, in whatever order they are offered', () => {
    const offered = Array.from({ length: 200 }, (_, slot) => ({ slot, score: Math.floor(random() * 6) }));
    const expected = [...offered].sort((a, b) => b.score - a.score || a.slot - b.slot).slice(0, 25);
    for (let round = 0; round < 20; round++) {
      const best = new Best(25);
      for (const { slot, score } of [...offered].sort(() => random() - 0.5)) if (best.takes(score, slot)) best.offer(slot, score);
      expect(Array.from(best.slots()).sort((a, b) => a - b)).toEqual(expected.map((e) => e.slot).sort((a, b) => a - b));
    }
  });
});
