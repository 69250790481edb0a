// How many chunks a dataset has, for idf (N in ln(1 + (N − df + 0.5) / (df + 0.5))). Counting costs
// a pass over the dataset's index entries on every search (4 ms at 5,000 chunks on PGlite, about
// 14 ms at 100,000 on PostgreSQL), while N moves idf by little (it enters through a logarithm), so
// each process counts a large dataset at most once every SIZE_TTL_MS: between counts the figure may
// lag the dataset's writes by that long, as search engines' collection statistics lag their
// indexing. A small dataset costs little to count and changes a lot in relative terms (a new
// dataset being filled): it is counted on every search.

/** How long a dataset's count is used before it is taken again. */
export const SIZE_TTL_MS = 5_000;
/** Datasets of fewer chunks are counted every time. */
export const SIZE_KEPT_FROM = 1_000;
/** Datasets remembered at most; the oldest count goes first. */
const MAX_DATASETS = 10_000;

export interface SizeCache {
  /** The count of `key`, from `count` unless one younger than the TTL is at hand. */
  get(key: string, count: () => Promise<number>): Promise<number>;
}

export function sizeCache(ttlMs = SIZE_TTL_MS, now: () => number = Date.now, keptFrom = SIZE_KEPT_FROM): SizeCache {
  const counts = new Map<string, { at: number; size: Promise<number> }>();
  const forget = (key: string, size: Promise<number>) => counts.get(key)?.size === size && counts.delete(key);
  return {
    get(key, count) {
      const known = counts.get(key);
      if (known && now() - known.at < ttlMs) return known.size;
      // Searches arriving while a count runs share it; a failed or small count is not kept.
      const size = count();
      counts.delete(key);
      counts.set(key, { at: now(), size });
      size.then(
        (n) => n < keptFrom && forget(key, size),
        () => forget(key, size),
      );
      if (counts.size > MAX_DATASETS) counts.delete(counts.keys().next().value!);
      return size;
    },
  };
}

/** The process's counts of datasets' chunks, by lexical engine (each counts where its documents are). */
export const datasetSizes = sizeCache();
