// Lists of chunks a set of held vectors is asked to rank again and again (a frequent filter's
// chunks), kept ready by the vectors' worker: their live slots, and for the screen their codes
// copied side by side with what each code misses. A tenant's or a category's tag is searched with
// every query of its users; at a million chunks a 1 % tag's 10,000 slots cost a look-up each and
// their rows a cache miss each, a few milliseconds a search that a list kept ready spares. Plain
// JavaScript, loaded by the vectors' worker.

/** Bytes of kept lists a set holds at most (their codes' copies, mostly); the least recently used go first. */
const BUDGET = 128 * 2 ** 20;

/**
 * A set's kept lists by the caller's key, while the set is unchanged: each list is made from the
 * slots of that moment, so a change to the set forgets them all (`clear`).
 */
export class KeptLists {
  /** `release(list)`: hands back the memory a list holds outside the JavaScript heap. */
  constructor(release) {
    this.release = release;
    this.byKey = new Map();
    this.bytes = 0;
  }

  /** The list kept under `key`, now the most recently used; undefined when none is. */
  get(key) {
    const list = this.byKey.get(key);
    if (list) {
      this.byKey.delete(key);
      this.byKey.set(key, list);
    }
    return list;
  }

  /** Keeps `list` (of `list.bytes`) under `key`, the least recently used going while over budget; one larger than the budget is not kept. */
  keep(key, list) {
    this.forget(key);
    if (list.bytes > BUDGET) {
      this.release(list);
      return;
    }
    while (this.bytes + list.bytes > BUDGET) this.forget(this.byKey.keys().next().value);
    this.byKey.set(key, list);
    this.bytes += list.bytes;
  }

  forget(key) {
    const list = this.byKey.get(key);
    if (!list) return;
    this.byKey.delete(key);
    this.bytes -= list.bytes;
    this.release(list);
  }

  clear() {
    for (const key of [...this.byKey.keys()]) this.forget(key);
  }
}
