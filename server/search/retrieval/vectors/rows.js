// Int8 codes held by row, in the codes' WebAssembly memory (codeMemory.js), summed with SIMD
// (codes.wat): a scan of every code for the best slots of a query (a dense one, which the codes by
// column would not spare reading), and the products of a long list of chunks' rows for its screen
// (worker.js). Plain JavaScript, loaded by the vectors' worker.
import { Best } from './best.js';
import { allocate, memory, release, rowProducts, rowsAbove } from './codeMemory.js';

/** The largest sum the SIMD loop may reach: an i32's. */
const MOST = 2 ** 31 - 1;
/** The largest magnitude of a query's i16 codes. */
const QUERY_STEPS = 32_767;
/** Bytes of rows a scan reads for every query before the next stretch: well within a core's cache. */
const STRETCH = 2 ** 19;

/** A set's codes by row, in blocks of `rows` slots (as the worker's blocks). */
export class RowCodes {
  constructor(dimension, rows) {
    this.dimension = dimension;
    /** Codes a row: the dimension rounded up to the SIMD loop's sixteen, the rest zeros. */
    this.width = Math.ceil(dimension / 16) * 16;
    this.rows = rows;
    /** Each block's offset in the memory: slot s of block b starts at blocks[b] + s * width. */
    this.blocks = [];
    /** Where `products` and `best` put their queries and what they find (grown as needed). */
    this.scratch = { at: 0, bytes: 0 };
  }

  rowAt(slot) {
    return this.blocks[Math.floor(slot / this.rows)] + (slot % this.rows) * this.width;
  }

  /** Writes the codes of `slot` from `codes[at..at + dimension]` (throws a RangeError when the memory cannot grow). */
  write(slot, codes, at) {
    const b = Math.floor(slot / this.rows);
    while (this.blocks.length <= b) this.blocks.push(allocate(this.rows * this.width));
    new Int8Array(memory.buffer).set(codes.subarray(at, at + this.dimension), this.rowAt(slot));
  }

  /** Zeroes the codes of `slot`. */
  clear(slot) {
    if (Math.floor(slot / this.rows) >= this.blocks.length) return;
    const row = this.rowAt(slot);
    new Int8Array(memory.buffer).fill(0, row, row + this.dimension);
  }

  /**
   * The i16 codes of a unit vector `unit` (`dimension` numbers) for `products`: as fine as an i16
   * and the i32 sums allow. `scale`: codes per unit; `error`: the norm of what they miss of `unit`;
   * `magnitudes`: the sum of `unit`'s components' magnitudes.
   */
  queryCodes(unit) {
    let largest = 0;
    let total = 0;
    for (let i = 0; i < this.dimension; i++) {
      largest = Math.max(largest, Math.abs(unit[i]));
      total += Math.abs(unit[i]);
    }
    // A sum's magnitude is at most 127 times the codes' magnitudes, each the component's times the
    // scale plus at most a half from rounding.
    const scale = largest === 0 ? 0 : Math.min(QUERY_STEPS / largest, (MOST / 127 - this.dimension / 2) / total);
    const codes = new Int16Array(this.width);
    let missed = 0;
    for (let i = 0; i < this.dimension; i++) {
      codes[i] = Math.round(unit[i] * scale);
      const left = unit[i] - (scale === 0 ? 0 : codes[i] / scale);
      missed += left * left;
    }
    return { codes, scale, error: Math.sqrt(missed), magnitudes: total };
  }

  /** At least `bytes` of scratch memory, at a multiple of 16 (throws a RangeError when the memory cannot grow). */
  scratchOf(bytes) {
    if (this.scratch.bytes < bytes) {
      // Doubled: a list a little longer than the last does not allocate again.
      const size = Math.max(bytes, 2 * this.scratch.bytes, 4096);
      if (this.scratch.bytes > 0) release(this.scratch.at, this.scratch.bytes);
      // Emptied first: should the memory not grow, nothing handed back is still pointed at.
      this.scratch = { at: 0, bytes: 0 };
      this.scratch = { at: allocate(size), bytes: size };
    }
    return this.scratch.at;
  }

  /** The inner products of the query's codes (queryCodes) with the rows of each of `slots`, in their order. */
  products(query, slots) {
    const n = slots.length;
    const at = this.scratchOf(2 * this.width + 8 * n);
    // The query, then the sums (productsAt), then the rows' addresses.
    const rows = at + 2 * this.width + 4 * n;
    const addresses = new Int32Array(memory.buffer, rows, n);
    for (let i = 0; i < n; i++) addresses[i] = this.rowAt(slots[i]);
    return this.productsAt(query, at, rows, n);
  }

  /**
   * The rows of `slots` copied one after another, and their addresses, in memory of their own (throws
   * a RangeError when the memory cannot grow): summed by `gatheredProducts`, a list read again and
   * again costs no cache miss a row. Its size is rounded up to a power of two, so that what a list
   * hands back (`releaseGathered`) serves another of about its length.
   */
  gather(slots) {
    const n = slots.length;
    const bytes = 2 ** Math.ceil(Math.log2(Math.max(n * (this.width + 4), 16)));
    const at = allocate(bytes);
    const codes = new Int8Array(memory.buffer);
    const addresses = new Int32Array(memory.buffer, at + n * this.width, n);
    for (let i = 0; i < n; i++) {
      const row = this.rowAt(slots[i]);
      codes.copyWithin(at + i * this.width, row, row + this.width);
      addresses[i] = at + i * this.width;
    }
    return { at, bytes, n };
  }

  /** The inner products of the query's codes with the rows `gather` copied, in their order. */
  gatheredProducts(query, gathered) {
    const at = this.scratchOf(2 * this.width + 4 * gathered.n);
    return this.productsAt(query, at, gathered.at + gathered.n * this.width, gathered.n);
  }

  releaseGathered(gathered) {
    release(gathered.at, gathered.bytes);
  }

  /** The products of the query's codes, written at `at`, with the `n` rows whose addresses are at `rows`; the sums are written after the query. */
  productsAt(query, at, rows, n) {
    const sums = at + 2 * this.width;
    new Int16Array(memory.buffer, at, this.width).set(query.codes);
    rowProducts(at, rows, n, this.width, sums);
    return new Int32Array(memory.buffer, sums, n).slice();
  }

  /**
   * For each query (int8 codes, `width` apiece, one after another), the `counts[i]` slots whose
   * codes have the largest inner product with it, in no order, among those `ids` names (its length:
   * the slots; null: removed). Every query reads a stretch of rows before the next is read, so that
   * queries scanned together read the codes from memory once.
   */
  best(queries, counts, ids) {
    const width = this.width;
    const stretch = Math.max(16, Math.floor(STRETCH / width));
    const at = this.scratchOf(2 * queries.length + 8 * stretch);
    const list = at + 2 * queries.length;
    const wide = new Int16Array(memory.buffer, at, queries.length);
    for (let i = 0; i < queries.length; i++) wide[i] = queries[i];
    const tops = counts.map((n) => new Best(n));
    for (let b = 0; b < this.blocks.length && b * this.rows < ids.length; b++) {
      const used = Math.min(this.rows, ids.length - b * this.rows);
      for (let from = 0; from < used; from += stretch) {
        const count = Math.min(stretch, used - from);
        for (let q = 0; q < tops.length; q++) {
          const top = tops[q];
          // Only rows that would beat the lowest of the best so far come back.
          const found = rowsAbove(at + 2 * q * width, this.blocks[b] + from * width, count, width, top.threshold(), list);
          const pairs = new Int32Array(memory.buffer, list, 2 * found);
          for (let i = 0; i < 2 * found; i += 2) {
            const slot = b * this.rows + from + pairs[i];
            if (top.takes(pairs[i + 1], slot) && ids[slot] !== null) top.offer(slot, pairs[i + 1]);
          }
        }
      }
    }
    return tops.map((top) => top.slots());
  }

  /** Hands the set's memory back for sets made later. */
  release() {
    for (const at of this.blocks) release(at, this.rows * this.width);
    if (this.scratch.bytes > 0) release(this.scratch.at, this.scratch.bytes);
    this.blocks = [];
    this.scratch = { at: 0, bytes: 0 };
  }
}
