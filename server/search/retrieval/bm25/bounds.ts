// The arithmetic that lets BM25 read few postings and still return the exact top k.
//
// A chunk's score is Σ weight(t) · impact(tf, len) over the query terms t it holds, weight = idf
// times the term's boost. Once some chunk is known to score θ, a chunk can only reach the top k if
// it scores at least θ; splitting θ into per-term floors θ_t with Σ θ_t = θ, such a chunk must have
// weight(t) · impact ≥ θ_t for at least one term (else its sum stays below θ). Terms whose most
// possible part adds up to less than θ get no floor of their own (MaxScore: a chunk holding only
// those cannot reach θ), the rest share what is left of θ in proportion to their most possible part.
// A floor on impact is, per term frequency, a longest length (impact falls as length grows): the
// postings index (migration 014) reads exactly those postings as ranges.

export interface Bm25Parameters {
  k1: number;
  b: number;
  averageLength: number;
}

/** tf·(k1 + 1) / (tf + k1·(1 − b + b·len/avg)): a term's part of a chunk's score before its weight. */
export function impact(tf: number, length: number, { k1, b, averageLength }: Bm25Parameters): number {
  return (tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * length) / averageLength));
}

/** The most impact any of a term's postings has, from the shortest chunk at each of its term frequencies. */
export function mostImpact(shortest: { tf: number; length: number }[], parameters: Bm25Parameters): number {
  return shortest.reduce((most, { tf, length }) => Math.max(most, impact(tf, length, parameters)), 0);
}

/** Postings of term frequency tfFrom..tfTo and length at most maxLength. */
export interface PostingRange {
  tfFrom: number;
  tfTo: number;
  maxLength: number;
}

/** Term frequencies are stored as smallint; lengths as integer. */
const MAX_TF = 32_767;
export const MAX_LENGTH = 2_147_483_647;
/** Term frequencies given a range each; above, one range takes the rest (they are rare). */
const RANGED_TF = 32;

/** The longest length at which `tf` occurrences reach `floor` (−1: none does; MAX_LENGTH: every one). */
export function longestReaching(tf: number, floor: number, parameters: Bm25Parameters): number {
  if (floor <= 0) return MAX_LENGTH;
  const { k1, b, averageLength } = parameters;
  if (k1 * b === 0) return impact(tf, tf, parameters) >= floor ? MAX_LENGTH : -1;
  const length = (averageLength * ((tf * (k1 + 1)) / floor - tf - k1 * (1 - b))) / (k1 * b);
  if (!Number.isFinite(length) || length >= MAX_LENGTH) return MAX_LENGTH;
  // A hair longer than the arithmetic says: reading a posting too many costs nothing but time.
  return Math.floor(length * (1 + 1e-9) + 1e-6);
}

/** Every posting whose impact reaches `floor`, as ranges (a superset by at most rounding). */
export function rangesReaching(floor: number, parameters: Bm25Parameters): PostingRange[] {
  // Impact stays below k1 + 1 (k1 = 0: it is 1 for any posting).
  if (parameters.k1 > 0 ? floor >= parameters.k1 + 1 : floor > 1) return [];
  const ranges: PostingRange[] = [];
  for (let tf = 1; tf <= RANGED_TF; tf++) {
    const longest = longestReaching(tf, floor, parameters);
    // Longer with every tf: once every length qualifies, every higher tf does too.
    if (longest === MAX_LENGTH) return [...ranges, { tfFrom: tf, tfTo: MAX_TF, maxLength: MAX_LENGTH }];
    if (longest >= tf) ranges.push({ tfFrom: tf, tfTo: tf, maxLength: longest });
  }
  return [...ranges, { tfFrom: RANGED_TF + 1, tfTo: MAX_TF, maxLength: MAX_LENGTH }];
}

export interface TermBound {
  /** idf times the term's boost factor. */
  weight: number;
  /** The most impact any of its postings has (mostImpact). */
  most: number;
}

/**
 * Per term, the impact its postings must reach for their chunks to possibly score `threshold`
 * (Infinity: none needs reading), as the header describes.
 */
export function impactFloors(threshold: number, terms: TermBound[]): number[] {
  if (!(threshold > 0)) return terms.map(() => 0);
  const most = terms.map((t) => t.weight * t.most);
  const order = terms.map((_, i) => i).sort((x, y) => most[x] - most[y]);
  const floors = terms.map(() => Infinity);
  let below = 0;
  let first = 0;
  // Strictly below θ: a chunk tied at θ could still win on its id.
  while (first < order.length && below + most[order[first]] < threshold) below += most[order[first++]];
  const essential = order.slice(first);
  const share = essential.reduce((sum, i) => sum + most[i], 0);
  for (const i of essential) floors[i] = ((threshold - below) * (most[i] / share)) / terms[i].weight;
  return floors;
}

/** Where a term's leading postings (highest tf, then shortest) stopped: every posting before is read. */
export interface ReadEdge {
  /** Every posting of the term was read. */
  exhausted: boolean;
  tf: number;
  length: number;
}

/** Whether the leading postings read hold every posting of the ranges. */
export function covers(edge: ReadEdge, ranges: PostingRange[]): boolean {
  if (edge.exhausted) return true;
  return ranges.every((r) => r.tfFrom > edge.tf || (r.tfTo === edge.tf && r.tfFrom === edge.tf && r.maxLength < edge.length));
}
