// Chunk ids (UUIDs) to the slots of their held vectors: an open-addressing table over one typed
// array. A Map of a million string keys costs a few cache misses and a string comparison a look-up;
// here a look-up is a hash of the id's four words (chunkIdWords.js) and, mostly, one probe, whose
// entry holds the id's words and its slot side by side: one cache line read, where keys and slots
// in arrays of their own took two (at a million ids, 10,000 look-ups took 1.8 ms so, 0.9 ms side
// by side, in a scratch timing).
// Plain JavaScript, as the worker that uses it.
import { ID_WORDS, writeIdWords } from '../../chunkIdWords.js';

/** An entry: the id's four words, then its slot. */
const STRIDE = ID_WORDS + 1;
const EMPTY = -1;

export class SlotTable {
  constructor(capacity = 1024) {
    this.allocate(capacity);
    /** The id being set or deleted, as words. */
    this.words = new Int32Array(ID_WORDS);
  }

  allocate(capacity) {
    this.mask = capacity - 1;
    this.entries = new Int32Array(capacity * STRIDE);
    for (let i = ID_WORDS; i < this.entries.length; i += STRIDE) this.entries[i] = EMPTY;
    this.size = 0;
  }

  /** The entry of the id at `words[at..at+4]`, or the empty one where it would go. */
  find(words, at) {
    const a = words[at];
    const b = words[at + 1];
    const c = words[at + 2];
    const d = words[at + 3];
    const entries = this.entries;
    for (let i = home(a, b, c, d) & this.mask; ; i = (i + 1) & this.mask) {
      const e = i * STRIDE;
      if (entries[e + ID_WORDS] === EMPTY || (entries[e] === a && entries[e + 1] === b && entries[e + 2] === c && entries[e + 3] === d)) return i;
    }
  }

  /** The slot of the id at `words[at..at+4]` (-1: none held). */
  slotAt(words, at) {
    return this.entries[this.find(words, at) * STRIDE + ID_WORDS];
  }

  /** The slot of the id (-1: none held, or not a UUID). */
  get(id) {
    return writeIdWords(id, this.words, 0) ? this.slotAt(this.words, 0) : EMPTY;
  }

  set(id, slot) {
    // Grown first: growing reuses the words the id is read into.
    if ((this.size + 1) * 2 > this.mask + 1) this.grow();
    if (!writeIdWords(id, this.words, 0)) throw new Error(`not a chunk id: ${id}`);
    this.put(this.words, 0, slot);
  }

  put(words, at, slot) {
    const e = this.find(words, at) * STRIDE;
    if (this.entries[e + ID_WORDS] === EMPTY) {
      this.entries.set(words.subarray(at, at + ID_WORDS), e);
      this.size++;
    }
    this.entries[e + ID_WORDS] = slot;
  }

  delete(id) {
    if (!writeIdWords(id, this.words, 0)) return;
    const entries = this.entries;
    let i = this.find(this.words, 0);
    if (entries[i * STRIDE + ID_WORDS] === EMPTY) return;
    this.size--;
    // Backward shift: the entries after it that probed past it move up, so no probe stops early.
    for (let j = (i + 1) & this.mask; entries[j * STRIDE + ID_WORDS] !== EMPTY; j = (j + 1) & this.mask) {
      const e = j * STRIDE;
      const at = home(entries[e], entries[e + 1], entries[e + 2], entries[e + 3]) & this.mask;
      // Moved only if its home is not between the hole and it (cyclically).
      if ((j > i && (at <= i || at > j)) || (j < i && at <= i && at > j)) {
        entries.copyWithin(i * STRIDE, e, e + STRIDE);
        i = j;
      }
    }
    entries[i * STRIDE + ID_WORDS] = EMPTY;
  }

  grow() {
    const old = this.entries;
    this.allocate((this.mask + 1) * 2);
    for (let e = 0; e < old.length; e += STRIDE) if (old[e + ID_WORDS] !== EMPTY) this.put(old, e, old[e + ID_WORDS]);
  }
}

/** The first entry probed for an id's words (before masking). Mixed, so that ids that are not random (sequential ones) spread over the table too. */
function home(a, b, c, d) {
  let h = Math.imul(a ^ Math.imul(b, 0x9e3779b1) ^ Math.imul(c, 0x85ebca77) ^ Math.imul(d, 0xc2b2ae3d), 0x27d4eb2f);
  h ^= h >>> 15;
  return h;
}
