// Query vectors into clusters with k-means (ml-kmeans, k-means++ seeding, a fixed seed so a run is
// reproducible). k is chosen from the number of distinct queries n: every k from 2 to
// min(MAX_CLUSTERS, ⌊√n⌋) is tried on a sample, and the one whose clusters are the best separated
// (highest mean silhouette) wins; fewer than 4 queries make one cluster. No I/O here.
import { kmeans } from 'ml-kmeans';

/** The most topics a dataset gets (the reference lists ten). */
export const MAX_CLUSTERS = 10;
/** Queries the candidate k's are tried on: the first ones given (the most searched). */
export const SAMPLE = 1000;
/** Of the sample, the queries whose silhouettes are averaged (their distances all computed). */
export const SILHOUETTE_SAMPLE = 300;
const SEED = 42;

export interface Clustering {
  k: number;
  /** Each vector's cluster, 0 to k − 1. */
  assignments: number[];
  /** Each vector's distance to its cluster's centroid. */
  distances: number[];
}

/** The k's tried for n distinct queries. */
export function candidateKs(n: number): number[] {
  const most = Math.min(MAX_CLUSTERS, Math.floor(Math.sqrt(n)));
  if (most < 2) return n > 0 ? [1] : [];
  return Array.from({ length: most - 1 }, (_, i) => i + 2);
}

/** Clusters unit vectors (the most searched first); none for none. */
export function clusterVectors(vectors: number[][]): Clustering {
  const ks = candidateKs(vectors.length);
  if (ks.length === 0) return { k: 0, assignments: [], distances: [] };
  if (ks[0] === 1) return finish(vectors, Array(vectors.length).fill(0), [centroidOf(vectors)]);
  const sample = vectors.slice(0, SAMPLE);
  const chosen = chooseK(sample, ks);
  if (sample.length === vectors.length) return finish(vectors, chosen.clusters, chosen.centroids);
  // Seeded with the sample's centroids, the whole set converges in a few rounds.
  const result = kmeans(vectors, chosen.k, { initialization: chosen.centroids, seed: SEED });
  return finish(vectors, result.clusters, result.centroids);
}

/** Of the candidate k's, the one with the highest mean silhouette on the sample (the smaller on a tie), with its centroids. */
export function chooseK(sample: number[][], ks: number[]): { k: number; clusters: number[]; centroids: number[][]; silhouettes: Map<number, number> } {
  const measured = sample.slice(0, SILHOUETTE_SAMPLE);
  const pairwise = distanceMatrix(measured);
  const silhouettes = new Map<number, number>();
  let best: { k: number; clusters: number[]; centroids: number[][]; score: number } | null = null;
  for (const k of ks) {
    const result = kmeans(sample, k, { seed: SEED });
    const score = meanSilhouette(pairwise, result.clusters.slice(0, measured.length), k);
    silhouettes.set(k, score);
    if (!best || score > best.score + 1e-9) best = { k, clusters: result.clusters, centroids: result.centroids, score };
  }
  return { k: best!.k, clusters: best!.clusters, centroids: best!.centroids, silhouettes };
}

/**
 * The mean over points of (b − a) / max(a, b), a the point's mean distance to the rest of its
 * cluster and b to the nearest other cluster; a point alone in its cluster counts 0.
 */
export function meanSilhouette(pairwise: Float64Array[], labels: number[], k: number): number {
  const n = labels.length;
  const sizes = new Array<number>(k).fill(0);
  for (const label of labels) sizes[label]++;
  let total = 0;
  for (let i = 0; i < n; i++) {
    if (sizes[labels[i]] < 2) continue;
    const sums = new Array<number>(k).fill(0);
    for (let j = 0; j < n; j++) if (j !== i) sums[labels[j]] += pairwise[i][j];
    const a = sums[labels[i]] / (sizes[labels[i]] - 1);
    let b = Number.POSITIVE_INFINITY;
    for (let c = 0; c < k; c++) if (c !== labels[i] && sizes[c] > 0) b = Math.min(b, sums[c] / sizes[c]);
    if (Number.isFinite(b)) total += Math.max(a, b) === 0 ? 0 : (b - a) / Math.max(a, b);
  }
  return n === 0 ? 0 : total / n;
}

function distanceMatrix(vectors: number[][]): Float64Array[] {
  const rows = vectors.map(() => new Float64Array(vectors.length));
  for (let i = 0; i < vectors.length; i++) {
    for (let j = i + 1; j < vectors.length; j++) rows[i][j] = rows[j][i] = distance(vectors[i], vectors[j]);
  }
  return rows;
}

function distance(a: number[], b: number[]): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += (a[i] - b[i]) ** 2;
  return Math.sqrt(sum);
}

function centroidOf(vectors: number[][]): number[] {
  const sum = new Array<number>(vectors[0].length).fill(0);
  for (const v of vectors) for (let i = 0; i < v.length; i++) sum[i] += v[i] / vectors.length;
  return sum;
}

/** Renumbers the clusters from 0 by first appearance (an empty one dropped) and measures each vector's distance. */
function finish(vectors: number[][], labels: number[], centroids: number[][]): Clustering {
  const renumbered = new Map<number, number>();
  for (const label of labels) if (!renumbered.has(label)) renumbered.set(label, renumbered.size);
  return {
    k: renumbered.size,
    assignments: labels.map((label) => renumbered.get(label)!),
    distances: vectors.map((v, i) => distance(v, centroids[labels[i]])),
  };
}
