// One term's postings in memory: chunk ordinals, ascending, with the term's frequency in each, and
// per frequency the shortest chunk having it: where the term's highest impacts lie, whatever the BM25
// parameters (impact rises with the frequency and falls with the length). Searches bound what the
// term can add to a chunk from those (topK.ts).
import { type Bm25Parameters, impact } from './bounds.js';

/** Frequencies whose shortest chunk is kept one by one; above, one shortest covers them all. */
export const TRACKED_TF = 15;
const NO_CHUNK = 0x7fffffff;

export class PostingList {
  ordinals: Int32Array;
  tfs: Uint16Array;
  size = 0;
  /** shortest[tf]: the shortest chunk with that frequency, for tf ≤ TRACKED_TF, dead ones too (NO_CHUNK: none). */
  private readonly shortest = new Int32Array(TRACKED_TF + 1).fill(NO_CHUNK);
  /** Above TRACKED_TF: the highest frequency, and the shortest chunk among those postings. */
  private maxTf = 0;
  private shortestAbove = NO_CHUNK;

  constructor(capacity = 2) {
    this.ordinals = new Int32Array(capacity);
    this.tfs = new Uint16Array(capacity);
  }

  /** A list over postings already read (views are copied out when the list grows). */
  static over(ordinals: Int32Array, tfs: Uint16Array, lengths: Int32Array): PostingList {
    const list = new PostingList(0);
    list.ordinals = ordinals;
    list.tfs = tfs;
    list.size = ordinals.length;
    for (let j = 0; j < ordinals.length; j++) list.note(tfs[j], lengths[ordinals[j]]);
    return list;
  }

  /** Appends a posting; `ordinal` is above every ordinal the list holds. */
  append(ordinal: number, tf: number, length: number): void {
    if (this.size === this.ordinals.length) {
      this.ordinals = grown(this.ordinals, this.size * 2);
      this.tfs = grown(this.tfs, this.size * 2);
    }
    this.ordinals[this.size] = ordinal;
    this.tfs[this.size++] = tf;
    this.note(tf, length);
  }

  /** The most impact a posting with frequency `tf` (at most TRACKED_TF) has. */
  mostAt(tf: number, parameters: Bm25Parameters): number {
    return this.shortest[tf] === NO_CHUNK ? 0 : impact(tf, this.shortest[tf], parameters);
  }

  /** The most impact any of the postings has. */
  most(parameters: Bm25Parameters): number {
    let most = this.maxTf > TRACKED_TF ? impact(this.maxTf, this.shortestAbove, parameters) : 0;
    for (let tf = 1; tf <= TRACKED_TF; tf++) if (this.shortest[tf] !== NO_CHUNK) most = Math.max(most, impact(tf, this.shortest[tf], parameters));
    return most;
  }

  /** The first position from `from` on whose ordinal is at least `ordinal` (galloping, then halving). */
  seek(from: number, ordinal: number): number {
    const { ordinals, size } = this;
    if (from >= size || ordinals[from] >= ordinal) return from;
    let low = from;
    let step = 1;
    while (low + step < size && ordinals[low + step] < ordinal) {
      low += step;
      step *= 2;
    }
    let high = Math.min(low + step, size);
    // ordinals[low] < ordinal; the answer lies in (low, high].
    while (high - low > 1) {
      const mid = (low + high) >>> 1;
      if (ordinals[mid] < ordinal) low = mid;
      else high = mid;
    }
    return high;
  }

  private note(tf: number, length: number): void {
    if (tf <= TRACKED_TF) {
      if (length < this.shortest[tf]) this.shortest[tf] = length;
      return;
    }
    if (tf > this.maxTf) this.maxTf = tf;
    if (length < this.shortestAbove) this.shortestAbove = length;
  }
}

export type TypedArray = Int32Array | Uint16Array | Uint8Array;

export function grown<T extends TypedArray>(array: T, size: number): T {
  const next = new (array.constructor as new (n: number) => T)(Math.max(size, 2));
  next.set(array);
  return next;
}
