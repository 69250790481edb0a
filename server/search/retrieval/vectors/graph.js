// A set's HNSW graph (usearch), grown behind its vectors: it holds the slots below `graphed`. The
// set stores its vectors at once and the graph takes them in slices of a few milliseconds on the
// worker's loop, so that a set is searched (by a scan of its codes) while its graph grows, and
// other sets' searches wait for one slice at most. It grows only as far as its goal: a set that
// scans its codes need not pay for a graph it would not walk (an insert searches hundreds of
// candidates; a million of them took over an hour of both cores here).
import usearch from 'usearch';

/** The time one slice of growth aims at: what a search may wait for it. */
const SLICE_MS = 10;
/** Slots a slice starts with, and at most takes. */
const FIRST_SLICE = 64;
const MOST_SLICE = 65_536;

export class GrowingGraph {
  /**
   * `options`: usearch's; `inputOf(from, to)`: the keys and vectors of the live slots from `from`
   * on, ending at `to` or earlier (`end`, where the slots' storage breaks); `grown()`: called when
   * growth stops short of nothing it was asked for.
   */
  constructor(options, threads, inputOf, grown) {
    this.index = new usearch.Index(options);
    this.threads = threads;
    this.inputOf = inputOf;
    this.grown = grown;
    /** Slots below this are in the graph (or were removed). */
    this.graphed = 0;
    /** Slots the graph may grow to. */
    this.goal = 0;
    /** Slots the set holds, as it last said. */
    this.slots = 0;
    this.slice = FIRST_SLICE;
    this.scheduled = false;
    this.stopped = false;
  }

  /** Whether the graph is short of what it was asked to grow to. */
  get growing() {
    return this.graphed < Math.min(this.goal, this.slots);
  }

  /** Lets the graph grow to `goal` slots (never less than before). */
  aim(goal) {
    this.goal = Math.max(this.goal, goal);
  }

  /** The set holds `slots` slots now: the graph grows towards them, a slice a turn. */
  follow(slots) {
    this.slots = slots;
    if (!this.growing || this.scheduled || this.stopped) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.growSlice();
    });
  }

  /** The set holds `slots` slots now: the graph takes them before this returns. */
  followNow(slots) {
    this.slots = slots;
    this.growTo(Math.min(this.goal, slots));
  }

  growSlice() {
    if (this.stopped || !this.growing) return;
    const started = performance.now();
    const before = this.graphed;
    this.growTo(Math.min(this.goal, this.slots, this.graphed + this.slice));
    const took = performance.now() - started;
    // The next slice sized from this one's pace.
    const pace = (this.graphed - before) / Math.max(took, 0.1);
    this.slice = Math.max(16, Math.min(MOST_SLICE, Math.round(pace * SLICE_MS)));
    if (this.growing) this.follow(this.slots);
    else this.grown();
  }

  growTo(until) {
    while (this.graphed < until) {
      const { keys, vectors, end } = this.inputOf(this.graphed, until);
      if (keys.length > 0) this.index.add(keys, vectors, this.threads);
      this.graphed = end;
    }
  }

  remove(slot) {
    if (slot < this.graphed) this.index.remove(BigInt(slot));
  }

  /** About the `n` nearest graphed slots to `query`. */
  search(query, n) {
    return Array.from(this.index.search(query, n, 1).keys, Number);
  }

  save(file) {
    this.index.save(file);
  }

  /** Reads what `save` wrote, a graph of the slots below `graphed`. */
  load(file, graphed) {
    this.index.load(file);
    this.graphed = graphed;
  }

  stop() {
    this.stopped = true;
  }
}
