// Gathering ranked chunk hits by group: each group once by its best hit, the window of hits growing
// until the page is full, and groups short of chunks completed by a search restricted to them.
import { describe, expect, it } from 'vitest';
import { fillGroups, firstWindow, gatherByGroup, MAX_GROUP_WINDOW, MIN_GROUP_WINDOW, rankGroups } from '../../server/search/groups/gather.js';
import type { Hit } from '../../server/search/types.js';

const hits = (...ids: string[]): Hit[] => ids.map((id, i) => ({ id, score: 1 - i / 100 }));

describe('gatherByGroup', () => {
  it('orders groups by their best hit, counts a chunk for each of its groups and leaves out chunks in none', () => {
    const groupsOf = new Map([
      ['c1', ['g2']],
      ['c2', ['g1', 'g2']],
      ['c4', ['g1']],
    ]);
    const gathered = gatherByGroup(hits('c1', 'c2', 'c3', 'c4'), groupsOf);
    expect(gathered.map((g) => [g.groupId, g.hits.map((h) => h.id)])).toEqual([
      ['g2', ['c1', 'c2']],
      ['g1', ['c2', 'c4']],
    ]);
  });
});

describe('rankGroups', () => {
  /** A ranked list of `total` chunks; the chunks at the given ranks are in group `g<rank>`. */
  function dataset(total: number, grouped: number[]) {
    const all = Array.from({ length: total }, (_, i) => ({ id: `c${i}`, score: total - i }));
    const windows: number[] = [];
    const fetch = async (window: number) => {
      windows.push(window);
      return all.slice(0, window);
    };
    const groupsOf = async (ids: string[]) => new Map(ids.filter((id) => grouped.includes(Number(id.slice(1)))).map((id) => [id, [`g${id.slice(1)}`]]));
    return { fetch, groupsOf, windows };
  }

  it('grows the window fourfold while the page is not full and more hits exist', async () => {
    const { fetch, groupsOf, windows } = dataset(2000, [5, 150]);
    const ranked = await rankGroups(fetch, groupsOf, 2, 3);
    expect(windows).toEqual([MIN_GROUP_WINDOW, 4 * MIN_GROUP_WINDOW]);
    expect(ranked.groups.map((g) => g.groupId)).toEqual(['g5', 'g150']);
    expect(ranked.exhausted).toBe(false);
  });

  it('stops when a window holds every hit, and at the largest window', async () => {
    const small = dataset(30, [1]);
    expect(await rankGroups(small.fetch, small.groupsOf, 5, 3)).toMatchObject({ exhausted: true });
    expect(small.windows).toEqual([MIN_GROUP_WINDOW]);
    const large = dataset(5000, [4000]);
    const ranked = await rankGroups(large.fetch, large.groupsOf, 1, 3);
    expect(large.windows.at(-1)).toBe(MAX_GROUP_WINDOW);
    expect(ranked.groups).toEqual([]);
  });

  it('starts with a window large enough for the page', () => {
    expect(firstWindow(1, 3)).toBe(MIN_GROUP_WINDOW);
    expect(firstWindow(50, 5)).toBe(500);
    expect(firstWindow(Infinity, 3)).toBe(MAX_GROUP_WINDOW);
    expect(firstWindow(10_000, 10)).toBe(MAX_GROUP_WINDOW);
  });
});

describe('fillGroups', () => {
  const short = [
    { groupId: 'g1', hits: hits('c1') },
    { groupId: 'g2', hits: hits('c2', 'c3', 'c4', 'c5') },
  ];

  it('completes a group short of chunks from a search restricted to it, unless the window held every hit', async () => {
    const asked: string[] = [];
    const fetchInGroup = async (groupId: string, n: number) => {
      asked.push(`${groupId}:${n}`);
      return hits('c1', 'c9', 'c8');
    };
    const filled = await fillGroups(short, 3, false, fetchInGroup);
    expect(asked).toEqual(['g1:3']);
    expect(filled.map((g) => g.hits.map((h) => h.id))).toEqual([
      ['c1', 'c9', 'c8'],
      ['c2', 'c3', 'c4'],
    ]);
    asked.length = 0;
    expect((await fillGroups(short, 3, true, fetchInGroup)).map((g) => g.hits.length)).toEqual([1, 3]);
    expect(asked).toEqual([]);
  });

  it('shows groups without chunks for group size 0', async () => {
    const filled = await fillGroups(short, 0, false, async () => hits('x'));
    expect(filled).toEqual([
      { groupId: 'g1', hits: [] },
      { groupId: 'g2', hits: [] },
    ]);
  });
});
