// One term's postings in memory: chunk ordinals, ascending, with the term's frequency in each, and
// what bounds the impact of any of them, whatever the BM25 parameters (impact rises with the
// frequency and falls with the length): the highest frequency and the shortest chunk, and once the
// list is long enough to be worth walking with care, the shortest chunk at each frequency, where the
// term's highest impacts lie. Searches bound what the term can add to a chunk from those (topK.ts).
//
// Two more things let a walk over a long list stay in the list's own arrays: each posting's chunk
// length, coarsened to a byte (lengthClass), so most postings that cannot reach the page are passed
// over without reading the chunk's length; and, for a term held by a large share of the chunks,
// its frequency by ordinal, so a chunk is looked up in that term's postings by one read instead of
// a search.
import { seekOrdinal } from '../../ordinals.js';
import { grown, sharedArray } from '../../sharedArrays.js';
import { type Bm25Parameters, impact } from './bounds.js';

/** Frequencies whose shortest chunk is kept one by one; above, the overall shortest covers them. */
export const TRACKED_TF = 15;
/** Lists shorter than this keep only the overall bound (most of a vocabulary holds few postings). */
const TRACKED_FROM = 64;
const NO_CHUNK = 0x7fffffff;
/** A list keeps its frequencies by ordinal once it holds this many postings and one chunk in DENSE_SHARE. */
const DENSE_FROM = 1024;
const DENSE_SHARE = 8;
/** In the frequencies by ordinal: the frequency is this or more, read it from the postings. */
const DENSE_CAP = 255;

/** Classes below this are the length itself. */
export const EXACT_CLASSES = 128;

/**
 * A byte that grows with a chunk's length: the length itself up to 127, then 16 steps per doubling
 * (up to about 31,000 words; longer chunks share 255). A bound on length is a bound on class.
 */
export function lengthClass(length: number): number {
  if (length < EXACT_CLASSES) return Math.max(0, length);
  return Math.min(255, 128 + Math.floor((Math.log2(length) - 7) * 16));
}

/** A length no longer than any of class `c` (its shortest, or a little shorter: room for rounding in lengthClass). */
export function shortestOfClass(c: number): number {
  return c < EXACT_CLASSES ? c : Math.floor(2 ** (7 + (c - EXACT_CLASSES) / 16)) - 1;
}

/** A list's arrays and bounds, as handed to a helper thread (the arrays shared, not copied): PostingList.from. */
export interface PostingListState {
  ordinals: Int32Array;
  tfs: Uint16Array;
  classes: Uint8Array;
  size: number;
  dense: Uint8Array | null;
  maxTf: number;
  minLength: number;
  shortest: Int32Array | null;
}

export class PostingList {
  ordinals: Int32Array;
  tfs: Uint16Array;
  /** lengthClass of each posting's chunk. */
  classes: Uint8Array;
  size = 0;
  /** The frequency by ordinal (0: not held; DENSE_CAP: that or more), for a list holding a large share of the chunks; else null. */
  private dense: Uint8Array | null = null;
  /** The highest frequency and the shortest chunk among the postings (dead ones too). */
  private maxTf = 0;
  private minLength = NO_CHUNK;
  /**
   * shortest[tf]: the shortest chunk with that frequency, for tf ≤ TRACKED_TF (NO_CHUNK: none), and
   * at TRACKED_TF + 1 the shortest above; null while the list is short.
   */
  private shortest: Int32Array | null = null;

  constructor(capacity = 2) {
    this.ordinals = sharedArray(Int32Array, capacity);
    this.tfs = sharedArray(Uint16Array, capacity);
    this.classes = sharedArray(Uint8Array, capacity);
  }

  /** The list as `state` describes it: on a helper thread, over the arrays this thread shared. */
  static from(state: PostingListState): PostingList {
    const list = new PostingList(0);
    Object.assign(list, state);
    return list;
  }

  /** What `from` makes the list again from. */
  get state(): PostingListState {
    const { ordinals, tfs, classes, size, dense, maxTf, minLength, shortest } = this;
    return { ordinals, tfs, classes, size, dense, maxTf, minLength, shortest };
  }

  /** A list over postings already read (views are copied out when the list grows); `lengths` by ordinal. */
  static over(ordinals: Int32Array, tfs: Uint16Array, lengths: Int32Array): PostingList {
    const list = new PostingList(0);
    list.ordinals = ordinals;
    list.tfs = tfs;
    list.size = ordinals.length;
    list.classes = sharedArray(Uint8Array, list.size);
    for (let j = 0; j < list.size; j++) list.classes[j] = lengthClass(lengths[ordinals[j]]);
    list.noteAll(lengths);
    list.keepDenseIfWorth();
    return list;
  }

  /**
   * Appends a posting; `ordinal` is above every ordinal the list holds; `lengths` by ordinal.
   * Returns the bytes the list took beside its postings for it (extraBytes' growth).
   */
  append(ordinal: number, tf: number, lengths: Int32Array): number {
    if (this.size === this.ordinals.length) {
      this.ordinals = grown(this.ordinals, this.size * 2);
      this.tfs = grown(this.tfs, this.size * 2);
      this.classes = grown(this.classes, this.size * 2);
    }
    this.ordinals[this.size] = ordinal;
    this.tfs[this.size] = tf;
    this.classes[this.size++] = lengthClass(lengths[ordinal]);
    if (this.size === TRACKED_FROM) this.noteAll(lengths);
    else this.note(tf, lengths[ordinal]);
    const before = this.extraBytes;
    if (this.dense) {
      if (ordinal >= this.dense.length) this.dense = grown(this.dense, ordinal * 2);
      this.dense[ordinal] = Math.min(tf, DENSE_CAP);
    } else if ((this.size & (DENSE_FROM - 1)) === 0) this.keepDenseIfWorth();
    return this.extraBytes - before;
  }

  /** Bytes held beside the postings (the frequencies by ordinal). */
  get extraBytes(): number {
    return this.dense?.length ?? 0;
  }

  /**
   * The term's frequency in chunk `ordinal` (0: not held). Without the frequencies by ordinal, the
   * postings are searched from `cursor.at`, which is left at the first ordinal not below it: a
   * cursor asked for ascending ordinals moves forward only.
   */
  frequencyIn(ordinal: number, cursor: { at: number }): number {
    const dense = this.dense;
    if (dense !== null) {
      const tf = ordinal < dense.length ? dense[ordinal] : 0;
      if (tf < DENSE_CAP) return tf;
    }
    const at = (cursor.at = this.seek(cursor.at, ordinal));
    return at < this.size && this.ordinals[at] === ordinal ? this.tfs[at] : 0;
  }

  /** The frequencies by ordinal (0: not held; DENSE_CAP: that or more), when the list keeps them; else null. */
  get byOrdinal(): Uint8Array | null {
    return this.dense;
  }

  /** The highest frequency among the postings (dead ones too). */
  get highestTf(): number {
    return this.maxTf;
  }

  /** At least the impact of any posting. */
  most(parameters: Bm25Parameters): number {
    if (!this.shortest) return impact(this.maxTf, this.minLength, parameters);
    let most = this.maxTf > TRACKED_TF ? impact(this.maxTf, this.shortest[TRACKED_TF + 1], parameters) : 0;
    for (let tf = 1; tf <= TRACKED_TF; tf++) if (this.shortest[tf] !== NO_CHUNK) most = Math.max(most, impact(tf, this.shortest[tf], parameters));
    return most;
  }

  /** The first position from `from` on whose ordinal is at least `ordinal`. */
  seek(from: number, ordinal: number): number {
    return seekOrdinal(this.ordinals, this.size, from, ordinal);
  }

  /** Keeps the frequencies by ordinal once the list is long and holds a large share of the chunks so far. */
  private keepDenseIfWorth(): void {
    if (this.size < DENSE_FROM) return;
    const last = this.ordinals[this.size - 1];
    if (this.size * DENSE_SHARE <= last) return;
    const dense = sharedArray(Uint8Array, last + 1);
    for (let j = 0; j < this.size; j++) dense[this.ordinals[j]] = Math.min(this.tfs[j], DENSE_CAP);
    this.dense = dense;
  }

  private note(tf: number, length: number): void {
    if (tf > this.maxTf) this.maxTf = tf;
    if (length < this.minLength) this.minLength = length;
    if (!this.shortest) return;
    const at = Math.min(tf, TRACKED_TF + 1);
    if (length < this.shortest[at]) this.shortest[at] = length;
  }

  private noteAll(lengths: Int32Array): void {
    if (this.size >= TRACKED_FROM) this.shortest = new Int32Array(TRACKED_TF + 2).fill(NO_CHUNK);
    for (let j = 0; j < this.size; j++) this.note(this.tfs[j], lengths[this.ordinals[j]]);
  }
}
