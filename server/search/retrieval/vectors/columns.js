// Int8 codes held by column, for scanning queries with few nonzero components: such a query's
// scores need only its own columns, so a scan reads a tenth of the codes or less (the built-in
// hashing embedder's 2-4 word queries set fewer than 40 of 384 components). The columns live in the
// memory of a small WebAssembly module (columns.wat) whose SIMD loop does the sums; one memory
// serves every set of the worker. Plain JavaScript, loaded by the vectors' worker.
import fs from 'node:fs';
import createWabt from 'wabt';

const wabt = await createWabt();
const parsed = wabt.parseWat('columns.wat', fs.readFileSync(new URL('./columns.wat', import.meta.url), 'utf8'), { simd: true });
const { instance } = await WebAssembly.instantiate(parsed.toBinary({}).buffer);
parsed.destroy();
const { memory, above } = instance.exports;

/** Bytes of a WebAssembly memory page. */
const PAGE = 65_536;
/**
 * Bytes between the end of a column's rows and the next column: columns a power of two apart would
 * all fall into the same cache sets and evict each other as a scan reads them side by side.
 */
const PAD = 64;

/** Free stretches of the memory by their size in bytes, for reuse by sets made later. */
const freed = new Map();
/** The first byte of the memory not yet handed out. */
let top = 0;

/** `bytes` of the memory (zeroed), at an offset that is a multiple of 16; throws when the memory cannot grow. */
function allocate(bytes) {
  const size = Math.ceil(bytes / 16) * 16;
  const reused = freed.get(size)?.pop();
  if (reused !== undefined) {
    new Int8Array(memory.buffer, reused, size).fill(0);
    return reused;
  }
  const end = top + size;
  if (end > memory.buffer.byteLength) memory.grow(Math.ceil((end - memory.buffer.byteLength) / PAGE));
  const at = top;
  top = end;
  return at;
}

function release(at, bytes) {
  const size = Math.ceil(bytes / 16) * 16;
  if (!freed.has(size)) freed.set(size, []);
  freed.get(size).push(at);
}

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

/** The `n` highest scores offered: a heap with the lowest on top. */
class Best {
  constructor(n) {
    this.n = n;
    this.size = 0;
    this.slotsHeld = new Int32Array(n);
    this.scores = new Int32Array(n);
  }

  /** The score to beat: the lowest kept once `n` are (before, the lowest there is). */
  threshold() {
    return this.size === this.n && this.n > 0 ? this.scores[0] : -(2 ** 31);
  }

  /** Whether `score` would be kept. */
  takes(score) {
    return this.size < this.n || (this.n > 0 && score > this.scores[0]);
  }

  offer(slot, score) {
    if (this.size === this.n) {
      this.sink(slot, score);
      return;
    }
    let i = this.size++;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (this.scores[parent] <= score) break;
      this.slotsHeld[i] = this.slotsHeld[parent];
      this.scores[i] = this.scores[parent];
      i = parent;
    }
    this.slotsHeld[i] = slot;
    this.scores[i] = score;
  }

  /** Replaces the lowest with (slot, score) and restores the heap. */
  sink(slot, score) {
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= this.size) break;
      const right = left + 1;
      const child = right < this.size && this.scores[right] < this.scores[left] ? right : left;
      if (this.scores[child] >= score) break;
      this.slotsHeld[i] = this.slotsHeld[child];
      this.scores[i] = this.scores[child];
      i = child;
    }
    this.slotsHeld[i] = slot;
    this.scores[i] = score;
  }

  /** The slots, in no order. */
  slots() {
    return this.slotsHeld.subarray(0, this.size);
  }
}
