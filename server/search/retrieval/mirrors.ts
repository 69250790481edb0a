// Indexes held in memory that mirror what the database holds of a dataset (BM25 postings, vectors),
// kept current from the dataset's change log (changes.ts).
//
// The database stays the truth. An index is built page by page (so an embedded database keeps
// answering other queries meanwhile) and remembers the dataset's version when it started; before
// each search it re-reads the chunks changed since, so a search sees every write committed before
// it. When too much of an index is dead, or the change log no longer reaches back far enough, it is
// built anew. Until an index is ready, searches go to SQL, which gives the same results.
//
// A kind may keep its indexes on disk when the service closes; the next start then reads a
// dataset's from there instead of the database, and the change log brings it up to date as it
// does any index that has fallen behind.
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { changesSince, datasetVersion } from './changes.js';

/** The file beside a kept index that holds the version it reflects. */
const KEPT_VERSION = 'version.json';

/** What the manager asks of an index. */
export interface Mirror {
  /** The dataset version this index reflects (every change up to it is applied). */
  version: number;
  /** Live chunks held. */
  readonly chunks: number;
  /** The share of its slots held by replaced or removed chunks. */
  readonly deadShare: number;
  /** What it holds, in the unit of its kind's budget. */
  readonly size: number;
  /** Frees what it holds outside the JavaScript heap; it is not used again. */
  release(): void;
}

/** One kind of index: how it is read from the database and kept current. */
export interface MirrorKind<I extends Mirror> {
  /** For logs: "BM25 postings". */
  what: string;
  /** The most all datasets' indexes of this kind may hold (in `size` units); the least recently searched go first. */
  budget: number;
  /** A new index holding the dataset's chunks, read page by page while `more(index)` says so. */
  load(datasetId: string, more: (index: I) => boolean): Promise<I>;
  /** Applies the changed chunks as they are now (removed when gone). */
  apply(index: I, datasetId: string, changed: string[]): Promise<void>;
  /** Writes the index into the empty directory `dir`, for `restore` at the next start. */
  keep?(index: I, dir: string): Promise<void>;
  /** The index `keep` wrote into `dir`; null when it was made otherwise than the dataset's would be now. */
  restore?(datasetId: string, dir: string): Promise<I | null>;
}

/** Rebuilt when this share of its slots is dead... */
const MOST_DEAD = 0.25;
/** ...or when more chunks than this share (and at least CATCH_UP_CHUNKS) changed since the last search. */
const MOST_CHANGED = 0.25;
const CATCH_UP_CHUNKS = 5000;
/** An index is settled (for searches started before it is checked) this long after a change was last applied to it. */
const SETTLED_MS = 1000;
/** After a build fails, searches use SQL this long before another is tried. */
const RETRY_AFTER_MS = 30_000;
/** After a dataset was found too large, this long. */
const TOO_LARGE_RETRY_MS = 3_600_000;

interface Entry<I> {
  index: I | null;
  building: Promise<void> | null;
  /** No build is tried before this time (after one failed, or found the dataset too large). */
  retryAt: number;
  /** Catch-ups run one after another, each from the version the last one reached. */
  caughtUp: Promise<unknown>;
  /** The catch-up queued behind the running one, not started yet: searches arriving meanwhile share it. */
  queued: Promise<I | null> | null;
  /** When a change was last applied to the index or it was swapped in (performance.now()). */
  changedAt: number;
}

/** The in-memory indexes of one kind for the datasets searched lately. */
export class Mirrors<I extends Mirror> {
  /** false: no index is built or used, every search runs in SQL (tests compare the two paths). */
  enabled = true;
  private readonly entries = new Map<string, Entry<I>>();
  private closed = false;

  /**
   * `keptDir`: where the indexes are kept when the service closes (null: nowhere), one directory a
   * dataset; the next start reads a dataset's from there, once, then deletes it.
   */
  constructor(
    private readonly db: Knex,
    private readonly log: Logger,
    private readonly kind: MirrorKind<I>,
    private readonly keptDir: string | null = null,
  ) {}

  /**
   * The dataset's index with every committed change applied; null while it is built (search in SQL).
   * `seen`: the dataset's version as the search read it in a statement of its own; an index that
   * has reached it is current for that search without another statement.
   */
  async current(datasetId: string, seen?: number): Promise<I | null> {
    if (!this.enabled) return null;
    const entry = this.entry(datasetId);
    if (!entry.index) {
      this.build(datasetId, entry);
      return null;
    }
    if (seen !== undefined && entry.index.version >= seen) return entry.index;
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

  /**
   * The dataset's index as held now, not checked against the database, when no change has been
   * applied to it for a while: a search may start on it while `current` checks. A dataset being
   * written has none: most answers started early would be made again after the catch-up.
   */
  settled(datasetId: string): I | null {
    const entry = this.entries.get(datasetId);
    return this.enabled && entry && performance.now() - entry.changedAt > SETTLED_MS ? entry.index : null;
  }

  /**
   * Brings the dataset's index up to date in the background, building it if there is none: called
   * after writes, so that the index grows with the data instead of being read whole at the first
   * search after a load.
   */
  follow(datasetId: string): void {
    this.current(datasetId).catch(() => undefined);
  }

  /** Builds the dataset's index if it has none and waits for it (for warming up, and tests). */
  async ready(datasetId: string): Promise<I | null> {
    const entry = this.entry(datasetId);
    if (!entry.index) await this.build(datasetId, entry);
    return this.current(datasetId);
  }

  /** Forgets the dataset's index (the dataset is deleted). */
  drop(datasetId: string): void {
    const entry = this.entries.get(datasetId);
    this.entries.delete(datasetId);
    if (entry?.index) this.retire(entry, entry.index);
    const kept = this.keptPath(datasetId);
    if (kept) rm(kept, { recursive: true, force: true }).catch(() => undefined);
  }

  /** Forgets every index without freeing it (what held them is gone). */
  protected forgetAll(): void {
    this.entries.clear();
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.entries.values()].map((e) => e.building));
    await Promise.all([...this.entries].map(([datasetId, entry]) => this.keepForNextStart(datasetId, entry)));
    for (const entry of this.entries.values()) if (entry.index) this.retire(entry, entry.index);
  }

  private keptPath(datasetId: string): string | null {
    return this.keptDir && this.kind.keep && this.kind.restore ? path.join(this.keptDir, datasetId) : null;
  }

  /** Keeps the dataset's index for the next start, whole or not at all (written aside, then renamed into place). */
  private async keepForNextStart(datasetId: string, entry: Entry<I>): Promise<void> {
    const dir = this.keptPath(datasetId);
    await entry.caughtUp;
    const index = entry.index;
    if (!dir || !index || !this.kind.keep) return;
    const writing = `${dir}.writing`;
    try {
      await rm(writing, { recursive: true, force: true });
      await mkdir(writing, { recursive: true });
      await this.kind.keep(index, writing);
      await writeFile(path.join(writing, KEPT_VERSION), JSON.stringify({ version: index.version }));
      await rm(dir, { recursive: true, force: true });
      await rename(writing, dir);
    } catch (error) {
      this.log.warn({ err: error, datasetId }, `keeping the ${this.kind.what} for the next start failed`);
      await rm(writing, { recursive: true, force: true }).catch(() => undefined);
    }
  }

  /** The dataset's entry, made most recently used. */
  private entry(datasetId: string): Entry<I> {
    const entry = this.entries.get(datasetId) ?? { index: null, building: null, retryAt: 0, caughtUp: Promise.resolve(), queued: null, changedAt: 0 };
    this.entries.delete(datasetId);
    this.entries.set(datasetId, entry);
    return entry;
  }

  /** Takes the index out of use, and frees it once the catch-ups and searches queued on it are done. */
  private retire(entry: Entry<I>, index: I): void {
    if (entry.index === index) entry.index = null;
    entry.caughtUp.then(() => index.release());
  }

  private async catchUp(datasetId: string, entry: Entry<I>): Promise<I | null> {
    const index = entry.index;
    if (!index) return null;
    const changes = await changesSince(this.db, datasetId, index.version);
    if (changes.version === index.version) return index;
    const reachesBack = changes.version > index.version && changes.firstKept === index.version + 1;
    const tooMany = changes.changed.length > Math.max(CATCH_UP_CHUNKS, index.chunks * MOST_CHANGED);
    if (!reachesBack || tooMany) {
      this.retire(entry, index);
      this.build(datasetId, entry);
      return null;
    }
    entry.changedAt = performance.now();
    await this.kind.apply(index, datasetId, changes.changed);
    // Chunks re-read here may already hold changes of later versions: applying those again is harmless.
    index.version = changes.version;
    if (index.deadShare > MOST_DEAD) this.build(datasetId, entry);
    return index;
  }

  /** Starts building the dataset's index unless a build runs or failed lately; the promise ends with it. */
  private build(datasetId: string, entry: Entry<I>): Promise<void> {
    if (entry.building) return entry.building;
    if (this.closed || Date.now() < entry.retryAt) return Promise.resolve();
    const building = this.buildAndSwap(datasetId, entry).finally(() => {
      entry.building = null;
    });
    entry.building = building;
    return building;
  }

  private async buildAndSwap(datasetId: string, entry: Entry<I>): Promise<void> {
    try {
      const index = await this.load(datasetId, entry);
      if (!index) return;
      // Swapped in between catch-ups, so none applies changes to an index it did not read.
      const swapped = entry.caughtUp.then(() => {
        const replaced = entry.index;
        entry.index = index;
        entry.changedAt = performance.now();
        if (replaced) replaced.release();
        this.evict(datasetId);
      });
      entry.caughtUp = swapped;
      await swapped;
    } catch (error) {
      entry.retryAt = Date.now() + RETRY_AFTER_MS;
      if (!this.closed) this.log.warn({ err: error, datasetId }, `building the in-memory ${this.kind.what} failed; searching in SQL`);
    }
  }

  /**
   * The dataset's index as of the version read first (later changes are caught up), or the one kept
   * at the last close when the dataset has not gone back past it; null if over budget or closed.
   */
  private async load(datasetId: string, entry: Entry<I>): Promise<I | null> {
    const version = await datasetVersion(this.db, datasetId);
    const index = (await this.restored(datasetId, version)) ?? (await this.read(datasetId, version));
    if (this.closed) {
      index.release();
      return null;
    }
    if (index.size > this.kind.budget) {
      this.log.warn({ datasetId, size: index.size }, `dataset too large to hold its ${this.kind.what} in memory; searching in SQL`);
      entry.retryAt = Date.now() + TOO_LARGE_RETRY_MS;
      index.release();
      return null;
    }
    return index;
  }

  private async read(datasetId: string, version: number): Promise<I> {
    const index = await this.kind.load(datasetId, (partial) => !this.closed && partial.size <= this.kind.budget);
    index.version = version;
    return index;
  }

  /**
   * The index kept at the last close, unless the dataset's version is now below its own (the
   * database went back); its files are deleted, read or not.
   */
  private async restored(datasetId: string, version: number): Promise<I | null> {
    const dir = this.keptPath(datasetId);
    if (!dir || !this.kind.restore) return null;
    try {
      const kept: { version: number } = JSON.parse(await readFile(path.join(dir, KEPT_VERSION), 'utf8'));
      if (!(kept.version <= version)) return null;
      const index = await this.kind.restore(datasetId, dir);
      if (index) index.version = kept.version;
      return index;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT')
        this.log.warn({ err: error, datasetId }, `the kept ${this.kind.what} cannot be read; reading the dataset`);
      return null;
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  /** Drops the least recently searched indexes until the budget holds, never `keep`'s. */
  private evict(keep: string): void {
    let total = 0;
    for (const entry of this.entries.values()) total += entry.index?.size ?? 0;
    for (const [datasetId, entry] of this.entries) {
      if (total <= this.kind.budget) return;
      if (datasetId === keep || !entry.index) continue;
      total -= entry.index.size;
      this.retire(entry, entry.index);
    }
  }
}
