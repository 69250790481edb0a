// Codes held by column, for scanning queries with few nonzero components: such a query's scores
// need only its own columns, so a scan reads a tenth of the codes or less (the built-in hashing
// embedder's 2-4 word queries set fewer than 40 of 384 components). The columns live in the codes'
// WebAssembly memory (codeMemory.js), whose SIMD loops do the sums (codes.wat). A scan long enough
// is shared with helper threads (helpers.js): its cost grows with the set, and at a million vectors
// it is milliseconds of one core, most of it waiting on memory.
//
// So a block is sealed once its last row is written (rows are written in order): its int8 codes
// become 4-bit codes, half the bytes to read, each column in steps of a seventh of its largest
// code in the block. No code is clamped, and a column's steps follow its own spread: one scale for
// every vector missed many of the true neighbours of either random directions or the built-in
// embedder's, whose components are heavy-tailed (bench/README.md). A sealed block's sums are
// estimates of the int8 sums, within half a step a column; the open block's are exact. The caller
// ranks the candidates exactly (worker.js asks for more of them). Plain JavaScript, loaded by the
// vectors' worker and its helpers.
import { Best } from './best.js';
import { above, allocate, memory, nibblesAbove, release } from './codeMemory.js';
import { close } from './handoff.js';
import { NOT_JOINED, scanHelpers, scanPieces } from './helpers.js';

/**
 * Bytes between the end of a column's rows and the next column: columns a power of two apart would
 * all fall into the same cache sets and evict each other as a scan reads them side by side.
 */
const PAD = 64;

/**
 * Rows the SIMD loops sum in one call, a multiple of 32. Until the best n are found, every row
 * comes back: in steps, the threshold rises after the first few thousand rows instead of after a
 * whole block's 65,536 (which at 100,000 vectors doubled a scan).
 */
const STEP_ROWS = 4096;

/** Rows of a sealed block in 16 bytes of a column (codes.wat, nibblesAbove), and the 4-bit code of 0. */
const NIBBLE_GROUP = 32;
const NIBBLE_ZERO = 8;
/** A sealed column's largest code, in steps: codes -7..7 stored as 1..15. */
const NIBBLE_STEPS = 7;
/** The most a sealed block's sum of weights may be (in magnitude), so that 15 times it fits an i16. */
const NIBBLE_WEIGHTS = Math.floor(32_767 / 15);

/** Codes a piece of a shared scan reads: some 0.1 ms of one core here. */
const PIECE_BYTES = 2 ** 20;

/**
 * A scan's scratch: a query's column pairs (two addresses each) or columns (one), their weights (two
 * i16 a pair, or one a column), a block's rows above the threshold (two i32 each) and a group of
 * sixteen i32 or 32 i16 sums.
 */
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
 * What a scan for `query` sums, block by block ({ nonzero, pairWeights, sealed }): its nonzero
 * columns; their int8 weights in pairs, two i16 in an i32 (an odd one out paired with itself at
 * weight 0), for open blocks; for each sealed block, each column's weight (its step times the
 * query's code, times one gain for every block so that the sums fit an i16, rounded toward zero), the
 * sum of a zero row (offset) and that gain: a block's sum less its offset, over the gain, estimates
 * the int8 sum. `steps`: each block's (ColumnCodes.steps).
 */
function planOf(steps, query) {
  const nonzero = [];
  for (let c = 0; c < query.length; c++) if (query[c] !== 0) nonzero.push(c);
  const pairs = Math.ceil(nonzero.length / 2);
  const pairWeights = new Int32Array(pairs);
  for (let p = 0; p < pairs; p++) {
    const second = 2 * p + 1 < nonzero.length;
    pairWeights[p] = (query[nonzero[2 * p]] & 0xffff) | ((second ? query[nonzero[2 * p + 1]] : 0) << 16);
  }
  let largest = 0;
  for (const block of steps) {
    if (!block) continue;
    let weights = 0;
    for (const c of nonzero) weights += Math.abs(query[c] * block[c]);
    largest = Math.max(largest, weights);
  }
  const gain = largest > 0 ? NIBBLE_WEIGHTS / largest : 1;
  const sealed = steps.map((block) => {
    if (!block) return null;
    const weights = Int16Array.from(nonzero, (c) => Math.trunc(query[c] * block[c] * gain));
    return { weights, offset: NIBBLE_ZERO * weights.reduce((sum, w) => sum + w, 0), gain };
  });
  return { nonzero, pairWeights, sealed };
}

/**
 * Offers to `top` the slots in [from, to) (`from` a multiple of 32) whose codes are held, each with
 * its codes' inner product with the query (estimated in sealed blocks), where it would be kept.
 * `layout`: where the set's blocks are (ColumnCodes.layout); `plan`: planOf the query; `scratch`:
 * memory of this thread's own (scratchFor).
 */
function scanRange(layout, plan, from, to, top, scratch) {
  const { rows } = layout;
  for (let b = Math.floor(from / rows); b * rows < to; b++) {
    const end = Math.min(to - b * rows, rows);
    const first = Math.max(from - b * rows, 0);
    if (plan.sealed[b]) scanSealed(layout, plan, b, first, end, top, scratch);
    else scanOpen(layout, plan, b, first, end, top, scratch);
  }
}

/** scanRange over rows [first, end) of the open block `b`: its int8 codes, exact sums. */
function scanOpen({ blocks, stride, rows, dimension }, { nonzero, pairWeights }, b, first, end, top, scratch) {
  const { cols, weights, list, group } = scratch;
  const words = new Int32Array(memory.buffer);
  const bytes = new Uint8Array(memory.buffer);
  words.set(pairWeights, weights >> 2);
  for (let at = first; at < end; at += STEP_ROWS) {
    const used = Math.min(end - at, STEP_ROWS);
    for (let p = 0; p < pairWeights.length; p++) {
      const a = nonzero[2 * p];
      const c = 2 * p + 1 < nonzero.length ? nonzero[2 * p + 1] : a;
      words[(cols >> 2) + 2 * p] = blocks[b] + a * stride + at;
      words[(cols >> 2) + 2 * p + 1] = blocks[b] + c * stride + at;
    }
    // Only rows that would beat the lowest of the best so far come back.
    const count = above(cols, weights, pairWeights.length, Math.ceil(used / 16) * 16, top.threshold(), list, group);
    const held = blocks[b] + dimension * stride + at;
    for (let i = 0; i < 2 * count; i += 2) {
      const row = words[(list >> 2) + i];
      const score = words[(list >> 2) + i + 1];
      if (row < used && bytes[held + row] === 1 && top.takes(score, b * rows + at + row)) top.offer(b * rows + at + row, score);
    }
  }
}

/** scanRange over rows [first, end) of the sealed block `b`: its 4-bit codes, estimated sums. */
function scanSealed({ blocks, nibbleStride, rows, dimension }, { nonzero, sealed }, b, first, end, top, scratch) {
  const { cols, weights, list, group } = scratch;
  const { weights: blockWeights, offset, gain } = sealed[b];
  const words = new Int32Array(memory.buffer);
  const bytes = new Uint8Array(memory.buffer);
  new Int16Array(memory.buffer).set(blockWeights, weights >> 1);
  for (let at = first; at < end; at += STEP_ROWS) {
    const used = Math.min(end - at, STEP_ROWS);
    for (let k = 0; k < nonzero.length; k++) words[(cols >> 2) + k] = blocks[b] + nonzero[k] * nibbleStride + at / 2;
    // Below the sum of any row whose estimate rounds to the lowest of the best so far: every row the
    // heap could take comes back, whatever the threshold was when its piece was scanned.
    const threshold = Math.min(Math.max(Math.floor((top.threshold() - 0.5) * gain + offset) - 1, -32_768), 32_767);
    const count = nibblesAbove(cols, weights, nonzero.length, Math.ceil(used / NIBBLE_GROUP) * NIBBLE_GROUP, threshold, list, group);
    const held = blocks[b] + dimension * nibbleStride + at;
    for (let i = 0; i < 2 * count; i += 2) {
      const row = words[(list >> 2) + i];
      const score = Math.round((words[(list >> 2) + i + 1] - offset) / gain);
      if (row < used && bytes[held + row] === 1 && top.takes(score, b * rows + at + row)) top.offer(b * rows + at + row, score);
    }
  }
}

/** Offers to `top` the slots of piece `p` of `scan` ({ layout, plan, piece, to }; see best). */
export function scanPiece({ layout, plan, piece, to }, p, top, scratch) {
  scanRange(layout, plan, p * piece, Math.min(to, (p + 1) * piece), top, scratch);
}

/** A set's codes by column, in blocks of `rows` slots (as the worker's blocks). */
export class ColumnCodes {
  /**
   * `rows`: a block's, a multiple of 32. `splitBytes`: codes a scan reads (a byte each, sealed or
   * not) at and above which helper threads may join it (at most `threads` - 1 of them).
   */
  constructor(dimension, rows, { threads = 1, splitBytes = Number.POSITIVE_INFINITY } = {}) {
    this.dimension = dimension;
    this.rows = rows;
    this.stride = rows + PAD;
    this.nibbleStride = rows / 2 + PAD;
    this.threads = threads;
    this.splitBytes = splitBytes;
    /**
     * Each block's offset in the memory. Open, column c of block b starts at blocks[b] + c * stride,
     * a byte a row; sealed (steps[b] set), at blocks[b] + c * nibbleStride, 16 bytes a group of 32
     * rows (codes.wat). Column `dimension` holds a byte a row: 1 for each slot whose codes are held
     * (written and not cleared since).
     */
    this.blocks = [];
    /** Each sealed block's step by column (a Float64Array), in int8 codes; null for an open block. */
    this.steps = [];
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

  /** Where the set's blocks are, for a scan (scanRange). */
  get layout() {
    const { blocks, stride, nibbleStride, rows, dimension } = this;
    return { blocks, stride, nibbleStride, rows, dimension };
  }

  /** Whether some block is sealed: a scan's sums are then estimates, which the caller ranks exactly. */
  get estimates() {
    return this.steps.some((steps) => steps !== null);
  }

  /**
   * Writes the codes of `slot` from `codes[at..at + dimension]`. Slots are written in order: a block
   * is sealed once its last row is written, or once a later block is (a restored set does not
   * write its removed slots). Throws a RangeError when the memory cannot grow.
   */
  write(slot, codes, at) {
    const b = Math.floor(slot / this.rows);
    while (this.blocks.length <= b) {
      const last = this.blocks.length - 1;
      if (last >= 0 && !this.steps[last]) this.seal(last);
      this.blocks.push(allocate((this.dimension + 1) * this.stride));
      this.steps.push(null);
    }
    const row = slot % this.rows;
    if (this.steps[b]) {
      this.writeSealed(b, row, codes, at);
      return;
    }
    const bytes = new Int8Array(memory.buffer);
    const first = this.blocks[b] + row;
    for (let c = 0; c < this.dimension; c++) bytes[first + c * this.stride] = codes[at + c];
    bytes[first + this.dimension * this.stride] = 1;
    if (row === this.rows - 1) this.seal(b);
  }

  /** Zeroes the codes of `slot` (in a sealed block, its held mark alone), which scans then leave out. */
  clear(slot) {
    const b = Math.floor(slot / this.rows);
    if (b >= this.blocks.length) return;
    const row = slot % this.rows;
    if (this.steps[b]) {
      new Uint8Array(memory.buffer)[this.blocks[b] + this.dimension * this.nibbleStride + row] = 0;
      return;
    }
    const bytes = new Int8Array(memory.buffer);
    const first = this.blocks[b] + row;
    for (let c = 0; c <= this.dimension; c++) bytes[first + c * this.stride] = 0;
  }

  /**
   * Codes the open block `b` in 4 bits, each column in steps of a seventh of its largest code, and
   * hands its int8 codes back. Kept open when the memory cannot grow.
   */
  seal(b) {
    const { dimension, rows, stride, nibbleStride } = this;
    let sealed;
    try {
      sealed = allocate(dimension * nibbleStride + rows);
    } catch (error) {
      if (error instanceof RangeError) return;
      throw error;
    }
    const codes = new Int8Array(memory.buffer);
    const bytes = new Uint8Array(memory.buffer);
    const open = this.blocks[b];
    const steps = new Float64Array(dimension);
    /** A column's 4-bit code of each int8 code, by the code's byte. */
    const nibble = new Uint8Array(256);
    for (let c = 0; c < dimension; c++) {
      const column = open + c * stride;
      let largest = 0;
      for (let r = 0; r < rows; r++) {
        const code = codes[column + r];
        if (code > largest) largest = code;
        else if (-code > largest) largest = -code;
      }
      steps[c] = largest > 0 ? largest / NIBBLE_STEPS : 1;
      for (let code = -128; code < 128; code++) nibble[code & 0xff] = nibbleOf(code, steps[c]);
      // Each 32 rows in 16 bytes, as nibbleAt places them.
      for (let from = column, to = sealed + c * nibbleStride; from < column + rows; from += NIBBLE_GROUP, to += NIBBLE_GROUP / 2) {
        for (let j = 0; j < 8; j++) {
          bytes[to + 2 * j] = nibble[bytes[from + j]] | (nibble[bytes[from + 8 + j]] << 4);
          bytes[to + 2 * j + 1] = nibble[bytes[from + 16 + j]] | (nibble[bytes[from + 24 + j]] << 4);
        }
      }
    }
    bytes.copyWithin(sealed + dimension * nibbleStride, open + dimension * stride, open + dimension * stride + rows);
    release(open, (dimension + 1) * stride);
    this.blocks[b] = sealed;
    this.steps[b] = steps;
  }

  /** Writes row `row` of the sealed block `b` from `codes[at..]`, in its steps (a code beyond them taken as the largest). */
  writeSealed(b, row, codes, at) {
    const nibbles = new Uint8Array(memory.buffer);
    const shift = nibbleShift(row);
    for (let c = 0; c < this.dimension; c++) {
      const to = this.blocks[b] + c * this.nibbleStride + nibbleAt(row);
      nibbles[to] = (nibbles[to] & ~(0xf << shift)) | (nibbleOf(codes[at + c], this.steps[b][c]) << shift);
    }
    nibbles[this.blocks[b] + this.dimension * this.nibbleStride + row] = 1;
  }

  /**
   * The `n` slots below `slots` whose held codes have the largest inner product with `query` (int8
   * codes of the query's direction; estimated in sealed blocks), in no order. A scan that reads at
   * least `splitBytes`, when `shared` allows it, is cut into pieces that this thread and the helpers
   * claim in turn; when it does not, but a keyword list's hand-off (handoff.js) is given, the
   * helpers join once the list is delivered, and the hand-off is closed when the pieces are done.
   */
  best(query, n, slots, shared = true, handoff = null) {
    const layout = this.layout;
    const plan = planOf(this.steps, query);
    const to = Math.min(slots, this.blocks.length * this.rows);
    const nonzero = plan.nonzero.length;
    const helpers = (shared || handoff) && nonzero * to >= this.splitBytes ? scanHelpers(this.threads - 1) : [];
    const top = new Best(n);
    if (helpers.length === 0) {
      scanRange(layout, plan, 0, to, top, this.scratch);
      return top.slots();
    }
    // Pieces of some PIECE_BYTES each: small enough that a thread waits little for another's last.
    const piece = Math.max(NIBBLE_GROUP, Math.ceil(PIECE_BYTES / Math.max(nonzero, 1) / NIBBLE_GROUP) * NIBBLE_GROUP);
    const scan = { layout, plan, next: this.next, pieces: Math.ceil(to / piece), piece, to, n };
    Atomics.store(this.next, 0, 0);
    helpers.forEach((helper, i) => {
      this.helperScratch[i] ??= scratchFor(this.dimension, this.rows);
      helper.offer({ ...scan, scratch: this.helperScratch[i], handoff: shared ? null : handoff });
    });
    try {
      scanPieces(scan, (p) => scanPiece(scan, p, top, this.scratch));
    } finally {
      // A helper still waiting for the keyword list has nothing left to join.
      if (handoff) close(handoff);
    }
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
    this.blocks.forEach((at, b) => {
      release(at, this.steps[b] ? this.dimension * this.nibbleStride + this.rows : (this.dimension + 1) * this.stride);
    });
    for (const scratch of [this.scratch, ...this.helperScratch]) releaseScratch(scratch);
    this.blocks = [];
    this.steps = [];
    this.helperScratch = [];
  }
}

/** The byte of a sealed column that holds row `row`'s code: in each 16 bytes, i16 lane j holds row 8n + j in its nibble n. */
function nibbleAt(row) {
  const i = row % NIBBLE_GROUP;
  return (row - i) / 2 + 2 * (i % 8) + (i >> 4);
}

/** Where in its byte (nibbleAt) row `row`'s code lies. */
function nibbleShift(row) {
  return 4 * ((row >> 3) & 1);
}

/** The 4-bit code (0..15, 8 for zero) of an int8 code in steps of `step`. */
function nibbleOf(code, step) {
  return Math.min(Math.max(Math.round(code / step), -NIBBLE_STEPS), NIBBLE_STEPS) + NIBBLE_ZERO;
}
