// Datasets' vectors held in memory on a thread of their own, so that building a graph and walking
// it never hold up the service's thread. Each set of vectors is an HNSW graph (usearch, graph.js),
// over quantized copies, for finding candidates fast, and the vectors themselves, for scoring them
// exactly: a search ranks its candidates by their exact distances, computed as pgvector computes
// them, so the graph's quantization changes which chunks are found, never their scores.
//
// Under cosine, each vector's direction is also kept in int8 ("codes"), by row (rows.js) and by
// column (columns.js, in 4 bits once a block is full), and the set checks the graph against a scan of the codes on its own recent
// queries (calibrate). The graph grows behind the set, first over a trial share of it: it is grown
// whole only when that trial finds enough of the true neighbours, or when a scan would read too
// much. Until the graph is whole and found both good and faster, searches scan the codes when the
// scan is affordable (by column for a query with few nonzero components, else every code): where
// the walk finds too few of the true neighbours (vectors whose neighbours are barely nearer than the
// rest, like the built-in hashing embedder's), and where it takes longer than the scan (a small set).
//
// A long list of chunks to rank (a selective filter's) is first screened by its codes, which bound
// each distance, so that only the chunks that can make the top get their exact distances
// (screened); a list ranked search after search is kept ready (lists.js, nearestIn). Plain
// JavaScript: a worker is loaded by Node itself, without the TypeScript loader of the service.
import fs from 'node:fs';
import path from 'node:path';
import { parentPort } from 'node:worker_threads';
import * as Comlink from 'comlink';
import nodeEndpoint from 'comlink/dist/esm/node-adapter.mjs';
import { ID_WORDS } from '../../chunkIdWords.js';
import { ColumnCodes } from './columns.js';
import { GrowingGraph } from './graph.js';
import { close } from './handoff.js';
import { KeptLists } from './lists.js';
import { RowCodes } from './rows.js';
import { SlotTable } from './slots.js';

/** Vectors per block of storage (blocks keep any one allocation small at millions of vectors). */
const BLOCK = 65_536;
/** The graph's metric for each of the service's: the same order of neighbours. */
const GRAPH_METRIC = { cosine: 'cos', dot: 'ip', euclidean: 'l2sq' };

/** int8 steps of a unit vector's components: its direction, as a scan of the codes compares it. */
const CODE_SCALE = 127;

/**
 * Writes the direction of `v[at..at+n]` into `codes[to..]` (a zero vector: zeros); returns the norm
 * of what the codes miss of the direction.
 */
function encode(v, at, n, codes, to) {
  const norm = Math.sqrt(squares(v, at, n));
  if (norm === 0) {
    codes.fill(0, to, to + n);
    return 0;
  }
  let missed = 0;
  for (let i = 0; i < n; i++) {
    const component = v[at + i] / norm;
    codes[to + i] = Math.round(component * CODE_SCALE);
    const left = component - codes[to + i] / CODE_SCALE;
    missed += left * left;
  }
  return Math.sqrt(missed);
}

/**
 * Slots the graph may lag its set by and still be walked: a walk ranks them exactly besides its own
 * candidates (screened by their codes), so that writes are found before the graph takes them.
 */
const WALK_TAIL = 8192;

/**
 * Candidates a scan by column brings for each one asked for, once its sums are estimates (a sealed
 * block's 4-bit codes, columns.js). Ranked exactly after, twice as many held the true top 10 and 97 %
 * of the true top 100, on random directions and on the built-in embedder's vectors: more than the
 * int8 sums' own top 100 did (bench/README.md). As many as asked lost one of the top 10 for one
 * query in 200 (the search suite at 1M).
 */
const ESTIMATED_WIDTH = 2;

/** Chunks in a list at and above which ranked() screens them by their codes first (screened). */
const SCREEN_AT = 256;
/** Added to a screened distance's bound: far above the doubles' rounding in the sums compared. */
const ROUNDING = 1e-9;

/** The `k`-th smallest of `values` (Infinity when there are fewer): a heap of the k smallest, the largest on top. */
function kthSmallest(values, k) {
  if (values.length < k) return Number.POSITIVE_INFINITY;
  const heap = new Float64Array(k).fill(Number.POSITIVE_INFINITY);
  for (let j = 0; j < values.length; j++) {
    const value = values[j];
    if (!(value < heap[0])) continue;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= k) break;
      const right = left + 1;
      const child = right < k && heap[right] > heap[left] ? right : left;
      if (heap[child] <= value) break;
      heap[i] = heap[child];
      i = child;
    }
    heap[i] = value;
  }
  return heap[0];
}

/** A vector's sum of squares (its squared norm), summed as pgvector's cosine distance sums it. */
function squares(v, at, n) {
  let sum = 0;
  for (let i = 0; i < n; i++) sum += v[at + i] * v[at + i];
  return sum;
}

/**
 * pgvector's distance of the query to a held vector, for each metric (smaller is closer): a sum over
 * the components (the products, or the squared differences), then what the metric makes of it.
 * Cosine takes both sums of squares precomputed: the held vector's once when it is added.
 */
const METRICS = {
  cosine: {
    products: true,
    distance(dot, qSquares, bSquares) {
      const similarity = dot / Math.sqrt(qSquares * bSquares);
      // As pgvector: rounding may take the similarity past ±1; a zero vector has none (NaN).
      return Number.isNaN(similarity) ? Number.NaN : 1 - Math.max(-1, Math.min(1, similarity));
    },
  },
  dot: { products: true, distance: (dot) => -dot },
  euclidean: { products: false, distance: (sum) => Math.sqrt(sum) },
};

/**
 * The sums of products of four held vectors with the query at once, over the query's nonzero
 * components (their indices `at`, their `values`; see nonzeroOf), each summed in component order
 * as alone, so to the same bit: four sums in flight keep the processor busy where one waits on its
 * previous addition. Into `out[0..3]`.
 */
function products4(at, values, b0, o0, b1, o1, b2, o2, b3, o3, out) {
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  for (let j = 0; j < at.length; j++) {
    const i = at[j];
    const x = values[j];
    s0 += x * b0[o0 + i];
    s1 += x * b1[o1 + i];
    s2 += x * b2[o2 + i];
    s3 += x * b3[o3 + i];
  }
  out[0] = s0;
  out[1] = s1;
  out[2] = s2;
  out[3] = s3;
}

/**
 * The query's nonzero components, indices and values. A zero component's products are zeros, which
 * leave a sum as it is: summed over these alone, the products add up to the sums over every
 * component to the bit, from a fraction of the reads when few are nonzero (the built-in embedder's
 * queries set fewer than 40 of 384); a dense query's sums cost little more (under a tenth more
 * for 10,000 vectors of 384 components, in a scratch timing).
 */
function nonzeroOf(query) {
  const at = [];
  for (let i = 0; i < query.length; i++) if (query[i] !== 0) at.push(i);
  return { at: Int32Array.from(at), values: Float64Array.from(at, (i) => query[i]) };
}

/** The sums of squared differences of four held vectors from the query, as products4 (every component). */
function differences4(q, b0, o0, b1, o1, b2, o2, b3, o3, n, out) {
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  for (let i = 0; i < n; i++) {
    const x = q[i];
    const d0 = x - b0[o0 + i];
    const d1 = x - b1[o1 + i];
    const d2 = x - b2[o2 + i];
    const d3 = x - b3[o3 + i];
    s0 += d0 * d0;
    s1 += d1 * d1;
    s2 += d2 * d2;
    s3 += d3 * d3;
  }
  out[0] = s0;
  out[1] = s1;
  out[2] = s2;
  out[3] = s3;
}

class DatasetVectors {
  constructor({ dimension, metric, quantization, connectivity, expansionAdd, expansionSearch, threads, calibration }) {
    this.dimension = dimension;
    this.metric = METRICS[metric];
    this.threads = threads;
    /** { target, queries, regrowth, trialSlots, scanBytes, splitBytes, scanWeight }: see CALIBRATION in index.ts. */
    this.calibration = calibration;
    this.graph = new GrowingGraph(
      {
        dimensions: dimension,
        metric: GRAPH_METRIC[metric],
        quantization,
        connectivity,
        expansion_add: expansionAdd,
        expansion_search: expansionSearch,
        multi: false,
      },
      threads,
      (from, to) => this.graphInput(from, to),
      () => this.calibrateIfDue(),
    );
    /** Chunk id by slot (null: removed). A replaced vector takes a new slot; the graph keys by slot. */
    this.ids = [];
    this.slotOf = new SlotTable();
    this.blocks = [];
    /** Each slot's sum of squares, in blocks as the vectors. */
    this.squareBlocks = [];
    /** Cosine only: each slot's direction in int8, by row and by column (4 bits in full blocks; removed: zeros); null: none held. */
    this.codes = metric === 'cosine' ? heldCodes(dimension, { threads, splitBytes: calibration.splitBytes }) : null;
    // A set that can scan grows a trial graph first (calibrate); one that cannot, its whole graph.
    this.graph.aim(this.codes ? calibration.trialSlots : Number.POSITIVE_INFINITY);
    /** Cosine only: what each slot's codes miss of its direction (encode), in blocks as the vectors. */
    this.missedBlocks = [];
    /** One vector's codes, on their way to the rows and the columns. */
    this.code = new Int8Array(dimension);
    this.dead = 0;
    /** The graph's recall@10 against the scan on the last calibration's queries (null: none yet). */
    this.recall = null;
    /** Whether the graph's walk, whole, took less time than the scan on those queries (scanWeight applied). */
    this.walkFaster = false;
    /**
     * The last queries, for calibration; the slots the graph held when it last ran (-1: never), and
     * whether that was the whole set (walkable); whether it runs.
     */
    this.recent = [];
    this.calibratedAt = -1;
    this.calibratedWhole = false;
    this.calibrating = false;
    this.released = false;
    /** Scans asked for this turn (scanSoon). */
    this.pendingScans = [];
    /** Lists ranked again and again, kept ready while the set is unchanged (listOf). */
    this.lists = new KeptLists((list) => {
      if (list.rows) this.codes?.rows.releaseGathered(list.rows);
    });
  }

  vectorAt(slot) {
    return [this.blocks[Math.floor(slot / BLOCK)], (slot % BLOCK) * this.dimension];
  }

  /** Adds the chunks' vectors (one after another in `vectors`), replacing what was held for them. */
  add(ids, vectors) {
    this.lists.clear();
    for (let i = 0; i < ids.length; i++) {
      this.removeOne(ids[i]);
      const slot = this.ids.length;
      if (slot % BLOCK === 0) this.newBlock();
      const [block, at] = this.vectorAt(slot);
      block.set(vectors.subarray(i * this.dimension, (i + 1) * this.dimension), at);
      this.squareBlocks[Math.floor(slot / BLOCK)][slot % BLOCK] = squares(block, at, this.dimension);
      if (this.codes) this.encodeCodes(slot);
      this.ids.push(ids[i]);
      this.slotOf.set(ids[i], slot);
    }
    // Without codes, a search can only walk: the graph takes the vectors before they are searched.
    if (this.codes) this.graph.follow(this.ids.length);
    else this.graph.followNow(this.ids.length);
  }

  /** The graph's input from slot `from` up to `to`, or to the end of its block: the live slots' keys and vectors. */
  graphInput(from, to) {
    const end = Math.min(to, (Math.floor(from / BLOCK) + 1) * BLOCK);
    const [block, at] = this.vectorAt(from);
    let live = 0;
    for (let slot = from; slot < end; slot++) if (this.ids[slot] !== null) live++;
    const keys = new BigUint64Array(live);
    if (live === end - from) {
      for (let i = 0; i < live; i++) keys[i] = BigInt(from + i);
      return { keys, vectors: block.subarray(at, at + live * this.dimension), end };
    }
    const vectors = new Float32Array(live * this.dimension);
    for (let slot = from, i = 0; slot < end; slot++) {
      if (this.ids[slot] === null) continue;
      const offset = (slot - from) * this.dimension;
      vectors.set(block.subarray(at + offset, at + offset + this.dimension), i * this.dimension);
      keys[i++] = BigInt(slot);
    }
    return { keys, vectors, end };
  }

  /** Writes the codes of the slot's vector, by row and by column. */
  encodeCodes(slot) {
    const [block, at] = this.vectorAt(slot);
    this.missedBlocks[Math.floor(slot / BLOCK)][slot % BLOCK] = encode(block, at, this.dimension, this.code, 0);
    try {
      this.codes.rows.write(slot, this.code, 0);
      this.codes.columns.write(slot, this.code, 0);
    } catch (error) {
      // The codes' memory cannot grow (it is shared by every set, 4 GiB at most): this set keeps none.
      if (!(error instanceof RangeError)) throw error;
      this.dropCodes();
    }
  }

  /** Hands the codes' memory back: the set then walks its graph, whole, and ranks by exact distances alone. */
  dropCodes() {
    if (!this.codes) return;
    this.releaseCodes();
    this.graph.aim(Number.POSITIVE_INFINITY);
    this.graph.followNow(this.ids.length);
  }

  releaseCodes() {
    this.lists.clear();
    this.codes?.rows.release();
    this.codes?.columns.release();
    this.codes = null;
  }

  newBlock(block = new Float32Array(BLOCK * this.dimension)) {
    this.blocks.push(block);
    this.squareBlocks.push(new Float64Array(BLOCK));
    if (this.codes) this.missedBlocks.push(new Float64Array(BLOCK));
  }

  remove(ids) {
    this.lists.clear();
    for (const id of ids) this.removeOne(id);
  }

  removeOne(id) {
    const slot = this.slotOf.get(id);
    if (slot < 0) return;
    this.slotOf.delete(id);
    this.ids[slot] = null;
    this.dead++;
    this.graph.remove(slot);
    // Zeros: a removed vector's codes add nothing to a scan's sums (scans leave it out).
    this.codes?.rows.clear(slot);
    this.codes?.columns.clear(slot);
  }

  /**
   * The `k` nearest chunks among the `candidates` nearest found by the graph or the scan (none:
   * neither) and the chunks `also` (their ids' words, chunkIdWords.js), by exact distance
   * (nearest first, ties by id); whether all that was asked for was found, and how. A scan's answer
   * comes a turn later (scanSoon). `shareScan`: whether a scan by column may be shared with the
   * helper threads (ColumnCodes.best): true, false, or 'delivered' (once a list is delivered to
   * `handoff`). `handoff`: a keyword list's hand-off (handoff.js), closed once the candidates are
   * found; the chunks delivered to it before are ranked with them.
   */
  nearest(query, k, candidates, also, shareScan = true, handoff = null) {
    const live = this.ids.length - this.dead;
    const wanted = Math.min(candidates, live);
    if (wanted > 0) this.remember(query);
    const codes = wanted > 0 && this.codes ? this.codesOf(query) : null;
    const scan = codes ? this.scanFor(codes) : 'none';
    const by = scan === 'none' ? 'graph' : 'scan';
    const answer = (found) => {
      const delivered = handoff && close(handoff);
      const named = delivered ? Int32Array.of(...also, ...delivered) : also;
      const { ids, distances } = this.ranked(query, k, this.slotsOf(named, found));
      return { ids, distances, complete: found.length >= wanted, by };
    };
    if (wanted === 0) return answer([]);
    if (scan === 'none') return answer(this.walkedWithTail(query, wanted));
    if (scan === 'columns') {
      const count = Math.min(this.columnCandidates(wanted), live);
      return answer(this.codes.columns.best(codes, count, this.ids.length, shareScan === true, shareScan === 'delivered' ? handoff : null));
    }
    return this.scanSoon(query, wanted).then(answer);
  }

  /**
   * The `k` nearest of the chunks of the list kept under `key`, by exact distance, as `nearest` with
   * no candidates; the list is made from `also` (their ids' words) when none is kept, and kept for
   * the next search of it. Null when none is kept and `also` is null: the caller sends the list.
   */
  nearestIn(query, k, key, also) {
    let list = this.lists.get(key);
    const made = !list && also ? this.listOf(also) : null;
    list ??= made;
    if (!list) return null;
    const { ids, distances } = this.ranked(query, k, list.slots, list);
    if (made) this.lists.keep(key, made);
    return { ids, distances, complete: true, by: 'graph' };
  }

  /**
   * The live slots of the chunks `also` names (their ids' words), each once, in slot order; under
   * cosine, a list long enough to be screened also has its rows of codes copied side by side, and
   * what each code misses (missedOf), so that screening it reads neither scattered. `bytes`: what
   * keeping it costs.
   */
  listOf(also) {
    const live = this.liveOf(this.slotsOf(also)).slice();
    const list = { slots: live, rows: null, missed: null, bytes: live.byteLength };
    if (!this.codes || live.length < SCREEN_AT) return list;
    list.missed = this.missedOf(live);
    list.bytes += list.missed.byteLength;
    try {
      list.rows = this.codes.rows.gather(live);
      list.bytes += list.rows.bytes;
    } catch (error) {
      // No memory for the copies: the screen reads the rows where they are.
      if (!(error instanceof RangeError)) throw error;
    }
    return list;
  }

  /** The slots `found`, then those of the chunks `also` names (their ids' words) that the set holds. */
  slotsOf(also, found = []) {
    const slots = new Int32Array(found.length + also.length / ID_WORDS);
    let n = 0;
    for (const slot of found) slots[n++] = slot;
    for (let at = 0; at < also.length; at += ID_WORDS) {
      const slot = this.slotOf.slotAt(also, at);
      if (slot >= 0) slots[n++] = slot;
    }
    return slots.subarray(0, n);
  }

  /**
   * How a search for the query of these codes finds its candidates: 'none' (the graph is walked)
   * when the graph is whole (walkable) and, at the last calibration, found the target share of the
   * true top 10 in less time than the scan, or when a scan would read more bytes than allowed; else
   * its scan (scanKind). A scan that would read too much has the graph grown whole, and is made
   * meanwhile.
   */
  scanFor(codes) {
    const walkable = this.walkable;
    if (walkable && this.recall !== null && this.recall >= this.calibration.target && this.walkFaster) return 'none';
    const kind = this.scanKind(codes);
    const bytes = (kind === 'columns' ? countNonzero(codes) : this.dimension) * this.ids.length;
    if (bytes <= this.calibration.scanBytes) return kind;
    this.growWhole();
    return walkable ? 'none' : kind;
  }

  /** Whether the graph holds all but the last few slots (WALK_TAIL), which a walk then ranks as well. */
  get walkable() {
    return this.ids.length - this.graph.graphed <= WALK_TAIL;
  }

  /** Has the graph grown to the whole set, and follow it. */
  growWhole() {
    this.graph.aim(Number.POSITIVE_INFINITY);
    this.graph.follow(this.ids.length);
  }

  /**
   * How a scan reads the codes for the query of these codes: 'columns' when at most half its
   * components are nonzero (only those columns are read), else 'rows' (every code).
   */
  scanKind(codes) {
    return 2 * countNonzero(codes) <= this.dimension ? 'columns' : 'rows';
  }

  /** How many candidates a scan by column brings for `n` asked for: more once its sums are estimates (ESTIMATED_WIDTH). */
  columnCandidates(n) {
    return this.codes.columns.estimates ? ESTIMATED_WIDTH * n : n;
  }

  /** The int8 codes of the query's direction. */
  codesOf(query) {
    const codes = new Int8Array(this.dimension);
    encode(query, 0, this.dimension, codes, 0);
    return codes;
  }

  /** About the `n` nearest slots below `slots` to `query` by a scan of its codes (scanKind), whatever it reads. */
  scannedNow(query, n, slots) {
    const codes = this.codesOf(query);
    if (this.scanKind(codes) === 'columns') return Array.from(this.codes.columns.best(codes, this.columnCandidates(n), slots));
    return this.scanned([query], [n], slots === this.ids.length ? this.ids : this.ids.slice(0, slots))[0];
  }

  /** About the `n` nearest slots to `query` by the graph's walk, and the slots the graph does not hold yet. */
  walkedWithTail(query, n) {
    const found = this.graph.search(query, n);
    for (let slot = this.graph.graphed; slot < this.ids.length; slot++) found.push(slot);
    return found;
  }

  /**
   * The scan's candidates for `query`, with those of every scan asked for in the same turn of this
   * thread's loop: one pass over the codes answers them all, which under concurrent searches reads
   * the codes from memory once instead of once a query.
   */
  scanSoon(query, n) {
    return new Promise((resolve, reject) => {
      this.pendingScans.push({ query, n, resolve, reject });
      if (this.pendingScans.length === 1) setImmediate(() => this.scanPending());
    });
  }

  scanPending() {
    const batch = this.pendingScans;
    this.pendingScans = [];
    try {
      const found = this.scanned(
        batch.map((s) => s.query),
        batch.map((s) => s.n),
      );
      for (let i = 0; i < batch.length; i++) batch[i].resolve(found[i]);
    } catch (error) {
      for (const s of batch) s.reject(error);
    }
  }

  /** About the `counts[i]` nearest slots to each of the `queries`, by a scan of every code of the slots `ids` names (removed: null). */
  scanned(queries, counts, ids = this.ids) {
    const width = this.codes.rows.width;
    // Each query's codes as wide as a row's, the rest zeros.
    const codes = new Int8Array(queries.length * width);
    for (let i = 0; i < queries.length; i++) encode(queries[i], 0, this.dimension, codes, i * width);
    // Codes are directions: their inner product orders the slots as cosine does.
    return this.codes.rows.best(codes, counts, ids).map((slots) => Array.from(slots));
  }

  /**
   * The `k` nearest of `slots` (repeats and removed ones allowed) by exact distance, nearest first,
   * ties by id; or of a kept list's (listOf), when it is given.
   */
  ranked(query, k, slots, list = null) {
    const live = list ? list.slots : this.liveOf(slots);
    const chosen = this.codes && k > 0 && live.length >= SCREEN_AT && live.length > k ? this.screened(query, k, live, list) : live;
    const best = new Nearest(k, this.ids);
    const querySquares = squares(query, 0, this.dimension);
    const nonzero = this.metric.products ? nonzeroOf(query) : null;
    // The live slots, each once, four at a time (the last group padded with its first slot).
    const group = new Int32Array(4);
    const sums = new Float64Array(4);
    let size = 0;
    const flush = () => {
      for (let j = size; j < 4; j++) group[j] = group[0];
      const [b0, o0] = this.vectorAt(group[0]);
      const [b1, o1] = this.vectorAt(group[1]);
      const [b2, o2] = this.vectorAt(group[2]);
      const [b3, o3] = this.vectorAt(group[3]);
      if (nonzero) products4(nonzero.at, nonzero.values, b0, o0, b1, o1, b2, o2, b3, o3, sums);
      else differences4(query, b0, o0, b1, o1, b2, o2, b3, o3, this.dimension, sums);
      for (let j = 0; j < size; j++) {
        const slot = group[j];
        const distance = this.metric.distance(sums[j], querySquares, this.squareBlocks[Math.floor(slot / BLOCK)][slot % BLOCK]);
        // No distance (a zero vector under cosine) is no match, as in SQL.
        if (!Number.isNaN(distance)) best.offer(slot, distance);
      }
      size = 0;
    };
    for (let i = 0; i < chosen.length; i++) {
      group[size++] = chosen[i];
      if (size === 4) flush();
    }
    if (size > 0) flush();
    return best.ranked();
  }

  /** The live slots of `slots`, each once, in slot order: vectors next to each other in memory are read one after another. */
  liveOf(slots) {
    const ordered = slots.sort();
    const live = new Int32Array(ordered.length);
    let n = 0;
    for (let i = 0; i < ordered.length; i++) {
      const slot = ordered[i];
      // Strictly null: a loose test reads each id string from the heap, a cache miss apiece (4 ms in
      // 10,000 slots among a million).
      if ((i > 0 && slot === ordered[i - 1]) || this.ids[slot] === null) continue;
      live[n++] = slot;
    }
    return live.subarray(0, n);
  }

  /**
   * The slots of `live` that may be among the `k` nearest to `query` under cosine, by their codes,
   * a quarter of the bytes of their vectors, summed with SIMD. A slot's codes give its similarity
   * within a bound: by Cauchy-Schwarz, off by at most the norm of what they miss of its direction
   * (or by half a code's step times the sum of the query direction's magnitudes, when less), plus
   * what the query's own codes miss times the norm of the slot's. The k-th smallest upper bound of
   * a distance is reached by k slots; a slot whose lower bound is above it can neither be among the
   * k nearest nor tie with them, so ranking the rest exactly gives the exact answer. A kept list's
   * codes and misses are read from its copies.
   */
  screened(query, k, live, list) {
    const rows = this.codes.rows;
    const norm = Math.sqrt(squares(query, 0, this.dimension));
    // A zero query has no distance to any vector: nothing to screen.
    if (norm === 0) return live;
    const codes = rows.queryCodes(Float64Array.from(query, (x) => x / norm));
    let sums;
    try {
      sums = list?.rows ? rows.gatheredProducts(codes, list.rows) : rows.products(codes, live);
    } catch (error) {
      // No memory for the list: every slot is ranked exactly.
      if (!(error instanceof RangeError)) throw error;
      return live;
    }
    const step = 1 / (codes.scale * CODE_SCALE);
    const halfSteps = (0.5 / CODE_SCALE) * codes.magnitudes;
    const misses = list?.missed ?? this.missedOf(live);
    const lower = new Float64Array(live.length);
    const upper = new Float64Array(live.length);
    for (let i = 0; i < live.length; i++) {
      const missed = misses[i];
      // A zero vector has no distance (no match): it is left out.
      if (Number.isNaN(missed)) {
        lower[i] = upper[i] = Number.POSITIVE_INFINITY;
        continue;
      }
      const error = Math.min(missed, halfSteps) + codes.error * (1 + missed) + ROUNDING;
      const similarity = sums[i] * step;
      lower[i] = 1 - similarity - error;
      upper[i] = 1 - similarity + error;
    }
    const bar = kthSmallest(upper, k);
    const kept = new Int32Array(live.length);
    let n = 0;
    for (let i = 0; i < live.length; i++) if (lower[i] <= bar) kept[n++] = live[i];
    return kept.subarray(0, n);
  }

  /** What the codes of each of `slots` miss of its direction (encode); NaN for a zero vector, which has no direction. */
  missedOf(slots) {
    const misses = new Float64Array(slots.length);
    for (let i = 0; i < slots.length; i++) {
      const b = Math.floor(slots[i] / BLOCK);
      const s = slots[i] % BLOCK;
      misses[i] = this.squareBlocks[b][s] === 0 ? Number.NaN : this.missedBlocks[b][s];
    }
    return misses;
  }

  /** Keeps the query for calibration, and starts one when due (calibrateIfDue). */
  remember(query) {
    if (!this.codes) return;
    this.recent.push(Float32Array.from(query));
    if (this.recent.length > this.calibration.queries) this.recent.shift();
    this.calibrateIfDue();
  }

  /**
   * Starts a calibration when the set has enough recent queries, its graph has stopped growing, and
   * none has run yet, or the graph has grown or shrunk by `regrowth` since, or become whole.
   */
  calibrateIfDue() {
    const { queries, regrowth } = this.calibration;
    if (!this.codes || this.recent.length < queries || this.calibrating || this.graph.growing) return;
    const graphed = this.graph.graphed;
    const due = this.calibratedAt < 0 || this.walkable !== this.calibratedWhole || Math.abs(graphed - this.calibratedAt) > regrowth * this.calibratedAt;
    if (due) this.calibrate();
  }

  /**
   * Compares, for each recent query, the graph's top 10 with the scan's over the slots the graph
   * holds, and the times each took, one query a turn so that searches go on meanwhile; keeps the
   * graph's recall and, when it is whole, whether it was the faster (see scanFor). The scan's top 10
   * stands for the exact one: its candidates are ranked by exact distance, and int8 directions are
   * fine enough that the true top 10 are among a scan's first 100. A trial graph (the set's first
   * `trialSlots`) that reaches the target is grown whole, to be compared again; one that falls short
   * is grown no further, for a graph's recall only falls as it grows.
   */
  calibrate() {
    this.calibrating = true;
    const queries = [...this.recent];
    const slots = this.graph.graphed;
    const whole = this.walkable;
    let found = 0;
    let scanMs = 0;
    let walkMs = 0;
    let i = 0;
    const step = () => {
      if (this.released) return;
      if (i < queries.length) {
        const query = queries[i++];
        const scanStart = performance.now();
        const exact = new Set(this.ranked(query, 10, Int32Array.from(this.scannedNow(query, 100, slots))).ids);
        const walkStart = performance.now();
        // Slots the graph took meanwhile are left out, as from the scan.
        const walked = this.ranked(query, 10, Int32Array.from(this.graph.search(query, 100).filter((slot) => slot < slots))).ids;
        walkMs += performance.now() - walkStart;
        scanMs += walkStart - scanStart;
        found += exact.size === 0 ? 1 : walked.filter((id) => exact.has(id)).length / exact.size;
        setImmediate(step);
        return;
      }
      this.recall = found / queries.length;
      this.walkFaster = whole && walkMs < scanMs * this.calibration.scanWeight;
      this.calibratedAt = slots;
      this.calibratedWhole = whole;
      this.calibrating = false;
      if (this.recall >= this.calibration.target) this.growWhole();
    };
    setImmediate(step);
  }

  /**
   * Writes the graph, the vectors (in slot order, in this machine's byte order) and the slots' ids
   * into `dir`, for `restore` at the next start.
   */
  save(dir) {
    this.graph.save(path.join(dir, 'graph.usearch'));
    fs.writeFileSync(path.join(dir, 'graph.json'), JSON.stringify({ graphed: this.graph.graphed }));
    const fd = fs.openSync(path.join(dir, 'vectors.f32'), 'w');
    try {
      for (let b = 0; b < this.blocks.length; b++) {
        const floats = Math.min(BLOCK, this.ids.length - b * BLOCK) * this.dimension;
        fs.writeSync(fd, new Uint8Array(this.blocks[b].buffer, 0, floats * 4));
      }
    } finally {
      fs.closeSync(fd);
    }
    fs.writeFileSync(path.join(dir, 'ids.json'), JSON.stringify(this.ids));
  }

  /** Reads what `save` wrote into `dir` (this set being new and empty). */
  restore(dir) {
    const ids = JSON.parse(fs.readFileSync(path.join(dir, 'ids.json'), 'utf8'));
    const file = path.join(dir, 'vectors.f32');
    if (fs.statSync(file).size !== ids.length * this.dimension * 4) throw new Error(`${file} does not hold ${ids.length} vectors`);
    const grown = path.join(dir, 'graph.json');
    // Kept before graphs grew behind their sets: whole.
    const { graphed } = fs.existsSync(grown) ? JSON.parse(fs.readFileSync(grown, 'utf8')) : { graphed: ids.length };
    this.graph.load(path.join(dir, 'graph.usearch'), graphed);
    const fd = fs.openSync(file, 'r');
    try {
      for (let first = 0; first < ids.length; first += BLOCK) {
        const block = new Float32Array(BLOCK * this.dimension);
        const bytes = Math.min(BLOCK, ids.length - first) * this.dimension * 4;
        if (fs.readSync(fd, new Uint8Array(block.buffer, 0, bytes)) !== bytes) throw new Error(`${file} ended early`);
        this.newBlock(block);
        const b = this.blocks.length - 1;
        for (let i = 0; first + i < ids.length && i < BLOCK; i++) {
          this.squareBlocks[b][i] = squares(block, i * this.dimension, this.dimension);
          // Removed slots' vectors were kept as they were; their codes stay zero.
          if (this.codes && ids[first + i] != null) this.encodeCodes(first + i);
        }
      }
    } finally {
      fs.closeSync(fd);
    }
    this.ids = ids;
    ids.forEach((id, slot) => {
      if (id == null) this.dead++;
      else this.slotOf.set(id, slot);
    });
    if (this.codes) this.graph.follow(ids.length);
    else this.graph.followNow(ids.length);
  }

  get stats() {
    return {
      chunks: this.ids.length - this.dead,
      slots: this.ids.length,
      recall: this.recall,
      walkFaster: this.walkFaster,
      graphed: this.graph.graphed,
      growing: this.graph.growing,
      sharedScans: this.codes?.columns.shared ?? 0,
    };
  }

  /** Stops its calibration and its graph's growth, and hands its codes' memory back. */
  release() {
    this.released = true;
    this.graph.stop();
    this.lists.clear();
    this.releaseCodes();
  }
}

/** Codes by row and by column for a set of this dimension (`sharing`: see ColumnCodes); null when their memory cannot grow. */
function heldCodes(dimension, sharing) {
  try {
    return { rows: new RowCodes(dimension, BLOCK), columns: new ColumnCodes(dimension, BLOCK, sharing) };
  } catch (error) {
    if (error instanceof RangeError) return null;
    throw error;
  }
}

function countNonzero(codes) {
  let n = 0;
  for (let i = 0; i < codes.length; i++) if (codes[i] !== 0) n++;
  return n;
}

/** The `k` nearest offered so far: a heap with the farthest on top (the larger id, among equals). */
class Nearest {
  constructor(k, ids) {
    this.k = k;
    this.ids = ids;
    this.slots = new Int32Array(k);
    this.distances = new Float64Array(k);
    this.size = 0;
  }

  /** Whether the slot at `a` is farther than the one at `b` (by distance, then id). */
  farther(aSlot, aDistance, bSlot, bDistance) {
    return aDistance > bDistance || (aDistance === bDistance && this.ids[aSlot] > this.ids[bSlot]);
  }

  offer(slot, distance) {
    if (this.k <= 0) return;
    let i;
    if (this.size < this.k) {
      i = this.size++;
      // Up: while the parent is nearer, it moves down.
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (!this.farther(slot, distance, this.slots[parent], this.distances[parent])) break;
        this.slots[i] = this.slots[parent];
        this.distances[i] = this.distances[parent];
        i = parent;
      }
    } else {
      if (!this.farther(this.slots[0], this.distances[0], slot, distance)) return;
      // Down from the top: while a child is farther, it moves up.
      i = 0;
      for (;;) {
        const left = 2 * i + 1;
        if (left >= this.size) break;
        const right = left + 1;
        const child = right < this.size && this.farther(this.slots[right], this.distances[right], this.slots[left], this.distances[left]) ? right : left;
        if (!this.farther(this.slots[child], this.distances[child], slot, distance)) break;
        this.slots[i] = this.slots[child];
        this.distances[i] = this.distances[child];
        i = child;
      }
    }
    this.slots[i] = slot;
    this.distances[i] = distance;
  }

  /** Nearest first: the chunks' ids and their distances. */
  ranked() {
    const order = Array.from({ length: this.size }, (_, i) => i).sort((a, b) =>
      this.farther(this.slots[a], this.distances[a], this.slots[b], this.distances[b]) ? 1 : -1,
    );
    return { ids: order.map((i) => this.ids[this.slots[i]]), distances: Float64Array.from(order, (i) => this.distances[i]) };
  }
}

const sets = new Map();

function held(handle) {
  const set = sets.get(handle);
  if (!set) throw new Error(`no vectors held under ${handle}`);
  return set;
}

Comlink.expose(
  {
    create(handle, options) {
      sets.set(handle, new DatasetVectors(options));
    },
    add(handle, ids, vectors) {
      const set = held(handle);
      set.add(ids, vectors);
      return set.stats;
    },
    remove(handle, ids) {
      const set = held(handle);
      set.remove(ids);
      return set.stats;
    },
    async nearest(handle, query, k, candidates, also, shareScan, handoff) {
      const answer = await held(handle).nearest(query, k, candidates, also, shareScan, handoff);
      return Comlink.transfer(answer, [answer.distances.buffer]);
    },
    nearestIn(handle, query, k, key, also) {
      const answer = held(handle).nearestIn(query, k, key, also);
      return answer && Comlink.transfer(answer, [answer.distances.buffer]);
    },
    save(handle, dir) {
      held(handle).save(dir);
    },
    restore(handle, options, dir) {
      const set = new DatasetVectors(options);
      set.restore(dir);
      sets.set(handle, set);
      return set.stats;
    },
    stats(handle) {
      return held(handle).stats;
    },
    release(handle) {
      sets.get(handle)?.release();
      sets.delete(handle);
    },
  },
  nodeEndpoint(parentPort),
);
