// One term's postings in memory: chunk ordinals, ascending, with the term's frequency in each, and
// what bounds the impact of any of them, whatever the BM25 parameters (impact rises with the
// frequency and falls with the length): the highest frequency and the shortest chunk, and once the
// list is long enough to be worth walking with care, the shortest chunk at each frequency, where the
// term's highest impacts lie. Searches bound what the term can add to a chunk from those (topK.ts).
import { seekOrdinal } from '../../ordinals.js';
import { type Bm25Parameters, impact } from './bounds.js';

/** Frequencies whose shortest chunk is kept one by one; above, the overall shortest covers them. */
export const TRACKED_TF = 15;
/** Lists shorter than this keep only the overall bound (most of a vocabulary holds few postings). */
const TRACKED_FROM = 64;
const NO_CHUNK = 0x7fffffff;

export class PostingList {
  ordinals: Int32Array;
  tfs: Uint16Array;
  size = 0;
  /** The highest frequency and the shortest chunk among the postings (dead ones too). */
  private maxTf = 0;
  private minLength = NO_CHUNK;
  /**
   * shortest[tf]: the shortest chunk with that frequency, for tf ≤ TRACKED_TF (NO_CHUNK: none), and
   * at TRACKED_TF + 1 the shortest above; null while the list is short.
   */
  private shortest: Int32Array | null = null;

  constructor(capacity = 2) {
    this.ordinals = new Int32Array(capacity);
    this.tfs = new Uint16Array(capacity);
  }

  /** A list over postings already read (views are copied out when the list grows); `lengths` by ordinal. */
  static over(ordinals: Int32Array, tfs: Uint16Array, lengths: Int32Array): PostingList {
    const list = new PostingList(0);
    list.ordinals = ordinals;
    list.tfs = tfs;
    list.size = ordinals.length;
    list.noteAll(lengths);
    return list;
  }

  /** Appends a posting; `ordinal` is above every ordinal the list holds; `lengths` by ordinal. */
  append(ordinal: number, tf: number, lengths: Int32Array): void {
    if (this.size === this.ordinals.length) {
      this.ordinals = grown(this.ordinals, this.size * 2);
      this.tfs = grown(this.tfs, this.size * 2);
    }
    this.ordinals[this.size] = ordinal;
    this.tfs[this.size++] = tf;
    if (this.size === TRACKED_FROM) this.noteAll(lengths);
    else this.note(tf, lengths[ordinal]);
  }

  /** At least the impact of any posting with frequency `tf` (≤ TRACKED_TF). */
  mostAt(tf: number, parameters: Bm25Parameters): number {
    if (this.shortest) return this.shortest[tf] === NO_CHUNK ? 0 : impact(tf, this.shortest[tf], parameters);
    return tf > this.maxTf ? 0 : impact(tf, this.minLength, parameters);
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

export type TypedArray = Int32Array | Uint16Array | Uint8Array;

export function grown<T extends TypedArray>(array: T, size: number): T {
  const next = new (array.constructor as new (n: number) => T)(Math.max(size, 2));
  next.set(array);
  return next;
}
