// The datasets' vectors held in memory for nearest-neighbour search, on a worker thread (worker.js):
// an HNSW graph finds candidates (or, for a set whose graph misses too many neighbours, a scan of
// the vectors' int8 directions: CALIBRATION), and their exact distances rank them. Built and kept
// current from the dataset's change log as mirrors.ts describes; until a dataset's vectors are
// held, and for the searches they do not serve (filters, the manhattan metric), pgvector answers
// (../semantic.ts).
//
// Held in memory because a walk of pgvector's graph costs several milliseconds of the database's
// CPU per search (and in embedded mode the one thread PGlite runs on), which capped concurrent
// searches; the graph here is walked in native code, over int8 copies, in well under one.
import { readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import * as Comlink from 'comlink';
import nodeEndpoint from 'comlink/dist/esm/node-adapter.mjs';
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { datasetConfig } from '../../../domain/datasetConfig.js';
import type { DatasetRow } from '../../../domain/datasets.js';
import { type DistanceMetric, HELD_METRICS } from '../../../store/vectors.js';
import { packIds } from '../../chunkIdWords.js';
import { type Mirror, Mirrors } from '../mirrors.js';
import { deliver, handoff as handoffFor } from './handoff.js';
import { storedConfiguration, type VectorPage, vectorsOf, vectorsPage } from './store.js';

/** Vectors read per page while building. */
const BUILD_PAGE = 4000;
/** Bytes held across datasets; the least recently searched go first. */
const BYTES_BUDGET = 4 * 2 ** 30;
/**
 * The graph: 32 links a node, 200 candidates kept while inserting, 384 while searching; int8 copies
 * for cosine (compared by direction, which int8 keeps well), half floats for the others. Chosen on
 * the local model's vectors (bench/README.md): the exact ranking of 100 candidates repairs what
 * int8 blurs, and a wider search list costs far less here than a walk of pgvector's graph.
 */
export const GRAPH = { connectivity: 32, expansionAdd: 200, expansionSearch: 384 };
/** Keys of lists sent to the worker remembered at most (nearestInList). */
const MOST_SENT_LISTS = 64;
/** Candidates taken from the graph for a search, at least; they are then ranked exactly. */
const MIN_CANDIDATES = 100;

/**
 * When a cosine set's searches scan its int8 codes instead of walking the graph (worker.js,
 * scanFor): until its graph has been found to reach `target` of the true top 10 on the set's last
 * `queries` searches in less time than the scan took on them (the scan's time weighed by
 * `scanWeight`, which tests raise), when the scan reads at most `scanBytes`. A small set's scan is
 * exact and faster than the walk: at 5,000 and 20,000 of the built-in embedder's vectors, a scan by
 * column took a quarter of the walk's time (bench/held-sweep.ts). That is 64 MiB, some 8-10 ms
 * here: every code of about 170,000 vectors of 384 dimensions, or the codes of a query's nonzero
 * components only (a scan by column) of up to 1,600,000 vectors for a query with 40 (the built-in
 * embedder's 2-4 word queries have fewer). Beyond, the graph is walked, its recall short (the scan
 * answers while the graph grows). Calibrated again once the graph grew or shrank by `regrowth`
 * since. The graph grows behind the set over its first `trialSlots` only, and whole once that trial
 * reaches `target` (a graph's recall falls as it grows, so a trial that falls short foretells the
 * whole) or a search's scan would read more than `scanBytes`: the built-in embedder's graph, which
 * its sets never walk, cost over an hour of both cores at a million. A scan by column that reads at
 * least `splitBytes` (8 MiB, some 1.5 ms of one core here) is offered to helper threads
 * (helpers.js); below, waking a helper costs more of the machine than it saves a search.
 * Mutable for tests.
 */
export const CALIBRATION = {
  target: 0.95,
  queries: 32,
  regrowth: 0.2,
  trialSlots: 20_000,
  scanBytes: 64 * 2 ** 20,
  splitBytes: 8 * 2 ** 20,
  scanWeight: 1,
};

const shapeOf = (dimension: number, metric: DistanceMetric): Shape => ({
  dimension,
  metric,
  quantization: metric === 'cosine' ? 'i8' : 'f16',
  ...GRAPH,
});

/** How a search found its candidates: the graph's walk, or a scan of every code. */
export type FoundBy = 'graph' | 'scan';

export interface Nearest {
  /** Nearest first, ties by id. */
  ids: string[];
  distances: Float64Array;
  /** false: the graph found fewer candidates than it was asked for. */
  complete: boolean;
  by: FoundBy;
}

/** The `n` nearest of two answers over different chunks, nearest first, ties by id; complete as `walked` is. */
function nearestOf(walked: Nearest, other: Nearest, n: number): Nearest {
  const both = [...walked.ids.map((id, i) => ({ id, distance: walked.distances[i] })), ...other.ids.map((id, i) => ({ id, distance: other.distances[i] }))];
  both.sort((a, b) => a.distance - b.distance || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const best = both.slice(0, n);
  return { ids: best.map((b) => b.id), distances: Float64Array.from(best, (b) => b.distance), complete: walked.complete, by: walked.by };
}

/**
 * Whether a scan of the codes by column may be offered to the worker's helper threads: at once
 * (true, the default), once the keyword list is handed over ('delivered': hybrid's BM25 walk on
 * the service's thread has then let go of the other core; see nearestWith), or not (false: other
 * searches in flight need the other core, and a helper would compete with them for it).
 */
export interface ScanSharing {
  shareScan?: boolean | 'delivered';
}

interface Stats {
  chunks: number;
  slots: number;
  /** The graph's recall@10 against a scan when last calibrated (null: not yet). */
  recall: number | null;
  /** Whether the graph's walk, whole, was then faster than the scan. */
  walkFaster: boolean;
  /** Slots the graph holds (those below), and whether it is growing. */
  graphed: number;
  growing: boolean;
  /** Scans by column that helper threads joined. */
  sharedScans: number;
}

/** What a set of vectors is made with: kept sets made otherwise are read again from the database. */
interface Shape {
  dimension: number;
  metric: DistanceMetric;
  quantization: 'i8' | 'f16';
  connectivity: number;
  expansionAdd: number;
  expansionSearch: number;
}

/** The file beside kept vectors that holds their shape. */
const SHAPE_FILE = 'shape.json';

interface VectorWorker {
  create(handle: number, options: object): void;
  save(handle: number, dir: string): void;
  restore(handle: number, options: object, dir: string): Stats;
  add(handle: number, ids: string[], vectors: Float32Array): Stats;
  remove(handle: number, ids: string[]): Stats;
  nearest(
    handle: number,
    query: Float32Array,
    k: number,
    candidates: number,
    also: Int32Array,
    shareScan?: boolean | 'delivered',
    handoff?: Int32Array,
  ): Nearest;
  nearestIn(handle: number, query: Float32Array, k: number, key: string, also: Int32Array | null): Nearest | null;
  stats(handle: number): Stats;
  release(handle: number): void;
}

/** A dataset's vectors as the worker holds them. */
export class HeldVectors implements Mirror {
  version = 0;
  chunks = 0;
  private slots = 0;
  /** The keys of the lists sent to the worker since the set last changed (nearestInList). */
  private sentLists = new Set<string>();

  constructor(
    private readonly worker: Comlink.Remote<VectorWorker>,
    private readonly handle: number,
    readonly dimension: number,
    readonly metric: DistanceMetric,
  ) {}

  get deadShare(): number {
    return this.slots === 0 ? 0 : (this.slots - this.chunks) / this.slots;
  }

  /** Bytes: each vector, its quantized copy (and under cosine its codes by row and by column), its links and its id. */
  get size(): number {
    return this.slots * (this.dimension * (4 + 3) + GRAPH.connectivity * 2 * 4 + 100);
  }

  /** The last calibration: the graph's recall@10 against a scan, and whether its walk was the faster (null: none yet). */
  async calibration(): Promise<{ recall: number; walkFaster: boolean } | null> {
    const { recall, walkFaster } = await this.worker.stats(this.handle);
    return recall === null ? null : { recall, walkFaster };
  }

  /** Slots the graph holds (the set's first), and whether it is growing further. */
  async graph(): Promise<{ graphed: number; growing: boolean }> {
    const { graphed, growing } = await this.worker.stats(this.handle);
    return { graphed, growing };
  }

  /** Scans by column that helper threads joined. */
  async sharedScans(): Promise<number> {
    return (await this.worker.stats(this.handle)).sharedScans;
  }

  async add(page: VectorPage): Promise<void> {
    this.took(await this.worker.add(this.handle, page.ids, Comlink.transfer(page.vectors, [page.vectors.buffer])));
  }

  async remove(ids: string[]): Promise<void> {
    this.took(await this.worker.remove(this.handle, ids));
  }

  /**
   * The `k` nearest among the graph's best candidates and the chunks `also`, by exact distance;
   * with the chunks delivered to `handoff` (handoff.js) before the candidates were found.
   */
  nearest(query: Float32Array, k: number, also: string[], { shareScan = true }: ScanSharing = {}, handoff?: Int32Array): Promise<Nearest> {
    return this.worker.nearest(this.handle, query, k, Math.max(k, MIN_CANDIDATES), packIds(also), shareScan, handoff);
  }

  /**
   * The `k` nearest among the graph's best candidates and the chunks `also` names (at most `k`), by
   * exact distance: the graph is walked (or the codes scanned) on the worker while `also` makes its
   * list. A list made before the candidates are found is handed to the worker (handoff.js), which
   * ranks its chunks with them (and a scan to be shared once it is delivered takes a helper from
   * then on); the chunks of a list made later that the walk did not bring are measured after, by a
   * second call.
   */
  async nearestWith(query: Float32Array, k: number, also: () => Promise<string[]>, sharing: ScanSharing = {}): Promise<Nearest> {
    const words = handoffFor(k);
    const walking = this.nearest(query, k, [], sharing, words);
    // Awaited below; not left unhandled should it fail while `also` runs.
    walking.catch(() => undefined);
    const named = await also();
    if (deliver(words, packIds(named))) return walking;
    const found = await walking;
    const brought = new Set(found.ids);
    const extra = named.filter((id) => !brought.has(id));
    return extra.length === 0 ? found : nearestOf(found, await this.nearestAmong(query, k, packIds(extra)), k);
  }

  /** The `k` nearest of the chunks `among` (their ids' words, chunkIdWords.js), by exact distance (no graph). */
  nearestAmong(query: Float32Array, k: number, among: Int32Array): Promise<Nearest> {
    return this.worker.nearest(this.handle, query, k, 0, among);
  }

  /**
   * The `k` nearest of a list of chunks searched again and again (a frequent filter's), by exact
   * distance, as `nearestAmong`: the worker keeps the list ready under `key` until the set changes,
   * so that later searches of it send the key alone; `list` (the chunks' ids' words) is made only
   * when the worker does not hold it. `key` must name the same chunks while the set is unchanged
   * (the set's version in it, say).
   */
  async nearestInList(query: Float32Array, k: number, key: string, list: () => Int32Array): Promise<Nearest> {
    if (this.sentLists.has(key)) {
      const found = await this.worker.nearestIn(this.handle, query, k, key, null);
      if (found) return found;
    }
    // Kept few: the worker keeps fewer still, and a key it let go costs one call more.
    if (this.sentLists.size >= MOST_SENT_LISTS) this.sentLists.clear();
    this.sentLists.add(key);
    return (await this.worker.nearestIn(this.handle, query, k, key, list()))!;
  }

  /** Writes the vectors and their graph into `dir`. */
  save(dir: string): Promise<void> {
    return this.worker.save(this.handle, dir);
  }

  release(): void {
    this.worker.release(this.handle).catch(() => undefined);
  }

  /** Takes the worker's counts after it changed what it holds. */
  took(stats: Stats): void {
    // The worker forgot its lists when the set changed.
    this.sentLists.clear();
    this.chunks = stats.chunks;
    this.slots = stats.slots;
  }
}

/** The datasets' vectors held in memory, and the worker that holds them. */
export class VectorIndexes extends Mirrors<HeldVectors> {
  private thread: Worker | null = null;
  private worker: Comlink.Remote<VectorWorker> | null = null;
  private handles = 0;

  /** `keptDir`: see Mirrors; kept vectors spare the next start building the graph again (minutes of CPU at a million). */
  constructor(
    db: Knex,
    private readonly logger: Logger,
    keptDir: string | null = null,
  ) {
    super(
      db,
      logger,
      {
        what: 'vectors',
        budget: BYTES_BUDGET,
        load: async (datasetId, more) => {
          const config = await storedConfiguration(db, datasetId);
          if (!config) throw new Error(`no dataset ${datasetId}`);
          const held = await this.hold(config.EMBEDDING_SIZE, config.DISTANCE_METRIC);
          for (let after: string | null = null; ; ) {
            const { page, last, read } = await vectorsPage(db, datasetId, held.dimension, after, BUILD_PAGE);
            await held.add(page);
            if (read < BUILD_PAGE || !more(held)) return held;
            after = last;
          }
        },
        apply: async (held, datasetId, changed) => {
          const now = await vectorsOf(db, datasetId, held.dimension, changed);
          const present = new Set(now.ids);
          await held.remove(changed.filter((id) => !present.has(id)));
          await held.add(now);
        },
        keep: (held, dir) => this.keep(held, dir),
        restore: (datasetId, dir) => this.restore(db, datasetId, dir),
      },
      keptDir,
    );
  }

  /** Whether a dataset of this metric is served from memory. */
  static serves(metric: DistanceMetric): boolean {
    return HELD_METRICS.has(metric);
  }

  /** Follows the dataset's writes (mirrors.ts) when its vectors are searched from memory. */
  followDataset(dataset: DatasetRow): void {
    const config = datasetConfig(dataset);
    if (config.SEMANTIC_ENABLED && VectorIndexes.serves(config.DISTANCE_METRIC)) this.follow(dataset.id);
  }

  /** The dataset's vectors, current (`seen`: as Mirrors.current), when they are held in the shape the dataset has now; else null. */
  async held(datasetId: string, dimension: number, metric: DistanceMetric, seen?: number): Promise<HeldVectors | null> {
    if (!VectorIndexes.serves(metric)) return null;
    const held = await this.current(datasetId, seen);
    if (held && (held.dimension !== dimension || held.metric !== metric)) {
      // Its shape changed while it held no chunks: read it again.
      this.drop(datasetId);
      return null;
    }
    return held;
  }

  /** The dataset's vectors as held now, unchecked (see Mirrors.settled), when in the shape it has now. */
  settledHeld(datasetId: string, dimension: number, metric: DistanceMetric): HeldVectors | null {
    const held = this.settled(datasetId);
    return held && held.dimension === dimension && held.metric === metric ? held : null;
  }

  override async close(): Promise<void> {
    await super.close();
    await this.thread?.terminate();
    this.thread = null;
    this.worker = null;
  }

  /** A new set of vectors on the worker: empty, or the one kept in `keptIn`. */
  private async hold(dimension: number, metric: DistanceMetric, keptIn?: string): Promise<HeldVectors> {
    if (!VectorIndexes.serves(metric)) throw new Error(`vectors of the ${metric} metric are not held in memory`);
    const worker = this.started();
    const handle = ++this.handles;
    const options = { ...shapeOf(dimension, metric), threads: os.availableParallelism(), calibration: { ...CALIBRATION } };
    const held = new HeldVectors(worker, handle, dimension, metric);
    if (keptIn) held.took(await worker.restore(handle, options, keptIn));
    else await worker.create(handle, options);
    return held;
  }

  /** Writes the vectors, their graph and the shape they were made in into `dir`. */
  private async keep(held: HeldVectors, dir: string): Promise<void> {
    await held.save(dir);
    await writeFile(path.join(dir, SHAPE_FILE), JSON.stringify(shapeOf(held.dimension, held.metric)));
  }

  /** The vectors kept in `dir`, if made in the shape the dataset's would be made in now. */
  private async restore(db: Knex, datasetId: string, dir: string): Promise<HeldVectors | null> {
    const config = await storedConfiguration(db, datasetId);
    if (!config || !VectorIndexes.serves(config.DISTANCE_METRIC)) return null;
    const shape = JSON.stringify(shapeOf(config.EMBEDDING_SIZE, config.DISTANCE_METRIC));
    if ((await readFile(path.join(dir, SHAPE_FILE), 'utf8')) !== shape) return null;
    return this.hold(config.EMBEDDING_SIZE, config.DISTANCE_METRIC, dir);
  }

  private started(): Comlink.Remote<VectorWorker> {
    if (!this.worker) {
      const thread = new Worker(new URL('./worker.js', import.meta.url));
      // The service must not wait on a worker that holds nothing it has to finish.
      thread.unref();
      thread.on('error', (error) => {
        // Everything it held is gone: searches go to pgvector until the vectors are read again.
        this.logger.error({ err: error }, 'the vector worker failed; its datasets are read again');
        this.thread = null;
        this.worker = null;
        this.forgetAll();
      });
      this.thread = thread;
      this.worker = Comlink.wrap<VectorWorker>(nodeEndpoint(this.thread));
    }
    return this.worker;
  }
}
