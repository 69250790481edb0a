// Chunk ids (UUIDs) to the slots of their held vectors: an open-addressing table over typed
// arrays. A Map of a million string keys costs a few cache misses and a string comparison a
// look-up, and each id must first arrive as a string of its own; here a look-up is a hash of the
// id's 128 bits and, mostly, one probe, and the ids of a search arrive packed in one string (a
// filter passing ten thousand chunks made that many strings to copy between threads).
// Plain JavaScript, as the worker that uses it.

/** Characters of a UUID in its text form. */
export const ID_LENGTH = 36;

/** Each hex digit's value by character code (-1: not a hex digit). */
const HEX = new Int8Array(128).fill(-1);
for (let i = 0; i < 16; i++) {
  HEX['0123456789abcdef'.charCodeAt(i)] = i;
  HEX['0123456789ABCDEF'.charCodeAt(i)] = i;
}

/** Where the 32 hex digits of a UUID's text form are. */
const DIGITS = [...Array(ID_LENGTH).keys()].filter((i) => i !== 8 && i !== 13 && i !== 18 && i !== 23);

const EMPTY = -1;

export class SlotTable {
  constructor(capacity = 1024) {
    this.allocate(capacity);
    /** The id being looked up, as four 32-bit words. */
    this.words = new Uint32Array(4);
  }

  allocate(capacity) {
    this.mask = capacity - 1;
    this.keys = new Uint32Array(capacity * 4);
    this.slots = new Int32Array(capacity).fill(EMPTY);
    this.size = 0;
  }

  /** Reads the UUID at `text[at..]` into `this.words`; false if it is not one. */
  parse(text, at) {
    for (let w = 0; w < 4; w++) {
      let word = 0;
      for (let d = 0; d < 8; d++) {
        const code = text.charCodeAt(at + DIGITS[w * 8 + d]);
        const value = code < 128 ? HEX[code] : -1;
        if (value < 0) return false;
        word = (word << 4) | value;
      }
      this.words[w] = word >>> 0;
    }
    return true;
  }

  /** Where the parsed id is, or the empty entry where it would go. */
  find() {
    const [a, b, c, d] = this.words;
    for (let i = this.home(); ; i = (i + 1) & this.mask) {
      if (this.slots[i] === EMPTY) return i;
      const k = i * 4;
      if (this.keys[k] === a && this.keys[k + 1] === b && this.keys[k + 2] === c && this.keys[k + 3] === d) return i;
    }
  }

  /** The slot of the id at `text[at..]` (-1: none held, or not a UUID). */
  get(text, at = 0) {
    return this.parse(text, at) ? this.slots[this.find()] : EMPTY;
  }

  set(id, slot) {
    // Grown first: growing reuses the words the id is parsed into.
    if ((this.size + 1) * 2 > this.slots.length) this.grow();
    if (!this.parse(id, 0)) throw new Error(`not a chunk id: ${id}`);
    const i = this.find();
    if (this.slots[i] === EMPTY) {
      this.keys.set(this.words, i * 4);
      this.size++;
    }
    this.slots[i] = slot;
  }

  delete(id) {
    if (!this.parse(id, 0)) return;
    let i = this.find();
    if (this.slots[i] === EMPTY) return;
    this.size--;
    // Backward shift: the entries after it that probed past it move up, so no probe stops early.
    for (let j = (i + 1) & this.mask; this.slots[j] !== EMPTY; j = (j + 1) & this.mask) {
      this.words.set(this.keys.subarray(j * 4, j * 4 + 4));
      const home = this.home();
      // Moved only if its home is not between the hole and it (cyclically).
      if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)) {
        this.keys.copyWithin(i * 4, j * 4, j * 4 + 4);
        this.slots[i] = this.slots[j];
        i = j;
      }
    }
    this.slots[i] = EMPTY;
  }

  /** The first entry probed for the parsed id. */
  home() {
    const [a, b, c, d] = this.words;
    // Mixed, so that ids that are not random (sequential ones) spread over the table too.
    let h = Math.imul(a ^ Math.imul(b, 0x9e3779b1) ^ Math.imul(c, 0x85ebca77) ^ Math.imul(d, 0xc2b2ae3d), 0x27d4eb2f);
    h ^= h >>> 15;
    return h & this.mask;
  }

  grow() {
    const { keys, slots } = this;
    this.allocate(slots.length * 2);
    for (let i = 0; i < slots.length; i++) {
      if (slots[i] === EMPTY) continue;
      this.words.set(keys.subarray(i * 4, i * 4 + 4));
      const j = this.find();
      this.keys.set(this.words, j * 4);
      this.slots[j] = slots[i];
      this.size++;
    }
  }
}
