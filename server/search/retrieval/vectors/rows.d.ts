// Types of rows.js (plain JavaScript, loaded by the vectors' worker).
export interface QueryCodes {
  codes: Int16Array;
  /** Codes per unit of the vector's components. */
  scale: number;
  /** The norm of what the codes miss of the vector. */
  error: number;
  /** The sum of the vector's components' magnitudes. */
  magnitudes: number;
}

/** Rows copied one after another (RowCodes.gather). */
export interface GatheredRows {
  readonly at: number;
  readonly bytes: number;
  readonly n: number;
}

export class RowCodes {
  constructor(dimension: number, rows: number);
  /** Codes a row (the dimension rounded up to 16). */
  readonly width: number;
  /** Writes the codes of `slot` from `codes[at..at + dimension]` (throws a RangeError when the memory cannot grow). */
  write(slot: number, codes: Int8Array, at: number): void;
  /** Zeroes the codes of `slot`. */
  clear(slot: number): void;
  /** For each query (int8 codes, `width` apiece), the `counts[i]` slots of the largest inner products, in no order, among those `ids` names (null: removed). */
  best(queries: Int8Array, counts: number[], ids: readonly (string | null)[]): Int32Array[];
  /** The i16 codes of a unit vector, for `products`. */
  queryCodes(unit: ArrayLike<number>): QueryCodes;
  /** The inner products of the query's codes with the rows of each of `slots`, in their order. */
  products(query: QueryCodes, slots: Int32Array): Int32Array;
  /** The rows of `slots` copied one after another, for `gatheredProducts` (throws a RangeError when the memory cannot grow). */
  gather(slots: Int32Array): GatheredRows;
  /** The inner products of the query's codes with the gathered rows, in their order. */
  gatheredProducts(query: QueryCodes, gathered: GatheredRows): Int32Array;
  /** Hands back the memory of rows `gather` copied. */
  releaseGathered(gathered: GatheredRows): void;
  /** Hands the set's memory back for sets made later. */
  release(): void;
}
