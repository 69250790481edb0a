// Helpers shared by the ranking stages.
import type { Hit } from '../types.js';

/** Best score first; equal scores keep their previous order (the sort is stable). */
export function byScore(hits: Hit[]): Hit[] {
  return [...hits].sort((a, b) => b.score - a.score);
}

/** Values spread over [0, 1] (min to max); all 1 when they are all equal. */
export function normalized(values: number[]): number[] {
  let min = Infinity;
  let max = -Infinity;
  for (const v of values) {
    if (v < min) min = v;
    if (v > max) max = v;
  }
  return values.map((v) => (max > min ? (v - min) / (max - min) : 1));
}
