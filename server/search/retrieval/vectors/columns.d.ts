// Types of columns.js (plain JavaScript, loaded by the vectors' worker).
export class ColumnCodes {
  /** `rows`: a block's, a multiple of 32. `splitBytes`: codes a scan reads at and above which helper threads may join it (at most `threads` - 1 of them). */
  constructor(dimension: number, rows: number, sharing?: { threads?: number; splitBytes?: number });
  /** Scans that helpers joined. */
  readonly shared: number;
  /** Whether some block is sealed (4-bit codes): a scan's sums are then estimates. */
  readonly estimates: boolean;
  /** Writes the codes of `slot` from `codes[at..at + dimension]`, sealing its block after its last row (throws a RangeError when the memory cannot grow). */
  write(slot: number, codes: Int8Array, at: number): void;
  /** Zeroes the codes of `slot`, which scans then leave out. */
  clear(slot: number): void;
  /**
   * The `n` slots below `slots` whose held codes have the largest inner product with `query` (estimated in sealed blocks), in no order;
   * `shared`: whether helpers may join the scan; when not, with a keyword list's `handoff` (handoff.js), they join once it is delivered.
   */
  best(query: Int8Array, n: number, slots: number, shared?: boolean, handoff?: Int32Array | null): Int32Array;
  /** Hands the set's memory back for sets made later. */
  release(): void;
}
