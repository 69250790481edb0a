// Filters answered in memory: a filter whose every condition is on `tag_set` is evaluated over the
// tags an in-memory index holds (bm25/memory.ts) instead of in PostgreSQL. At a million chunks,
// reading the ten thousand chunks of a tag through its GIN index took half of a filtered search;
// the tag's ordinals are already in memory, in order.
//
// The meaning is the SQL one (filters.ts): match_any is an overlap, match_all a containment, must
// all hold, should at least one, must_not none; a chunk without tags matches no tag condition.
// Anything else in the filter (another field, term conditions from the query) leaves it to SQL.
import type * as T from '../../../sdk/src/generated/types.gen.js';
import { seekOrdinal } from '../ordinals.js';
import { sharedArray } from '../sharedArrays.js';
import { hasTermConditions, type TermConditions } from '../query/conditions.js';
import { asTexts, isObject } from './values.js';

/** What the evaluation reads of an index: its ordinals by tag, and which ordinals are live. */
export interface TagIndex {
  /** The ordinals (ascending, dead ones too) of the chunks holding `tag`. */
  tagged(tag: string): Int32Array;
  /** Slots for ordinals, dead ones included. */
  readonly capacity: number;
  /** Grows with every chunk added or removed (ordinals are never reused). */
  readonly changes: number;
  isDead(ordinal: number): boolean;
  idOf(ordinal: number): string;
  /** The ids of the first `n` of `ordinals`, as words one after another (chunkIdWords.js). */
  idWordsOf(ordinals: Int32Array, n: number): Int32Array;
  ordinalOfId(id: string): number | undefined;
}

/** One condition: the chunk has any of the tags, and all of these (either may be absent). */
interface TagCondition {
  any: string[] | null;
  all: string[] | null;
}

export interface TagFilter {
  must: TagCondition[];
  should: TagCondition[];
  mustNot: TagCondition[];
}

/** The filter as tag conditions, when it has nothing else (and no term conditions); else null. */
export function tagFilterOf(filter: T.ChunkFilter | null | undefined, conditions?: TermConditions): TagFilter | null {
  if (!filter || hasTermConditions(conditions)) return null;
  const read = (list: T.ConditionType[] | null | undefined): TagCondition[] | null => {
    const out: TagCondition[] = [];
    for (const condition of list ?? []) {
      const tag = tagCondition(condition);
      if (!tag) return null;
      out.push(tag);
    }
    return out;
  };
  const must = read(filter.must);
  const should = read(filter.should);
  const mustNot = read(filter.must_not);
  if (!must || !should || !mustNot || must.length + should.length + mustNot.length === 0) return null;
  return { must, should, mustNot };
}

const TAG_OPERATORS = new Set(['field', 'match_any', 'match_all']);

function tagCondition(condition: unknown): TagCondition | null {
  if (!isObject(condition) || condition.field !== 'tag_set') return null;
  // Any other key given (an operator tag_set refuses, an id list) is SQL's to judge and refuse.
  if (Object.entries(condition).some(([key, value]) => value != null && !TAG_OPERATORS.has(key))) return null;
  const values = (list: unknown) => (Array.isArray(list) && list.length > 0 ? asTexts(list as (string | number)[]) : null);
  const any = values(condition.match_any);
  const all = values(condition.match_all);
  // Malformed values (validated already, but not by this reader): SQL refuses them.
  if ((condition.match_any != null && !any) || (condition.match_all != null && !all) || (!any && !all)) return null;
  return { any, all };
}

/** The live chunks passing a tag filter, over one index. */
export class HeldPassing {
  private live: Int32Array | null = null;
  private mask: Uint8Array | null = null;
  private maskChanges = -1;
  /** The index's changes when the filter was evaluated over it. */
  private readonly evaluatedAt: number;

  constructor(
    private readonly index: TagIndex,
    /**
     * The ordinals the filter names, ascending, dead ones possibly among them (they are left out
     * when read); null when only must_not speaks.
     */
    private readonly listed: Int32Array | null,
    /** The excluded ordinals (must_not), ascending, when `listed` is null. */
    private readonly excluded: Int32Array,
  ) {
    this.evaluatedAt = index.changes;
  }

  /** How many live chunks pass. */
  get count(): number {
    return this.ordinals().length;
  }

  /** How many chunks the filter names, dead ones included: an estimate of `count` without a walk over them all. */
  get listedCount(): number {
    return this.listed ? this.listed.length : this.count;
  }

  /** The passing ordinals, ascending, live when first read. */
  ordinals(): Int32Array {
    if (this.live) return this.live;
    if (this.listed) {
      this.live = kept(this.listed, (d) => !this.index.isDead(d));
      return this.live;
    }
    const out: number[] = [];
    const excluded = this.excluded;
    for (let d = 0, e = 0; d < this.index.capacity; d++) {
      while (e < excluded.length && excluded[e] < d) e++;
      if (!this.index.isDead(d) && !(e < excluded.length && excluded[e] === d)) out.push(d);
    }
    this.live = Int32Array.from(out);
    return this.live;
  }

  /**
   * Whether the chunk passes, as the index is now: looked up in the filter's lists, so that checking
   * a few candidates costs no walk over a tag's every chunk (a hundred thousand at a million).
   */
  passes(ordinal: number): boolean {
    if (this.mask && this.maskChanges === this.index.changes) return this.mask[ordinal] === 0;
    if (this.index.isDead(ordinal)) return false;
    const list = this.listed ?? this.excluded;
    const at = seekOrdinal(list, list.length, 0, ordinal);
    return (at < list.length && list[at] === ordinal) === (this.listed !== null);
  }

  /**
   * 1 for each ordinal that does not pass, 0 for each that does; as the index is now, so that a
   * chunk that died since the filter was evaluated does not pass.
   */
  skipped(): Uint8Array {
    if (!this.mask || this.maskChanges !== this.index.changes) {
      // Shared: a helper thread may read it for a long walk (retrieval/bm25/walkHelpers.ts).
      const mask = sharedArray(Uint8Array, this.index.capacity).fill(1);
      const ordinals = this.listed ?? this.ordinals();
      for (let i = 0; i < ordinals.length; i++) if (!this.index.isDead(ordinals[i])) mask[ordinals[i]] = 0;
      this.mask = mask;
      this.maskChanges = this.index.changes;
    }
    return this.mask;
  }

  /** The first `limit` passing chunks' ids, in ordinal order. */
  ids(limit: number): string[] {
    const ordinals = this.ordinals();
    const n = Math.min(limit, ordinals.length);
    const ids = new Array<string>(n);
    for (let i = 0; i < n; i++) ids[i] = this.index.idOf(ordinals[i]);
    return ids;
  }

  /** Up to `limit` of the passing chunks' ids, as words one after another (chunkIdWords.js). */
  idWords(limit: number): Int32Array {
    const ordinals = this.ordinals();
    return this.index.idWordsOf(ordinals, Math.min(limit, ordinals.length));
  }

  /** The passing ordinals (ascending) when they are of `index` as it is now; null when the filter was evaluated over another, or before a change. */
  ordinalsIn(index: TagIndex): Int32Array | null {
    return index === this.index && index.changes === this.evaluatedAt ? this.ordinals() : null;
  }

  /** Those of `ids` that pass (an id the index does not hold, written after it caught up, does not). */
  among(ids: string[]): Set<string> {
    return new Set(
      ids.filter((id) => {
        const ordinal = this.index.ordinalOfId(id);
        return ordinal !== undefined && this.passes(ordinal);
      }),
    );
  }
}

/**
 * Filters evaluated lately, by index, while it stays unchanged: searches of a dataset often repeat a
 * filter (a tenant's tag, a category), and a broad one's mask or live list costs a walk over every
 * chunk of its tag (milliseconds at a million chunks). Search engines keep frequent filters'
 * bitsets for the same reason.
 */
const evaluated = new WeakMap<TagIndex, { changes: number; byFilter: Map<string, HeldPassing> }>();
/** Filters kept per index, the least recently used going first. */
const MOST_KEPT = 16;

/** The filter's passing chunks in the index. */
export function heldPassing(index: TagIndex, filter: TagFilter): HeldPassing {
  let recent = evaluated.get(index);
  if (!recent || recent.changes !== index.changes) evaluated.set(index, (recent = { changes: index.changes, byFilter: new Map() }));
  const key = JSON.stringify(filter);
  let held = recent.byFilter.get(key);
  if (held) recent.byFilter.delete(key);
  else {
    held = evaluate(index, filter);
    if (recent.byFilter.size >= MOST_KEPT) recent.byFilter.delete(recent.byFilter.keys().next().value!);
  }
  recent.byFilter.set(key, held);
  return held;
}

function evaluate(index: TagIndex, filter: TagFilter): HeldPassing {
  const matching = (condition: TagCondition): Int32Array => {
    const sets: Int32Array[] = [];
    if (condition.any) sets.push(union(condition.any.map((tag) => index.tagged(tag))));
    for (const tag of condition.all ?? []) sets.push(index.tagged(tag));
    return intersection(sets);
  };
  const positive = [...filter.must.map(matching), ...(filter.should.length > 0 ? [union(filter.should.map(matching))] : [])];
  const excluded = union(filter.mustNot.map(matching));
  if (positive.length === 0) return new HeldPassing(index, null, excluded);
  return new HeldPassing(index, difference(intersection(positive), excluded), excluded);
}

/** The ascending union of ascending lists (duplicates once). */
function union(lists: Int32Array[]): Int32Array {
  if (lists.length === 0) return new Int32Array(0);
  if (lists.length === 1) return lists[0];
  const all = new Int32Array(lists.reduce((n, l) => n + l.length, 0));
  let at = 0;
  for (const list of lists) {
    all.set(list, at);
    at += list.length;
  }
  all.sort();
  let size = 0;
  for (let i = 0; i < all.length; i++) if (i === 0 || all[i] !== all[i - 1]) all[size++] = all[i];
  return all.subarray(0, size);
}

/** The ascending intersection of ascending lists, the shortest walked and the others searched. */
function intersection(lists: Int32Array[]): Int32Array {
  if (lists.length === 1) return lists[0];
  const [shortest, ...others] = [...lists].sort((a, b) => a.length - b.length);
  const at = others.map(() => 0);
  return kept(shortest, (d) =>
    others.every((list, i) => {
      at[i] = seekOrdinal(list, list.length, at[i], d);
      return at[i] < list.length && list[at[i]] === d;
    }),
  );
}

/** `list` without the ordinals of `minus` (both ascending). */
function difference(list: Int32Array, minus: Int32Array): Int32Array {
  if (minus.length === 0) return list;
  let at = 0;
  return kept(list, (d) => {
    at = seekOrdinal(minus, minus.length, at, d);
    return !(at < minus.length && minus[at] === d);
  });
}

/**
 * The ordinals of `list` that `keep` keeps, in order. A plain loop: Int32Array's own filter takes
 * several times as long, milliseconds for a tag of a hundred thousand chunks.
 */
export function kept(list: Int32Array, keep: (ordinal: number) => boolean): Int32Array {
  const out = new Int32Array(list.length);
  let size = 0;
  for (let i = 0; i < list.length; i++) if (keep(list[i])) out[size++] = list[i];
  return out.subarray(0, size);
}
