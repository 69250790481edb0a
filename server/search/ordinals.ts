// Ascending lists of chunk ordinals, as the in-memory indexes hold them (posting lists, tag lists).

/** The first position from `from` on, below `size`, whose ordinal is at least `ordinal` (galloping, then halving). */
export function seekOrdinal(ordinals: Int32Array, size: number, from: number, ordinal: number): number {
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
