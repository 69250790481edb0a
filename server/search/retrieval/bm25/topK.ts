// A page of BM25 results from a dataset's in-memory postings (memory.ts), exactly as scoring every
// posting would give it, reading few of them (MaxScore, document at a time). The lists are ordered by
// the most each can add (postingList.ts); those whose most adds up to less than the page's k-th
// score so far (the floor) cannot bring a chunk onto the page on their own, so only the others
// ("essential") are walked, and the rest looked into for the chunks those bring, while the chunk can
// still reach the floor. Once one list is left to walk, its postings whose frequency and length
// class (postingList.ts) cannot reach the floor are passed over without reading the chunk; when the
// list looked into next keeps its frequencies by ordinal, the two frequencies and the chunk's class
// pass over most of the rest before a score is computed (at a million chunks, most of a walk of 100
// went to looking up chunks that could not reach the floor).
import { type Bm25Parameters, MAX_LENGTH, impact, longestReaching } from './bounds.js';
import { EXACT_CLASSES, type PostingList, TRACKED_TF, lengthClass, shortestOfClass } from './postingList.js';
import { ID_WORDS, idAfter } from '../../chunkIdWords.js';

/** A chunk by ordinal, and its score. */
export interface Ranked {
  ordinal: number;
  score: number;
}

/** What the walk reads of a chunk by ordinal. */
export interface ChunkTable {
  /** Each ordinal's id as words (chunkIdWords.js). */
  idWords: Int32Array;
  /** 0 for a chunk the walk may take; 1 (or beyond its end) for one it passes over: dead, or failing a filter. */
  skipped: Uint8Array;
  lengths: Int32Array;
}

/** A term's posting list as the walk reads it. */
interface Cursor {
  /** The term's position in the query. */
  term: number;
  list: PostingList;
  weight: number;
  /** The most the term can add to a chunk's score. */
  most: number;
  at: number;
  /** Where the walk's range of ordinals ends in the list. */
  end: number;
}

/** Relative room for rounding when a bound is compared with a score (a bound and a sum are added in different orders). */
const ROUNDING = 1e-9;
const NONE = 0x7fffffff;
/** A class bound not found yet. */
const UNKNOWN = 0x7fff;

/** Chunk ordinals from `from` up to `to` (not included). */
export interface OrdinalRange {
  from: number;
  to: number;
}

export const EVERY_ORDINAL: OrdinalRange = { from: 0, to: NONE };

/** What a walk ranks: `lists[t]` (null: no chunk holds the term) weighed by `weights[t]` ≥ 0. */
export interface Walk {
  lists: (PostingList | null)[];
  weights: number[];
  chunks: ChunkTable;
  parameters: Bm25Parameters;
  k: number;
  least: number;
}

/**
 * The best `k` chunks not skipped holding one of the lists' terms that score at least `least`, best
 * first, ties by chunk id. Only the chunks of `range` are taken.
 */
export function topK({ lists, weights, chunks, parameters, k, least }: Walk, range: OrdinalRange = EVERY_ORDINAL): Ranked[] {
  if (k <= 0) return [];
  const best = new BestK(k, chunks.idWords);
  const cursors: Cursor[] = [];
  lists.forEach((list, t) => {
    if (!list || list.size === 0) return;
    const at = list.seek(0, range.from);
    const end = list.seek(at, range.to);
    // The bound stays the whole list's: a range's own would cost a pass over its postings.
    if (at < end) cursors.push({ term: t, list, weight: weights[t], most: weights[t] * list.most(parameters), at, end });
  });
  // Least first; among equals, the longest list first, so it is the one left out of the walk.
  cursors.sort((x, y) => x.most - y.most || y.list.size - x.list.size);
  // upTo[i]: the most the lists 0..i add together.
  const upTo = new Float64Array(cursors.length);
  cursors.forEach((c, i) => {
    upTo[i] = (i > 0 ? upTo[i - 1] : 0) + c.most;
  });
  const { k1, b, averageLength } = parameters;
  const { skipped, lengths } = chunks;
  const parts = new Float64Array(lists.length);
  // A chunk must reach `floor` to enter; lists before `walked` cannot bring one there on their own.
  let floor = least;
  // What a bound must reach: the floor less room for rounding, kept as the floor moves.
  let bar = 0;
  const setFloor = (to: number) => {
    floor = to;
    bar = to - Math.abs(to) * ROUNDING;
  };
  setFloor(least);
  const reaches = (bound: number) => bound >= bar;
  let walked = 0;
  while (walked < cursors.length && !reaches(upTo[walked])) walked++;

  for (;;) {
    if (walked === cursors.length - 1) {
      walkOne();
      break;
    }
    let d = NONE;
    for (let i = walked; i < cursors.length; i++) {
      const c = cursors[i];
      if (c.at < c.end && c.list.ordinals[c.at] < d) d = c.list.ordinals[c.at];
    }
    if (d === NONE) break;
    const live = skipped[d] === 0;
    const norm = k1 * (1 - b + (b * lengths[d]) / averageLength);
    let partial = 0;
    for (let i = walked; i < cursors.length; i++) {
      const c = cursors[i];
      if (c.at < c.end && c.list.ordinals[c.at] === d) {
        if (live) partial += parts[c.term] = (c.weight * c.list.tfs[c.at] * (k1 + 1)) / (c.list.tfs[c.at] + norm);
        c.at++;
      }
    }
    if (live) complete(d, partial, norm);
  }
  return best.ranked();

  /** The walk when one list is left to walk (the usual case once the page fills): a tight loop over it. */
  function walkOne(): void {
    const e = cursors[walked];
    const { ordinals, tfs, classes } = e.list;
    const essential = walked;
    const rest = essential > 0 ? upTo[essential - 1] : 0;
    // Per frequency up to TRACKED_TF, the highest length class whose postings may reach the floor
    // (-1: none can); a posting above it is passed over without reading its chunk.
    const highestClass = new Int16Array(TRACKED_TF + 1);
    const setHighestClasses = () => {
      const needed = (bar - rest) / e.weight;
      for (let tf = 1; tf <= TRACKED_TF; tf++) {
        const longest = needed > 0 ? longestReaching(tf, needed, parameters) : MAX_LENGTH;
        highestClass[tf] = longest < 0 ? -1 : lengthClass(longest);
      }
    };
    setHighestClasses();
    // The list looked into first, when it keeps its frequencies by ordinal: per frequency of the
    // walked term and of that one (0, 1, 2, or more: its highest), the highest class that may still
    // reach the floor, for the chunk's own length. Each is found when first asked for, and asked
    // again once the floor rose by a fiftieth (a lower floor's classes only let more through).
    const next = essential > 0 ? cursors[essential - 1] : null;
    const nextTfs = next?.list.byOrdinal ?? null;
    const pairClass = new Int16Array((TRACKED_TF + 1) << 2).fill(UNKNOWN);
    // The last class found for each: as the floor only rises, the next is no higher.
    const pairCeiling = new Int16Array((TRACKED_TF + 1) << 2).fill(255);
    let pairsFor = floor;
    const pairLimit = (tf: number, bucket: number): number => {
      const slot = (tf << 2) | bucket;
      const nextTf = bucket < 3 ? bucket : (next as Cursor).list.highestTf;
      const others = essential > 1 ? upTo[essential - 2] : 0;
      let low = -1;
      let high = Math.min(pairCeiling[slot], highestClass[tf]);
      while (low < high) {
        const mid = (low + high + 1) >> 1;
        const length = shortestOfClass(mid);
        // A term the chunk does not hold adds nothing (impact's formula gives 0/0 with k1 = 0).
        const nextPart = nextTf > 0 ? (next as Cursor).weight * impact(nextTf, length, parameters) : 0;
        if (reaches(e.weight * impact(tf, length, parameters) + nextPart + others)) low = mid;
        else high = mid - 1;
      }
      pairCeiling[slot] = low;
      pairClass[slot] = low;
      return low;
    };
    // The position in a local, not the cursor: this loop is the walk's hottest, and the walk ends with it.
    for (let at = e.at, end = e.end; at < end; at++) {
      const tf = tfs[at];
      const chunkClass = classes[at];
      if (tf <= TRACKED_TF && chunkClass > highestClass[tf]) continue;
      const d = ordinals[at];
      if (nextTfs !== null && tf <= TRACKED_TF) {
        const nextTf = d < nextTfs.length ? nextTfs[d] : 0;
        const bucket = nextTf < 3 ? nextTf : 3;
        const limit = pairClass[(tf << 2) | bucket];
        if (chunkClass > (limit === UNKNOWN ? pairLimit(tf, bucket) : limit)) continue;
      }
      if (skipped[d] !== 0) continue;
      const norm = k1 * (1 - b + (b * (chunkClass < EXACT_CLASSES ? chunkClass : lengths[d])) / averageLength);
      const part = (e.weight * tf * (k1 + 1)) / (tf + norm);
      if (!reaches(part + rest)) continue;
      parts[e.term] = part;
      const before = floor;
      complete(d, part, norm);
      if (walked > essential) return;
      if (floor !== before) {
        setHighestClasses();
        if (nextTfs && floor - pairsFor > Math.abs(pairsFor) * 0.02) {
          pairsFor = floor;
          pairClass.fill(UNKNOWN);
        }
      }
    }
  }

  /**
   * Looks chunk `d` up in the lists left out of the walk, the one that can add most first, while it
   * can still reach the floor, and offers it to the page if it can. `partial`: what the walked lists
   * add (in `parts`).
   */
  function complete(d: number, partial: number, norm: number): void {
    let reachable = true;
    for (let i = walked - 1; i >= 0; i--) {
      if (!reaches(partial + upTo[i])) {
        reachable = false;
        break;
      }
      const c = cursors[i];
      const tf = c.list.frequencyIn(d, c);
      if (tf > 0) partial += parts[c.term] = (c.weight * tf * (k1 + 1)) / (tf + norm);
    }
    if (reachable) {
      // Summed in the query's order, as scoring every posting sums: the same score to the last bit.
      let score = 0;
      for (let t = 0; t < parts.length; t++) score += parts[t];
      if (score >= least && best.offer(d, score) && best.full) {
        setFloor(Math.max(least, best.worstScore));
        while (walked < cursors.length && !reaches(upTo[walked])) walked++;
      }
    }
    // A loop, not fill(): a call a candidate cost more than the few terms it clears.
    for (let t = 0; t < parts.length; t++) parts[t] = 0;
  }
}

/** The best k chunks offered: a heap with the worst on top; lower score, then the larger id, is worse (ids as words by ordinal, chunkIdWords.js). */
export class BestK {
  private readonly ordinals: number[] = [];
  private readonly scores: number[] = [];

  constructor(
    private readonly k: number,
    private readonly idWords: Int32Array,
  ) {}

  get full(): boolean {
    return this.ordinals.length >= this.k;
  }

  get worstScore(): number {
    return this.scores[0];
  }

  /** Keeps the chunk if it is among the best k so far; true if it was kept. */
  offer(ordinal: number, score: number): boolean {
    if (this.k <= 0) return false;
    if (!this.full) {
      this.ordinals.push(ordinal);
      this.scores.push(score);
      this.up(this.ordinals.length - 1);
      return true;
    }
    if (!this.worse(this.ordinals[0], this.scores[0], ordinal, score)) return false;
    this.ordinals[0] = ordinal;
    this.scores[0] = score;
    this.down(0);
    return true;
  }

  /** Best first. */
  ranked(): Ranked[] {
    return this.ordinals
      .map((ordinal, i) => ({ ordinal, score: this.scores[i] }))
      .sort((x, y) => (this.worse(x.ordinal, x.score, y.ordinal, y.score) ? 1 : this.worse(y.ordinal, y.score, x.ordinal, x.score) ? -1 : 0));
  }

  private worse(a: number, aScore: number, b: number, bScore: number): boolean {
    return aScore < bScore || (aScore === bScore && idAfter(this.idWords, a * ID_WORDS, b * ID_WORDS));
  }

  private worseAt(i: number, j: number): boolean {
    return this.worse(this.ordinals[i], this.scores[i], this.ordinals[j], this.scores[j]);
  }

  private swap(i: number, j: number): void {
    [this.ordinals[i], this.ordinals[j]] = [this.ordinals[j], this.ordinals[i]];
    [this.scores[i], this.scores[j]] = [this.scores[j], this.scores[i]];
  }

  private up(from: number): void {
    for (let c = from; c > 0; ) {
      const parent = (c - 1) >> 1;
      if (!this.worseAt(c, parent)) return;
      this.swap(c, parent);
      c = parent;
    }
  }

  private down(from: number): void {
    const n = this.ordinals.length;
    for (let i = from; ; ) {
      const left = 2 * i + 1;
      const right = left + 1;
      let top = i;
      if (left < n && this.worseAt(left, top)) top = left;
      if (right < n && this.worseAt(right, top)) top = right;
      if (top === i) return;
      this.swap(i, top);
      i = top;
    }
  }
}
