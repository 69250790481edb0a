// The highest scores of a scan of the held vectors' codes (rows.js, columns.js). Plain JavaScript,
// loaded by the vectors' worker.

/** The `n` highest scores offered: a heap with the lowest on top. */
export class Best {
  constructor(n) {
    this.n = n;
    this.size = 0;
    this.slotsHeld = new Int32Array(n);
    this.scores = new Int32Array(n);
  }

  /** The score to beat: the lowest kept once `n` are (before, the lowest there is). */
  threshold() {
    return this.size === this.n && this.n > 0 ? this.scores[0] : -(2 ** 31);
  }

  /** Whether `score` would be kept. */
  takes(score) {
    return this.size < this.n || (this.n > 0 && score > this.scores[0]);
  }

  offer(slot, score) {
    if (this.size === this.n) {
      this.sink(slot, score);
      return;
    }
    let i = this.size++;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (this.scores[parent] <= score) break;
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
      const child = right < this.size && this.scores[right] < this.scores[left] ? right : left;
      if (this.scores[child] >= score) break;
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
