// The dataset sizes idf uses: a large dataset counted at most once per TTL, a small one every time,
// one count shared by the searches that arrive while it runs, and counted again after a failure.
import { describe, expect, it } from 'vitest';
import { sizeCache } from '../../server/search/retrieval/datasetSize.js';

describe('sizeCache', () => {
  it('counts a dataset once within the TTL, and again after it', async () => {
    let clock = 0;
    const cache = sizeCache(1000, () => clock, 10);
    let counted = 0;
    const count = async () => ++counted * 10;
    expect(await cache.get('a', count)).toBe(10);
    clock = 999;
    expect(await cache.get('a', count)).toBe(10);
    expect(await cache.get('b', count)).toBe(20);
    clock = 1000;
    expect(await cache.get('a', count)).toBe(30);
    expect(counted).toBe(3);
  });

  it('counts a dataset smaller than the threshold on every search', async () => {
    const cache = sizeCache(1000, () => 0, 10);
    let size = 3;
    expect(await cache.get('a', async () => size)).toBe(3);
    size = 12;
    expect(await cache.get('a', async () => size)).toBe(12);
    size = 40;
    expect(await cache.get('a', async () => size)).toBe(12);
  });

  it('shares one count between concurrent searches, and keeps no failed count', async () => {
    const cache = sizeCache(1000, () => 0, 0);
    let calls = 0;
    let release!: (n: number) => void;
    const slow = () => {
      calls++;
      return new Promise<number>((resolve) => (release = resolve));
    };
    const both = Promise.all([cache.get('a', slow), cache.get('a', slow)]);
    release(7);
    expect(await both).toEqual([7, 7]);
    expect(calls).toBe(1);
    await expect(cache.get('b', () => Promise.reject(new Error('down')))).rejects.toThrow('down');
    expect(await cache.get('b', async () => 5)).toBe(5);
  });
});
