// One clustering run of a dataset: its distinct queries of the last RECENT_DAYS embedded with the
// dataset's own embedder, clustered (kmeans.ts), labelled (label.ts), and written over the
// dataset's clusters at once (store.ts). Run again, it replaces what it wrote.
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { Embedder } from '../../engines/embeddings/index.js';
import { clusterVectors } from './kmeans.js';
import { clusterLabels, type LabelQuery } from './label.js';
import { type NewCluster, recentQueries, replaceClusters } from './store.js';

/** How far back the searches clustered go (as the reference's clustering). */
export const RECENT_DAYS = 7;
/** The most searched distinct queries of a dataset that are clustered; rarer ones are left out. */
export const MAX_QUERIES = 5000;
/** Texts per call to the embedder. */
const EMBED_BATCH = 256;

export interface ClusterRunResult {
  /** False when the dataset was deleted meanwhile (nothing written). */
  found: boolean;
  clusters: number;
  queries: number;
}

/** `progress` is told after each batch embedded (a Temporal activity heartbeats there). */
export async function clusterDataset(
  db: Knex,
  embedder: Embedder,
  datasetId: string,
  now: Date,
  progress: (embedded: number) => void = () => {},
): Promise<ClusterRunResult> {
  const since = new Date(now.getTime() - RECENT_DAYS * 86_400_000);
  const queries = await recentQueries(db, datasetId, since, MAX_QUERIES);
  const vectors: number[][] = [];
  for (let at = 0; at < queries.length; at += EMBED_BATCH) {
    const batch = queries.slice(at, at + EMBED_BATCH).map((q) => q.query);
    vectors.push(...(await embedder.embed(batch, 'query')).map(unit));
    progress(vectors.length);
  }
  const { k, assignments, distances } = clusterVectors(vectors);
  const members: LabelQuery[][] = Array.from({ length: k }, () => []);
  for (const [i, q] of queries.entries()) members[assignments[i]].push({ text: q.query, searches: q.searches, distance: distances[i] });
  const labels = clusterLabels(members);
  const clusters: NewCluster[] = members.map((queriesOf, c) => ({
    id: randomUUID(),
    topic: labels[c],
    queries: queriesOf.map((q) => ({ text: q.text, distance: q.distance })),
  }));
  const found = await replaceClusters(db, datasetId, since, clusters);
  return { found, clusters: found ? clusters.length : 0, queries: found ? queries.length : 0 };
}

/** Scaled to length 1, so that k-means' distances measure angles as cosine similarity does. */
function unit(vector: number[]): number[] {
  const norm = Math.sqrt(vector.reduce((sum, v) => sum + v * v, 0));
  return norm === 0 ? vector : vector.map((v) => v / norm);
}
