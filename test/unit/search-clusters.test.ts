// Search query clusters without I/O: the k's tried for a number of queries, the k chosen (the best
// separated), and each cluster's label (its telling words, by stem, as most often written).
import { describe, expect, it } from 'vitest';
import { candidateKs, chooseK, clusterVectors, MAX_CLUSTERS } from '../../server/domain/searchClusters/kmeans.js';
import { clusterLabels, queryTerms } from '../../server/domain/searchClusters/label.js';

/** `count` unit vectors near axis `axis` of a 12-dimensional space, each leaning a little on another axis. */
function blob(axis: number, count: number): number[][] {
  return Array.from({ length: count }, (_, i) => {
    const v = new Array<number>(12).fill(0);
    v[axis] = 1;
    v[(axis + 1 + (i % 3)) % 12] = 0.15 * ((i % 2) + 1);
    const norm = Math.hypot(...v);
    return v.map((x) => x / norm);
  });
}

describe('the choice of k', () => {
  it('tries 2 to ⌊√n⌋ clusters, at most ten, and one cluster under four queries', () => {
    expect(candidateKs(0)).toEqual([]);
    expect([1, 2, 3].map(candidateKs)).toEqual([[1], [1], [1]]);
    expect(candidateKs(4)).toEqual([2]);
    expect(candidateKs(15)).toEqual([2, 3]);
    expect(candidateKs(18)).toEqual([2, 3, 4]);
    expect(candidateKs(99)).toEqual([2, 3, 4, 5, 6, 7, 8, 9]);
    expect(candidateKs(100_000)).toHaveLength(MAX_CLUSTERS - 1);
  });

  it('picks the k whose clusters are the best separated', () => {
    for (const groups of [2, 3, 5]) {
      const vectors = Array.from({ length: groups }, (_, g) => blob(g * 2, 8)).flat();
      const { k, silhouettes } = chooseK(vectors, candidateKs(vectors.length));
      expect(k).toBe(groups);
      expect(Math.max(...silhouettes.values())).toBe(silhouettes.get(groups));
    }
  });

  it('puts each group in a cluster of its own, numbered by first appearance', () => {
    const vectors = [...blob(0, 6), ...blob(4, 6), ...blob(8, 6)];
    const { k, assignments, distances } = clusterVectors(vectors);
    expect(k).toBe(3);
    expect(assignments).toEqual([0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2]);
    expect(distances.every((d) => d >= 0 && d < 0.3)).toBe(true);
  });

  it('makes one cluster of a few queries, none of none', () => {
    expect(clusterVectors(blob(0, 3)).assignments).toEqual([0, 0, 0]);
    expect(clusterVectors([])).toEqual({ k: 0, assignments: [], distances: [] });
  });
});

describe('the labels', () => {
  const q = (text: string, searches = 1, distance = 0.1) => ({ text, searches, distance });

  it('reads a query as its meaningful words, once each, by stem', () => {
    expect(queryTerms('How to bake a Crème Brûlée? Baking, baked!')).toEqual([
      { stem: 'bake', word: 'bake' },
      { stem: 'creme', word: 'creme' },
      { stem: 'brule', word: 'brulee' },
    ]);
  });

  it('names each cluster by the words that tell it from the others, heaviest first', () => {
    const labels = clusterLabels([
      [q('chocolate cake recipe', 3), q('easy chocolate cake'), q('chocolate cake frosting')],
      [q('bread recipe', 2), q('sourdough bread recipe'), q('bread flour')],
    ]);
    // "recipe" is in both clusters: it weighs less than the words of one alone, and ranks after them.
    expect(labels).toEqual(['cake, chocolate, recipe', 'bread, recipe, flour']);
  });

  it('shows a word as it is most often written, and leaves out words of few searches', () => {
    const [label] = clusterLabels([[q('hiking boots', 4), q('hike trail', 1), q('hikes near me', 1), q('boots for hiking', 2), q('waterproof jacket', 1)]]);
    expect(label).toBe('hiking, boots');
  });

  it('is made from the queries nearest the centroid', () => {
    const near = Array.from({ length: 25 }, (_, i) => q(`income tax form ${i}`, 1, 0.1));
    const far = Array.from({ length: 40 }, () => q('property rates', 1, 0.9));
    expect(clusterLabels([[...far, ...near]])).toEqual(['form, income, tax']);
  });

  it('falls back to the nearest query when no word is left', () => {
    expect(clusterLabels([[q('the and of', 1, 0.5), q(' ?? ', 1, 0.2)]])).toEqual(['??']);
  });
});
