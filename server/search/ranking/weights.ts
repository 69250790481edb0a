// `use_weights`: a chunk's own weight multiplies its score. A weight of 0 is the default of a chunk
// nobody weighed, so it counts as 1 (as in the reference), not as "never show this".
import type { Candidate } from './candidates.js';

export function weightFactor(candidate: Candidate): number {
  return candidate.weight === 0 ? 1 : candidate.weight;
}
