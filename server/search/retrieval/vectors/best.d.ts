// Types of best.js (plain JavaScript, loaded by the vectors' worker).
/** The `n` highest (score, then lower slot) offered. */
export class Best {
  constructor(n: number);
  readonly size: number;
  /** A score that every one kept beats or ties (-2^31 until `n` are kept). */
  threshold(): number;
  /** Whether (slot, score) would be kept. */
  takes(score: number, slot: number): boolean;
  /** Keeps (slot, score), which takes allowed, and lets the lowest go if `n` were kept. */
  offer(slot: number, score: number): void;
  /** The slots, in no order. */
  slots(): Int32Array;
}
