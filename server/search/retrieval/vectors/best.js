// The highest scores of a scan of the held vectors' codes (rows.js, columns.js). Plain JavaScript,
// loaded by the vectors' worker.
//
// Scores that tie are ordered by slot, the lower first: the best of a scan shared between threads
// (helpers.js) are then the same slots as a scan alone's, whichever thread met them first.

/** The `n` highest (score, then lower slot) offered: a heap with the lowest on top. */
export class Best {
  constructor(n) {
    this.n = n;
    this.size = 0;
    this.slotsHeld = new Int32Array(n);
    this.scores = new Int32Array(n);
  }

  /**
   * A score that every one kept beats or ties (-2^31 until `n` are kept): a scan offers no slot
   * below it, nor one at it after the slots kept (takes says which).
   */
  threshold() {
    return this.size === this.n && this.n > 0 ? this.scores[0] : -(2 ** 31);
  }

  /** Whether (slot, score) would be kept. */
  takes(score, slot) {
    if (this.size < this.n) return true;
    return this.n > 0 && (score > this.scores[0] || (score === this.scores[0] && slot < this.slotsHeld[0]));
  }

  /** Keeps (slot, score), which takes allowed, and lets the lowest go if `n` were kept. */
  offer(slot, score) {
    if (this.size === this.n) {
      this.sink(slot, score);
      return;
    }
    let i = this.size++;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!below(score, slot, this.scores[parent], this.slotsHeld[parent])) break;
      this.slotsHeld[i] = this.slotsHeld[parent];
      this.scores[i] = this.scores[parent];
      i = parent;
    }
    this.slotsHeld[i] = slot;
    this.scores[i] = score;
  }

  /** Replaces the lowest with (slot, score) and restores the heap. */
  sink(slot, score) {
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= this.size) break;
      const right = left + 1;
      const child = right < this.size && below(this.scores[right], this.slotsHeld[right], this.scores[left], this.slotsHeld[left]) ? right : left;
      if (!below(this.scores[child], this.slotsHeld[child], score, slot)) break;
      this.slotsHeld[i] = this.slotsHeld[child];
      this.scores[i] = this.scores[child];
      i = child;
    }
    this.slotsHeld[i] = slot;
    this.scores[i] = score;
  }

  /** The slots, in no order. */
  slots() {
    return this.slotsHeld.subarray(0, this.size);
  }
}

/** Whether (score a, slot a) ranks below (score b, slot b): a lower score, or the same at a higher slot. */
function below(scoreA, slotA, scoreB, slotB) {
  return scoreA < scoreB || (scoreA === scoreB && slotA > slotB);
}
