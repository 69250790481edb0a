// Types of columns.js (plain JavaScript, loaded by the vectors' worker).
export class ColumnCodes {
  constructor(dimension: number, rows: number);
  /** Writes the codes of `slot` from `codes[at..at + dimension]` (throws a RangeError when the memory cannot grow). */
  write(slot: number, codes: Int8Array, at: number): void;
  /** Zeroes the codes of `slot`. */
  clear(slot: number): void;
  /** The `n` slots of the largest inner product with `query`, in no order, among those `ids` names (null: removed). */
  best(query: Int8Array, n: number, ids: readonly (string | null)[]): Int32Array;
  /** Hands the set's memory back for sets made later. */
  release(): void;
}
