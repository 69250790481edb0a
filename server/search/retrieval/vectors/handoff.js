// The keyword list's hand-off to a nearest search under way on the vectors' worker (hybrid search):
// a word of shared memory and room for the list's ids, made by the service's thread for one search.
// That thread walks BM25's postings while the worker scans the held codes, each on a core. When the
// walk ends first, its list is delivered here: the worker ranks its chunks with the scan's
// candidates in the same answer (no second round trip), and for a search alone a helper thread
// waiting for the second core joins the scan's remaining pieces (helpers.js). When the scan ends
// first, the worker closes the hand-off, and the list is ranked by a second call, as before. One
// compare-and-swap on the word decides which came first. Plain JavaScript, shared by the service's
// thread, the worker and its helpers.
import { ID_WORDS } from '../../chunkIdWords.js';

const WAITING = 0;
const DELIVERED = 1;
const CLOSED = 2;
/** Words before the list: the state and the list's length in ids. */
const HEAD = 2;

/** A hand-off with room for `capacity` ids: its memory, to be sent to the worker. */
export function handoff(capacity) {
  return new Int32Array(new SharedArrayBuffer((HEAD + capacity * ID_WORDS) * 4));
}

/** Delivers `ids` (their words, chunkIdWords.js): true when the worker will rank them, false when it has closed the hand-off, or they do not fit. */
export function deliver(words, ids) {
  if (HEAD + ids.length > words.length || Atomics.load(words, 0) !== WAITING) return false;
  words.set(ids, HEAD);
  words[1] = ids.length / ID_WORDS;
  const delivered = Atomics.compareExchange(words, 0, WAITING, DELIVERED) === WAITING;
  if (delivered) Atomics.notify(words, 0);
  return delivered;
}

/** Closes the hand-off (by the worker, once its candidates are found): the ids delivered before, or null. */
export function close(words) {
  if (Atomics.compareExchange(words, 0, WAITING, CLOSED) === WAITING) {
    Atomics.notify(words, 0);
    return null;
  }
  return Atomics.load(words, 0) === DELIVERED ? words.subarray(HEAD, HEAD + words[1] * ID_WORDS) : null;
}

/** Waits (a helper thread) until the list is delivered (true) or the hand-off closed, or `ms` pass (false). */
export function awaitDelivery(words, ms) {
  Atomics.wait(words, 0, WAITING, ms);
  return Atomics.load(words, 0) === DELIVERED;
}
