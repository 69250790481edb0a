// A dataset's BM25 postings held in memory, so a search scores its matches in a tight loop over
// typed arrays instead of in SQL: the postings index of migration 014 bounds what SQL must read,
// but at 100,000 chunks and more a common query word still leaves thousands of chunks to score.
//
// The database stays the truth. An index is built from the chunks' terms page by page (so an
// embedded database keeps answering other queries meanwhile) and remembers the dataset's version
// when it started; before each search it re-reads the chunks changed since (bm25_changes), so a
// search sees every write committed before it. A changed chunk's old postings are marked dead and
// its new ones appended under a new ordinal, which keeps every posting list in ordinal order; when
// too much is dead, or the change log no longer reaches back far enough, the index is built anew.
// Until an index is ready, searches go to SQL (index.ts), which gives the same results.
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { Bm25Parameters } from './bounds.js';
import { type ChunkTerms, chunkTerms, chunkTermsPage, termChanges, termsVersion } from './postings.js';

/** Chunks read per page while building. */
const BUILD_PAGE = 5000;
/** Postings held in memory across datasets (about 6 bytes each); the least recently searched go first. */
const POSTINGS_BUDGET = 200_000_000;
/** Rebuilt when this share of its ordinals is dead... */
const MOST_DEAD = 0.25;
/** ...or when more chunks than this share (and at least CATCH_UP_CHUNKS) changed since the last search. */
const MOST_CHANGED = 0.25;
const CATCH_UP_CHUNKS = 5000;
/** After a build fails, searches use SQL this long before another is tried. */
const RETRY_AFTER_MS = 30_000;
/** After a dataset was found too large, this long. */
const TOO_LARGE_RETRY_MS = 3_600_000;

/** One term's postings: chunk ordinals, ascending, and the term's frequency in each. */
interface PostingList {
  ordinals: Int32Array;
  tfs: Uint16Array;
  size: number;
}

/** The chunks holding a query term, with their scores (parallel arrays). */
export interface Matches {
  ordinals: Int32Array;
  scores: Float64Array;
}

export class DatasetIndex {
  /** The dataset version this index reflects (every change up to it is applied). */
  version = 0;
  postings = 0;
  private ids: string[] = [];
  private lengths = new Int32Array(1024);
  private dead = new Uint8Array(1024);
  private deadCount = 0;
  private readonly ordinalOf = new Map<string, number>();
  private readonly lists = new Map<string, PostingList>();
  // Scratch for scoring, reused: a search scores synchronously, so no two use it at once.
  private scratchScores = new Float64Array(0);
  private scratchSeen = new Uint32Array(0);
  private scratchOrdinals = new Int32Array(0);
  private epoch = 0;

  get chunks(): number {
    return this.ids.length - this.deadCount;
  }

  get deadShare(): number {
    return this.ids.length === 0 ? 0 : this.deadCount / this.ids.length;
  }

  idOf(ordinal: number): string {
    return this.ids[ordinal];
  }

  ordinal(id: string): number | undefined {
    return this.ordinalOf.get(id);
  }

  /** Slots for ordinals (dead ones included): the size a mask over them needs. */
  get capacity(): number {
    return this.ids.length;
  }

  /** Adds the chunk, replacing what the index held for it. */
  add(chunk: ChunkTerms): void {
    this.remove(chunk.id);
    const ordinal = this.ids.length;
    if (ordinal === this.lengths.length) {
      this.lengths = grown(this.lengths, ordinal * 2);
      this.dead = grown(this.dead, ordinal * 2);
    }
    this.ids.push(chunk.id);
    this.lengths[ordinal] = chunk.length;
    this.ordinalOf.set(chunk.id, ordinal);
    for (let i = 0; i < chunk.terms.length; i++) {
      let list = this.lists.get(chunk.terms[i]);
      if (!list) {
        list = { ordinals: new Int32Array(2), tfs: new Uint16Array(2), size: 0 };
        this.lists.set(chunk.terms[i], list);
      }
      if (list.size === list.ordinals.length) {
        list.ordinals = grown(list.ordinals, list.size * 2);
        list.tfs = grown(list.tfs, list.size * 2);
      }
      list.ordinals[list.size] = ordinal;
      list.tfs[list.size++] = Math.min(chunk.tfs[i], 65_535);
    }
    this.postings += chunk.terms.length;
  }

  remove(id: string): void {
    const ordinal = this.ordinalOf.get(id);
    if (ordinal === undefined) return;
    this.dead[ordinal] = 1;
    this.deadCount++;
    this.ordinalOf.delete(id);
  }

  /**
   * Every live chunk holding one of the terms (and set in `accept`, when given), with its score:
   * Σ weight · tf·(k1+1) / (tf + k1·(1 − b + b·len/avg)), computed as the SQL path computes it.
   */
  match(terms: string[], weights: number[], { k1, b, averageLength }: Bm25Parameters, accept: Uint8Array | null): Matches {
    const slots = this.ids.length;
    if (this.scratchScores.length < slots) {
      this.scratchScores = new Float64Array(this.lengths.length);
      this.scratchSeen = new Uint32Array(this.lengths.length);
      this.scratchOrdinals = new Int32Array(this.lengths.length);
      this.epoch = 0;
    }
    if (this.epoch === 0xffffffff) {
      this.scratchSeen.fill(0);
      this.epoch = 0;
    }
    const epoch = ++this.epoch;
    const { scratchScores: scores, scratchSeen: seen, scratchOrdinals: touched, dead, lengths } = this;
    let count = 0;
    for (let t = 0; t < terms.length; t++) {
      const list = this.lists.get(terms[t]);
      if (!list) continue;
      const weight = weights[t];
      const { ordinals, tfs, size } = list;
      for (let j = 0; j < size; j++) {
        const d = ordinals[j];
        if (dead[d] === 1 || (accept !== null && accept[d] !== 1)) continue;
        const tf = tfs[j];
        const part = (weight * tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * lengths[d]) / averageLength));
        if (seen[d] === epoch) scores[d] += part;
        else {
          seen[d] = epoch;
          scores[d] = part;
          touched[count++] = d;
        }
      }
    }
    const matched = touched.slice(0, count);
    const matchedScores = new Float64Array(count);
    for (let i = 0; i < count; i++) matchedScores[i] = scores[matched[i]];
    return { ordinals: matched, scores: matchedScores };
  }

  /** The best `k` matches scoring at least `least`, best first, ties by chunk id: positions into `matches`. */
  best(matches: Matches, k: number, least: number): number[] {
    const { scores, ordinals } = matches;
    // worse(x, y): x ranks below y.
    const worse = (x: number, y: number) => scores[x] < scores[y] || (scores[x] === scores[y] && this.ids[ordinals[x]] > this.ids[ordinals[y]]);
    // A heap of the best k so far, its worst on top.
    const heap: number[] = [];
    const sift = (from: number) => {
      let i = from;
      for (;;) {
        const left = 2 * i + 1;
        const right = left + 1;
        let top = i;
        if (left < heap.length && worse(heap[left], heap[top])) top = left;
        if (right < heap.length && worse(heap[right], heap[top])) top = right;
        if (top === i) return;
        [heap[i], heap[top]] = [heap[top], heap[i]];
        i = top;
      }
    };
    if (k <= 0) return [];
    for (let i = 0; i < scores.length; i++) {
      if (scores[i] < least) continue;
      if (heap.length < k) {
        heap.push(i);
        for (let c = heap.length - 1; c > 0; ) {
          const parent = (c - 1) >> 1;
          if (!worse(heap[c], heap[parent])) break;
          [heap[c], heap[parent]] = [heap[parent], heap[c]];
          c = parent;
        }
      } else if (worse(heap[0], i)) {
        heap[0] = i;
        sift(0);
      }
    }
    return heap.sort((x, y) => (worse(x, y) ? 1 : worse(y, x) ? -1 : 0));
  }
}

function grown<T extends Int32Array | Uint16Array | Uint8Array>(array: T, size: number): T {
  const next = new (array.constructor as new (n: number) => T)(Math.max(size, 2));
  next.set(array);
  return next;
}

interface Entry {
  index: DatasetIndex | null;
  building: Promise<void> | null;
  /** No build is tried before this time (after one failed, or found the dataset too large). */
  retryAt: number;
  /** Catch-ups run one after another, each from the version the last one reached. */
  caughtUp: Promise<unknown>;
  /** The catch-up queued behind the running one, not started yet: searches arriving meanwhile share it. */
  queued: Promise<DatasetIndex | null> | null;
}

/** The in-memory indexes of the datasets searched lately. */
export class Bm25Indexes {
  /** false: no index is built or used, every search runs in SQL (tests compare the two paths). */
  enabled = true;
  private readonly entries = new Map<string, Entry>();
  private closed = false;

  constructor(
    private readonly db: Knex,
    private readonly logger: Logger,
  ) {}

  /** The dataset's index with every committed change applied; null while it is built (search in SQL). */
  async current(datasetId: string): Promise<DatasetIndex | null> {
    if (!this.enabled) return null;
    const entry = this.entry(datasetId);
    if (!entry.index) {
      this.build(datasetId, entry);
      return null;
    }
    // A catch-up that has not started yet will see every write committed before this search, so
    // every search arriving before it starts waits for that one: under concurrent searches, at
    // most one catch-up runs and one waits, instead of one per search in a row.
    if (!entry.queued) {
      const queued = entry.caughtUp
        .catch(() => undefined)
        .then(() => {
          entry.queued = null;
          return this.catchUp(datasetId, entry);
        });
      entry.queued = queued;
      entry.caughtUp = queued.catch(() => undefined);
    }
    return entry.queued;
  }

  /** Builds the dataset's index if it has none and waits for it (for warming up, and tests). */
  async ready(datasetId: string): Promise<DatasetIndex | null> {
    const entry = this.entry(datasetId);
    if (!entry.index) await this.build(datasetId, entry);
    return this.current(datasetId);
  }

  /** Forgets the dataset's index (the dataset is deleted). */
  drop(datasetId: string): void {
    this.entries.delete(datasetId);
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.entries.values()].map((e) => e.building));
  }

  /** The dataset's entry, made most recently used. */
  private entry(datasetId: string): Entry {
    const entry = this.entries.get(datasetId) ?? { index: null, building: null, retryAt: 0, caughtUp: Promise.resolve(), queued: null };
    this.entries.delete(datasetId);
    this.entries.set(datasetId, entry);
    return entry;
  }

  private async catchUp(datasetId: string, entry: Entry): Promise<DatasetIndex | null> {
    const index = entry.index;
    if (!index) return null;
    const changes = await termChanges(this.db, datasetId, index.version);
    if (changes.version === index.version) return index;
    const reachesBack = changes.version > index.version && changes.firstKept === index.version + 1;
    const tooMany = changes.changed.length > Math.max(CATCH_UP_CHUNKS, index.chunks * MOST_CHANGED);
    if (!reachesBack || tooMany) {
      entry.index = null;
      this.build(datasetId, entry);
      return null;
    }
    const now = await chunkTerms(this.db, datasetId, changes.changed);
    for (const id of changes.changed) index.remove(id);
    for (const chunk of now) index.add(chunk);
    // Chunks re-read here may already hold changes of later versions: applying those again is harmless.
    index.version = changes.version;
    if (index.deadShare > MOST_DEAD) this.build(datasetId, entry);
    return index;
  }

  /** Starts building the dataset's index unless a build runs or failed lately; the promise ends with it. */
  private build(datasetId: string, entry: Entry): Promise<void> {
    if (entry.building) return entry.building;
    if (this.closed || Date.now() < entry.retryAt) return Promise.resolve();
    const building = this.buildAndSwap(datasetId, entry).finally(() => {
      entry.building = null;
    });
    entry.building = building;
    return building;
  }

  private async buildAndSwap(datasetId: string, entry: Entry): Promise<void> {
    try {
      const index = await this.load(datasetId, entry);
      if (!index) return;
      // Swapped in between catch-ups, so none applies changes to an index it did not read.
      const swapped = entry.caughtUp.then(() => {
        entry.index = index;
        this.evict(datasetId);
      });
      entry.caughtUp = swapped;
      await swapped;
    } catch (error) {
      entry.retryAt = Date.now() + RETRY_AFTER_MS;
      if (!this.closed) this.logger.warn({ err: error, datasetId }, 'building the in-memory BM25 index failed; searching in SQL');
    }
  }

  /** The dataset's index as of the version read first (later changes are caught up); null if over budget. */
  private async load(datasetId: string, entry: Entry): Promise<DatasetIndex | null> {
    const index = new DatasetIndex();
    index.version = await termsVersion(this.db, datasetId);
    for (let after: string | null = null; ; ) {
      if (this.closed) return null;
      const page = await chunkTermsPage(this.db, datasetId, after, BUILD_PAGE);
      for (const chunk of page) index.add(chunk);
      if (index.postings > POSTINGS_BUDGET) {
        this.logger.warn({ datasetId, postings: index.postings }, 'dataset too large to hold its BM25 postings in memory; searching in SQL');
        entry.retryAt = Date.now() + TOO_LARGE_RETRY_MS;
        return null;
      }
      if (page.length < BUILD_PAGE) return index;
      after = page[page.length - 1].id;
    }
  }

  /** Drops the least recently searched indexes until the postings fit the budget, never `keep`'s. */
  private evict(keep: string): void {
    let total = 0;
    for (const entry of this.entries.values()) total += entry.index?.postings ?? 0;
    for (const [datasetId, entry] of this.entries) {
      if (total <= POSTINGS_BUDGET) return;
      if (datasetId === keep || !entry.index) continue;
      total -= entry.index.postings;
      entry.index = null;
    }
  }
}
