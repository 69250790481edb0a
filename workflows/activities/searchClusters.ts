// Search clustering activities: the I/O steps of the searchClusters workflow. Clustering a dataset
// may run again safely: each run replaces the dataset's clusters whole (domain/searchClusters).
import { ApplicationFailure } from '@temporalio/common';
import { datasetConfig } from '../../server/domain/datasetConfig.js';
import type { DatasetRow } from '../../server/domain/datasets.js';
import { clusterDataset, RECENT_DAYS, type ClusterRunResult } from '../../server/domain/searchClusters/build.js';
import { datasetsToCluster } from '../../server/domain/searchClusters/store.js';
import { embedderFor, EmbeddingError } from '../../server/engines/embeddings/index.js';
import { STRICT_OUTBOUND } from '../../server/engines/outbound.js';
import { heartbeat } from './heartbeat.js';
import type { ActivityDeps } from './index.js';

export function searchClusterActivities({ store, outbound }: Pick<ActivityDeps, 'store' | 'outbound'>) {
  const { db } = store;
  return {
    /** The datasets a scheduled run clusters: those searched lately, and those whose clusters are to be emptied. */
    async listSearchClusterDatasets(): Promise<string[]> {
      return datasetsToCluster(db, new Date(Date.now() - RECENT_DAYS * 86_400_000));
    },

    /** Clusters the dataset's recent queries and replaces its clusters with them. */
    async clusterDatasetSearches({ datasetId }: { datasetId: string }): Promise<ClusterRunResult> {
      const dataset: DatasetRow | undefined = await db('datasets').where({ id: datasetId, deleted: 0 }).first();
      if (!dataset) return { found: false, clusters: 0, queries: 0 };
      const embedder = embedderFor(datasetConfig(dataset), outbound ?? STRICT_OUTBOUND);
      try {
        return await clusterDataset(db, embedder, datasetId, new Date(), (embedded) => heartbeat({ embedded }));
      } catch (error) {
        // An endpoint down or busy is retried with the policy's back-off; a refusal is final.
        if (error instanceof EmbeddingError && !error.transient) {
          throw ApplicationFailure.nonRetryable(`the queries could not be embedded: ${error.message}`, 'EmbeddingRefused');
        }
        throw error;
      }
    },
  };
}
