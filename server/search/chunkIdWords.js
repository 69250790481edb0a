// Chunk ids (UUIDs) as four 32-bit words each, one id after another in an Int32Array: the form in
// which a search hands thousands of ids to the vectors' worker. An array of words crosses threads
// as one copy of its bytes, and the worker looks each id up by its words without reading a string;
// strings of ids held apart in the heap cost a cache miss each to join or to parse.
// Plain JavaScript, as the worker that reads it.

/** Words an id takes. */
export const ID_WORDS = 4;

/** Each hex digit's value by character code (-1: not a hex digit). */
const HEX = new Int8Array(128).fill(-1);
for (let i = 0; i < 16; i++) {
  HEX['0123456789abcdef'.charCodeAt(i)] = i;
  HEX['0123456789ABCDEF'.charCodeAt(i)] = i;
}

/** Where the 32 hex digits of a UUID's text form are. */
const DIGITS = [...Array(36).keys()].filter((i) => i !== 8 && i !== 13 && i !== 18 && i !== 23);

/** Writes the words of the UUID `id` into `words[at..at+4]`; false (nothing written) if it is not one. */
export function writeIdWords(id, words, at) {
  if (id.length !== 36 || id[8] !== '-' || id[13] !== '-' || id[18] !== '-' || id[23] !== '-') return false;
  let a = 0;
  let b = 0;
  let c = 0;
  let d = 0;
  for (let i = 0; i < 32; i++) {
    const code = id.charCodeAt(DIGITS[i]);
    const value = code < 128 ? HEX[code] : -1;
    if (value < 0) return false;
    if (i < 8) a = (a << 4) | value;
    else if (i < 16) b = (b << 4) | value;
    else if (i < 24) c = (c << 4) | value;
    else d = (d << 4) | value;
  }
  words[at] = a;
  words[at + 1] = b;
  words[at + 2] = c;
  words[at + 3] = d;
  return true;
}

/** The ids' words, one id after another; throws on one that is not a UUID. */
export function packIds(ids) {
  const words = new Int32Array(ids.length * ID_WORDS);
  for (let i = 0; i < ids.length; i++) if (!writeIdWords(ids[i], words, i * ID_WORDS)) throw new Error(`not a chunk id: ${ids[i]}`);
  return words;
}

/** Character codes of the hex digits, and of a UUID's text form being written (its dashes in place). */
const HEX_CODES = Array.from('0123456789abcdef', (c) => c.charCodeAt(0));
const TEXT = new Array(36).fill('-'.charCodeAt(0));

/** The UUID whose words are at `words[at..at+4]`, in PostgreSQL's text form (lower case). */
export function idOfWords(words, at) {
  for (let i = 0; i < 32; i++) TEXT[DIGITS[i]] = HEX_CODES[(words[at + (i >> 3)] >>> (28 - 4 * (i & 7))) & 15];
  return String.fromCharCode.apply(null, TEXT);
}

/** Whether the id at `words[a..a+4]` comes after the one at `words[b..b+4]` as their text forms sort. */
export function idAfter(words, a, b) {
  for (let i = 0; i < ID_WORDS; i++) {
    const x = words[a + i] >>> 0;
    const y = words[b + i] >>> 0;
    if (x !== y) return x > y;
  }
  return false;
}
