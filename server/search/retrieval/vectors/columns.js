// Int8 codes held by column, for scanning queries with few nonzero components: such a query's
// scores need only its own columns, so a scan reads a tenth of the codes or less (the built-in
// hashing embedder's 2-4 word queries set fewer than 40 of 384 components). The columns live in the
// codes' WebAssembly memory (codeMemory.js), whose SIMD loop does the sums (codes.wat). Plain
// JavaScript, loaded by the vectors' worker.
import { Best } from './best.js';
import { above, allocate, memory, release } from './codeMemory.js';

/**
 * Bytes between the end of a column's rows and the next column: columns a power of two apart would
 * all fall into the same cache sets and evict each other as a scan reads them side by side.
 */
const PAD = 64;

/** A set's codes by column, in blocks of `rows` slots (as the worker's blocks). */
export class ColumnCodes {
  constructor(dimension, rows) {
    this.dimension = dimension;
    this.rows = rows;
    this.stride = rows + PAD;
    /** Each block's offset in the memory: column c of block b starts at blocks[b] + c * stride. */
    this.blocks = [];
    // A query's column pairs (two addresses each), their weights (two i16 each), a block's rows
    // above the threshold (two i32 each) and a group of sixteen sums.
    const pairs = Math.ceil(dimension / 2);
    this.scratch = [8 * pairs, 4 * pairs, 8 * rows, 64].map((bytes) => ({ at: allocate(bytes), bytes }));
  }

  /** Writes the codes of `slot` from `codes[at..at + dimension]` (throws when the memory cannot grow). */
  write(slot, codes, at) {
    const b = Math.floor(slot / this.rows);
    while (this.blocks.length <= b) this.blocks.push(allocate(this.dimension * this.stride));
    const bytes = new Int8Array(memory.buffer);
    const first = this.blocks[b] + (slot % this.rows);
    for (let c = 0; c < this.dimension; c++) bytes[first + c * this.stride] = codes[at + c];
  }

  /** Zeroes the codes of `slot` (a removed vector scores 0 with every query). */
  clear(slot) {
    const b = Math.floor(slot / this.rows);
    if (b >= this.blocks.length) return;
    const bytes = new Int8Array(memory.buffer);
    const first = this.blocks[b] + (slot % this.rows);
    for (let c = 0; c < this.dimension; c++) bytes[first + c * this.stride] = 0;
  }

  /**
   * The `n` slots whose codes have the largest inner product with `query` (int8 codes of the
   * query's direction), in no order, among those `ids` names (its length: the slots; null: removed).
   */
  best(query, n, ids) {
    const slots = ids.length;
    const [cols, weights, list, group] = this.scratch.map((s) => s.at);
    const nonzero = [];
    for (let c = 0; c < this.dimension; c++) if (query[c] !== 0) nonzero.push(c);
    // An odd one out is paired with itself at weight 0.
    const pairs = Math.ceil(nonzero.length / 2);
    const top = new Best(n);
    for (let b = 0; b < this.blocks.length && b * this.rows < slots; b++) {
      const words = new Int32Array(memory.buffer);
      for (let p = 0; p < pairs; p++) {
        const a = nonzero[2 * p];
        const second = 2 * p + 1 < nonzero.length;
        const c = second ? nonzero[2 * p + 1] : a;
        words[(cols >> 2) + 2 * p] = this.blocks[b] + a * this.stride;
        words[(cols >> 2) + 2 * p + 1] = this.blocks[b] + c * this.stride;
        words[(weights >> 2) + p] = (query[a] & 0xffff) | ((second ? query[c] : 0) << 16);
      }
      const used = Math.min(this.rows, slots - b * this.rows);
      // Only rows that would beat the lowest of the best so far come back.
      const count = above(cols, weights, pairs, Math.ceil(used / 16) * 16, top.threshold(), list, group);
      const found = new Int32Array(memory.buffer, list, 2 * count);
      for (let i = 0; i < 2 * count; i += 2) {
        const row = found[i];
        const slot = b * this.rows + row;
        if (row < used && top.takes(found[i + 1]) && ids[slot] !== null) top.offer(slot, found[i + 1]);
      }
    }
    return top.slots();
  }

  /** Hands the set's memory back for sets made later. */
  release() {
    for (const at of this.blocks) release(at, this.dimension * this.stride);
    for (const { at, bytes } of this.scratch) release(at, bytes);
    this.blocks = [];
    this.scratch = [];
  }
}
