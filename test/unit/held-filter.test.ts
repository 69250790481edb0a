// Tag filters answered from an index's tag lists (filters/held.ts) against the filter's meaning
// checked chunk by chunk: random must / should / must_not filters of match_any and match_all over a
// corpus with untagged, removed and re-written chunks. And which filters are left to SQL.
import { describe, expect, it } from 'vitest';
import type * as T from '../../sdk/src/generated/types.gen.js';
import { packIds } from '../../server/search/chunkIdWords.js';
import { heldPassing, tagFilterOf } from '../../server/search/filters/held.js';
import { DatasetIndex } from '../../server/search/retrieval/bm25/memory.js';
import { prng } from '../support/prng.js';

const TAGS = ['a', 'b', 'c', 'd', 'e', '2024'];
const id = (n: number) => `00000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;

function pick(random: () => number, n: number): string[] {
  return Array.from({ length: n }, () => TAGS[Math.floor(random() * random() * TAGS.length)]);
}

/** The corpus, and each live chunk's tags by id. */
function corpus(random: () => number): { index: DatasetIndex; tags: Map<string, string[]> } {
  const index = new DatasetIndex();
  const tags = new Map<string, string[]>();
  const write = (n: number) => {
    // Some untagged, some with a tag twice.
    const chunkTags = random() < 0.2 ? [] : pick(random, 1 + Math.floor(random() * 3));
    index.add({ id: id(n), length: 5, terms: ['w'], tfs: [1], tags: chunkTags });
    tags.set(id(n), chunkTags);
  };
  for (let n = 0; n < 2000; n++) write(n);
  for (let n = 0; n < 300; n++) {
    index.remove(id(n * 5));
    tags.delete(id(n * 5));
  }
  for (let n = 0; n < 200; n++) write(n * 7);
  return { index, tags };
}

function condition(random: () => number): T.FieldCondition {
  const tags = [...new Set(pick(random, 1 + Math.floor(random() * 2)))];
  const operator = random();
  if (operator < 0.45) return { field: 'tag_set', match_any: tags };
  if (operator < 0.9) return { field: 'tag_set', match_all: tags };
  return { field: 'tag_set', match_any: tags, match_all: pick(random, 1) };
}

function filter(random: () => number): T.ChunkFilter {
  const some = (most: number) => Array.from({ length: Math.floor(random() * (most + 1)) }, () => condition(random));
  const f = { must: some(2), should: some(2), must_not: some(2) };
  if (f.must.length + f.should.length + f.must_not.length === 0) f.must.push(condition(random));
  return f;
}

/** The filter's meaning (filters.ts), one chunk at a time. */
function passes(chunkTags: string[], f: T.ChunkFilter): boolean {
  const holds = (c: T.ConditionType) => {
    const { match_any, match_all } = c as T.FieldCondition;
    const any = !match_any || match_any.some((t) => chunkTags.includes(String(t)));
    const all = !match_all || match_all.every((t) => chunkTags.includes(String(t)));
    return any && all;
  };
  return (f.must ?? []).every(holds) && ((f.should ?? []).length === 0 || (f.should ?? []).some(holds)) && !(f.must_not ?? []).some(holds);
}

describe('tag filters held in memory', () => {
  it('pass exactly the live chunks the filter means', () => {
    const random = prng(5);
    const { index, tags } = corpus(random);
    for (let round = 0; round < 300; round++) {
      const f = filter(random);
      const tagFilter = tagFilterOf(f);
      expect(tagFilter).not.toBeNull();
      const held = heldPassing(index, tagFilter!);
      const expected = [...tags].filter(([, chunkTags]) => passes(chunkTags, f)).map(([chunkId]) => chunkId);
      expect(held.ids(Number.POSITIVE_INFINITY).sort(), JSON.stringify(f)).toEqual(expected.sort());
      expect(held.count).toBe(expected.length);
      // The same chunks, in the same order, as words for the vectors' worker (and cut at a limit).
      expect(held.idWords(Number.POSITIVE_INFINITY)).toEqual(packIds(held.ids(Number.POSITIVE_INFINITY)));
      expect(held.idWords(3)).toEqual(packIds(held.ids(3)));
      expect(held.ordinalsIn(index)).toEqual(held.ordinals());
      // Checking given ids: a removed chunk's id and an unknown one never pass.
      const asked = [...new Set([id(0), id(5), id(7), id(1), id(99_999), ...expected.slice(0, 3)])];
      expect([...held.among(asked)].sort()).toEqual(asked.filter((a) => expected.includes(a)).sort());
      // Each chunk looked up in the filter's lists, as few candidates are, agrees with the mask a walk reads.
      const looked = Array.from({ length: index.capacity }, (_, ordinal) => held.passes(ordinal));
      expect(looked).toEqual([...held.skipped()].map((skip) => skip === 0));
      expect(held.listedCount).toBeGreaterThanOrEqual(held.count);
    }
  });

  it('numbers match tags by their decimal form, as in SQL', () => {
    const { index, tags } = corpus(prng(9));
    const held = heldPassing(index, tagFilterOf({ must: [{ field: 'tag_set', match_any: [2024] }] })!);
    expect(held.count).toBe([...tags.values()].filter((t) => t.includes('2024')).length);
    expect(held.count).toBeGreaterThan(0);
  });

  it('does not pass a chunk removed or added after the filter was evaluated', () => {
    const { index } = corpus(prng(6));
    const held = heldPassing(index, tagFilterOf({ must: [{ field: 'tag_set', match_any: ['a'] }] })!);
    const passing = held.ids(Number.POSITIVE_INFINITY);
    const removed = passing[0];
    const removedOrdinal = index.ordinalOfId(removed)!;
    expect(held.passes(removedOrdinal)).toBe(true);
    expect(held.ordinalsIn(index)).not.toBeNull();
    expect(held.ordinalsIn(new DatasetIndex())).toBeNull();
    index.remove(removed);
    // Its ordinals are no longer those of the index as it is.
    expect(held.ordinalsIn(index)).toBeNull();
    index.add({ id: id(50_000), length: 5, terms: ['w'], tfs: [1], tags: ['a'] });
    expect(held.passes(removedOrdinal)).toBe(false);
    expect(held.skipped()[removedOrdinal]).toBe(1);
    expect(held.passes(index.ordinalOfId(id(50_000))!)).toBe(false);
    expect(held.passes(index.ordinalOfId(passing[1])!)).toBe(true);
  });

  it('keeps a filter evaluated while the index is unchanged, and evaluates it anew after a change', () => {
    const { index } = corpus(prng(8));
    const tagA = () => tagFilterOf({ must: [{ field: 'tag_set', match_any: ['a'] }] })!;
    const first = heldPassing(index, tagA());
    expect(heldPassing(index, tagA())).toBe(first);
    expect(heldPassing(index, tagFilterOf({ must: [{ field: 'tag_set', match_any: ['b'] }] })!)).not.toBe(first);
    index.add({ id: id(60_000), length: 5, terms: ['w'], tfs: [1], tags: ['a'] });
    const again = heldPassing(index, tagA());
    expect(again).not.toBe(first);
    expect(again.ids(Number.POSITIVE_INFINITY)).toContain(id(60_000));
    expect(first.ids(Number.POSITIVE_INFINITY)).not.toContain(id(60_000));
  });

  it('leaves every other filter to SQL', () => {
    expect(tagFilterOf(null)).toBeNull();
    expect(tagFilterOf({ must: [], should: [], must_not: [] })).toBeNull();
    expect(
      tagFilterOf({
        must: [
          { field: 'tag_set', match_any: ['a'] },
          { field: 'link', match_any: ['x'] },
        ],
      }),
    ).toBeNull();
    expect(tagFilterOf({ must_not: [{ ids: [id(1)] }] })).toBeNull();
    expect(tagFilterOf({ must: [{ field: 'tag_set', range: { gt: 1 } } as T.FieldCondition] })).toBeNull();
    expect(tagFilterOf({ must: [{ field: 'tag_set', match_any: [] }] })).toBeNull();
    expect(tagFilterOf({ must: [{ field: 'tag_set', match_any: ['a'] }] }, { required: "'a'", excluded: null })).toBeNull();
  });
});
