// The arithmetic of exact BM25 top k (search/retrieval/bm25/bounds.ts), checked against brute force.
import { describe, expect, it } from 'vitest';
import { type Bm25Parameters, covers, impact, impactFloors, mostImpact, rangesReaching } from '../../server/search/retrieval/bm25/bounds.js';

const PARAMETERS: Bm25Parameters[] = [
  { k1: 1.2, b: 0.75, averageLength: 67 },
  { k1: 2, b: 0.3, averageLength: 12 },
  { k1: 1.2, b: 0, averageLength: 50 },
  { k1: 0, b: 0.75, averageLength: 50 },
  { k1: 0.5, b: 1, averageLength: 300 },
];

const inRanges = (ranges: ReturnType<typeof rangesReaching>, tf: number, length: number) =>
  ranges.some((r) => tf >= r.tfFrom && tf <= r.tfTo && length <= r.maxLength);

describe('rangesReaching', () => {
  it.each(PARAMETERS)('holds every posting whose impact reaches the floor (k1 $k1, b $b, avg $averageLength)', (parameters) => {
    for (const floor of [0, 0.3, 0.9, 1, 1.4, 1.9, 2.15, 2.5, 3.5]) {
      const ranges = rangesReaching(floor, parameters);
      for (let tf = 1; tf <= 60; tf++) {
        for (let length = tf; length <= 2000; length += length < 100 ? 1 : 37) {
          if (impact(tf, length, parameters) >= floor) expect(inRanges(ranges, tf, length), `floor ${floor} tf ${tf} len ${length}`).toBe(true);
        }
      }
    }
  });

  it('reads little more than it must', () => {
    const parameters = PARAMETERS[0];
    const ranges = rangesReaching(1.5, parameters);
    for (const r of ranges.filter((x) => x.tfFrom === x.tfTo)) {
      expect(impact(r.tfFrom, r.maxLength, parameters)).toBeGreaterThanOrEqual(1.5 - 1e-6);
      expect(impact(r.tfFrom, r.maxLength + 1, parameters)).toBeLessThan(1.5);
    }
    expect(rangesReaching(2.2, parameters)).toEqual([]);
  });
});

describe('impactFloors', () => {
  it('splits the threshold so a chunk under every floor scores under it', () => {
    const terms = [
      { weight: 3, most: 2 },
      { weight: 0.2, most: 2.1 },
      { weight: 1.5, most: 1.7 },
      { weight: 0, most: 2 },
    ];
    for (const threshold of [0.1, 1, 3, 6.5, 9]) {
      const floors = impactFloors(threshold, terms);
      // The most a chunk can score while below every floor (a term without a floor up to its most).
      const below = terms.reduce((sum, t, i) => sum + t.weight * Math.min(t.most, floors[i]), 0);
      expect(below, `threshold ${threshold}`).toBeLessThanOrEqual(threshold + 1e-9);
      // Terms whose whole part stays below the threshold together need no reading.
      if (threshold > terms[1].weight * terms[1].most + 0) expect(floors[1]).toBe(Infinity);
    }
    expect(impactFloors(0, terms)).toEqual([0, 0, 0, 0]);
  });

  it('gives the most impact of a term from the shortest chunk at each of its frequencies', () => {
    const [parameters] = PARAMETERS;
    expect(mostImpact([], parameters)).toBe(0);
    const shortest = [
      { tf: 6, length: 300 },
      { tf: 2, length: 9 },
      { tf: 1, length: 2 },
    ];
    expect(mostImpact(shortest, parameters)).toBe(Math.max(...shortest.map((s) => impact(s.tf, s.length, parameters))));
    expect(mostImpact(shortest, parameters)).toBe(impact(2, 9, parameters));
  });
});

describe('covers', () => {
  it('knows which ranges the leading postings already hold', () => {
    const edge = { exhausted: false, tf: 3, length: 40 };
    expect(covers(edge, [{ tfFrom: 4, tfTo: 100, maxLength: 10_000 }])).toBe(true);
    expect(covers(edge, [{ tfFrom: 3, tfTo: 3, maxLength: 39 }])).toBe(true);
    expect(covers(edge, [{ tfFrom: 3, tfTo: 3, maxLength: 40 }])).toBe(false);
    expect(covers(edge, [{ tfFrom: 2, tfTo: 2, maxLength: 5 }])).toBe(false);
    expect(covers({ ...edge, exhausted: true }, [{ tfFrom: 1, tfTo: 1, maxLength: 5 }])).toBe(true);
  });
});
