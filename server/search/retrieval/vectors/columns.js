// Int8 codes held by column, for scanning queries with few nonzero components: such a query's
// scores need only its own columns, so a scan reads a tenth of the codes or less (the built-in
// hashing embedder's 2-4 word queries set fewer than 40 of 384 components). The columns live in the
// codes' WebAssembly memory (codeMemory.js), whose SIMD loop does the sums (codes.wat). A scan long
// enough is shared with helper threads (helpers.js): its cost grows with the set, and at a million
// vectors it is milliseconds of one core. Plain JavaScript, loaded by the vectors' worker and its
// helpers.
import { Best } from './best.js';
import { above, allocate, memory, release } from './codeMemory.js';
import { NOT_JOINED, scanHelpers, scanPieces } from './helpers.js';

/**
 * Bytes between the end of a column's rows and the next column: columns a power of two apart would
 * all fall into the same cache sets and evict each other as a scan reads them side by side.
 */
const PAD = 64;

/**
 * Rows the SIMD loop sums in one call, a multiple of 16. Until the best n are found, every row
 * comes back: in steps, the threshold rises after the first few thousand rows instead of after a
 * whole block's 65,536 (which at 100,000 vectors doubled a scan).
 */
const STEP_ROWS = 4096;

/** Codes a piece of a shared scan reads: some 0.1 ms of one core here. */
const PIECE_BYTES = 2 ** 20;

/** A scan's scratch: a query's column pairs (two addresses each), their weights (two i16 each), a block's rows above the threshold (two i32 each) and a group of sixteen sums. */
function scratchFor(dimension, rows) {
  const pairs = Math.ceil(dimension / 2);
  const [cols, weights, list, group] = [8 * pairs, 4 * pairs, 8 * rows, 64].map((bytes) => allocate(bytes));
  return { cols, weights, list, group, bytes: [8 * pairs, 4 * pairs, 8 * rows, 64] };
}

function releaseScratch(scratch) {
  [scratch.cols, scratch.weights, scratch.list, scratch.group].forEach((at, i) => {
    release(at, scratch.bytes[i]);
  });
}

/**
 * Offers to `top` the slots in [from, to) (`from` a multiple of 16) whose codes are held, each with
 * its codes' inner product with `query`, where it would be kept. `layout`: where the set's blocks
 * are (ColumnCodes); `scratch`: memory of this thread's own (scratchFor).
 */
function scanRange({ blocks, stride, rows, dimension }, query, from, to, top, scratch) {
  const { cols, weights, list, group } = scratch;
  const nonzero = [];
  for (let c = 0; c < dimension; c++) if (query[c] !== 0) nonzero.push(c);
  // An odd one out is paired with itself at weight 0.
  const pairs = Math.ceil(nonzero.length / 2);
  const words = new Int32Array(memory.buffer);
  const bytes = new Uint8Array(memory.buffer);
  for (let p = 0; p < pairs; p++) {
    const second = 2 * p + 1 < nonzero.length;
    words[(weights >> 2) + p] = (query[nonzero[2 * p]] & 0xffff) | ((second ? query[nonzero[2 * p + 1]] : 0) << 16);
  }
  for (let b = Math.floor(from / rows); b * rows < to; b++) {
    const end = Math.min(to - b * rows, rows);
    for (let first = Math.max(from - b * rows, 0); first < end; first += STEP_ROWS) {
      const used = Math.min(end - first, STEP_ROWS);
      for (let p = 0; p < pairs; p++) {
        const a = nonzero[2 * p];
        const c = 2 * p + 1 < nonzero.length ? nonzero[2 * p + 1] : a;
        words[(cols >> 2) + 2 * p] = blocks[b] + a * stride + first;
        words[(cols >> 2) + 2 * p + 1] = blocks[b] + c * stride + first;
      }
      // Only rows that would beat the lowest of the best so far come back.
      const count = above(cols, weights, pairs, Math.ceil(used / 16) * 16, top.threshold(), list, group);
      const held = blocks[b] + dimension * stride + first;
      for (let i = 0; i < 2 * count; i += 2) {
        const row = words[(list >> 2) + i];
        const score = words[(list >> 2) + i + 1];
        if (row < used && bytes[held + row] === 1 && top.takes(score, b * rows + first + row)) top.offer(b * rows + first + row, score);
      }
    }
  }
}

/** Offers to `top` the slots of piece `p` of `scan` ({ layout, query, piece, to }; see best). */
export function scanPiece({ layout, query, piece, to }, p, top, scratch) {
  scanRange(layout, query, p * piece, Math.min(to, (p + 1) * piece), top, scratch);
}

/** A set's codes by column, in blocks of `rows` slots (as the worker's blocks). */
export class ColumnCodes {
  /** `splitBytes`: codes a scan reads at and above which helper threads may join it (at most `threads` - 1 of them). */
  constructor(dimension, rows, { threads = 1, splitBytes = Number.POSITIVE_INFINITY } = {}) {
    this.dimension = dimension;
    this.rows = rows;
    this.stride = rows + PAD;
    this.threads = threads;
    this.splitBytes = splitBytes;
    /**
     * Each block's offset in the memory: column c of block b starts at blocks[b] + c * stride, and
     * column `dimension` holds 1 for each slot whose codes are held (written and not cleared since).
     */
    this.blocks = [];
    this.scratch = scratchFor(dimension, rows);
    /** Scratch of each helper's own (made when first shared). */
    this.helperScratch = [];
    /** The next piece of a shared scan to claim, shared with the helpers. */
    this.next = new Int32Array(new SharedArrayBuffer(4));
    /** Scans that helpers joined. */
    this.shared = 0;
    // Started now, so that the first scan shared does not wait for them to load.
    if (Number.isFinite(splitBytes)) scanHelpers(threads - 1);
  }

  /** Writes the codes of `slot` from `codes[at..at + dimension]` (throws when the memory cannot grow). */
  write(slot, codes, at) {
    const b = Math.floor(slot / this.rows);
    while (this.blocks.length <= b) this.blocks.push(allocate((this.dimension + 1) * this.stride));
    const bytes = new Int8Array(memory.buffer);
    const first = this.blocks[b] + (slot % this.rows);
    for (let c = 0; c < this.dimension; c++) bytes[first + c * this.stride] = codes[at + c];
    bytes[first + this.dimension * this.stride] = 1;
  }

  /** Zeroes the codes of `slot`, which scans then leave out. */
  clear(slot) {
    const b = Math.floor(slot / this.rows);
    if (b >= this.blocks.length) return;
    const bytes = new Int8Array(memory.buffer);
    const first = this.blocks[b] + (slot % this.rows);
    for (let c = 0; c <= this.dimension; c++) bytes[first + c * this.stride] = 0;
  }

  /**
   * The `n` slots below `slots` whose held codes have the largest inner product with `query` (int8
   * codes of the query's direction), in no order. A scan that reads at least `splitBytes`, when
   * `shared` allows it, is cut into pieces that this thread and the helpers claim in turn.
   */
  best(query, n, slots, shared = true) {
    const layout = { blocks: this.blocks, stride: this.stride, rows: this.rows, dimension: this.dimension };
    const to = Math.min(slots, this.blocks.length * this.rows);
    let nonzero = 0;
    for (let c = 0; c < this.dimension; c++) if (query[c] !== 0) nonzero++;
    const helpers = shared && nonzero * to >= this.splitBytes ? scanHelpers(this.threads - 1) : [];
    const top = new Best(n);
    if (helpers.length === 0) {
      scanRange(layout, query, 0, to, top, this.scratch);
      return top.slots();
    }
    // Pieces of some PIECE_BYTES each: small enough that a thread waits little for another's last.
    const piece = Math.max(16, Math.ceil(PIECE_BYTES / Math.max(nonzero, 1) / 16) * 16);
    const scan = { layout, query, next: this.next, pieces: Math.ceil(to / piece), piece, to, n };
    Atomics.store(this.next, 0, 0);
    helpers.forEach((helper, i) => {
      this.helperScratch[i] ??= scratchFor(this.dimension, this.rows);
      helper.offer({ ...scan, scratch: this.helperScratch[i] });
    });
    scanPieces(scan, (p) => scanPiece(scan, p, top, this.scratch));
    let helped = false;
    for (const helper of helpers) {
      const found = helper.answer();
      // It failed with pieces claimed: the scan is made again here, alone.
      if (!found) return this.best(query, n, slots, false);
      helped ||= found !== NOT_JOINED;
      for (let j = 0; j < found.slots.length; j++) if (top.takes(found.scores[j], found.slots[j])) top.offer(found.slots[j], found.scores[j]);
    }
    if (helped) this.shared++;
    return top.slots();
  }

  /** Hands the set's memory back for sets made later. */
  release() {
    for (const at of this.blocks) release(at, (this.dimension + 1) * this.stride);
    for (const scratch of [this.scratch, ...this.helperScratch]) releaseScratch(scratch);
    this.blocks = [];
    this.helperScratch = [];
  }
}
