// The searchClusters flow: the topics of datasets' recent searches. Scheduled (workflow
// `search-clusters`, every ANALYTICS_CLUSTER_INTERVAL), it clusters every dataset searched lately,
// one after the other; started for one dataset (`search-clusters-<dataset id>`), that one alone.
// Each dataset is one activity that replaces its clusters whole, so a run cut short leaves every
// dataset with its old clusters or its new ones. A dataset that fails does not stop the others;
// the run fails at the end, naming it. Deterministic code only: it runs in Temporal's sandbox.
import type { ActivityOptions } from '@temporalio/workflow';
import type { Activities } from './activities/index.js';
import { checkUuid, isCancellation, reasonOf, retry } from './common.js';
import type { FlowContext } from './flows.js';

export const searchClusterActivityOptions = {
  listSearchClusterDatasets: { startToCloseTimeout: '1m', retry },
  // Embedding thousands of queries through an endpoint takes a while; the heartbeat notices a dead worker.
  clusterDatasetSearches: { startToCloseTimeout: '30m', heartbeatTimeout: '2m', retry },
} satisfies Record<string, ActivityOptions>;

export interface SearchClustersInput {
  /** Only this dataset; every dataset searched lately when absent. */
  datasetId?: string;
}

export interface SearchClustersResult {
  datasets: number;
  clusters: number;
}

export async function searchClustersFlow(ctx: FlowContext<Activities>, input: SearchClustersInput): Promise<SearchClustersResult> {
  if (input.datasetId !== undefined) checkUuid('searchClusters', 'datasetId', input.datasetId);
  const { listSearchClusterDatasets, clusterDatasetSearches } = ctx.activities;
  const datasetIds = input.datasetId !== undefined ? [input.datasetId] : await listSearchClusterDatasets();
  const result: SearchClustersResult = { datasets: 0, clusters: 0 };
  const failures: string[] = [];
  for (const datasetId of datasetIds) {
    try {
      const run = await clusterDatasetSearches({ datasetId });
      if (!run.found) continue;
      result.datasets++;
      result.clusters += run.clusters;
    } catch (err) {
      if (isCancellation(err)) throw err;
      failures.push(`${datasetId}: ${reasonOf(err)}`);
    }
  }
  if (failures.length > 0) throw new SearchClustersError(`${failures.length} of ${datasetIds.length} datasets could not be clustered: ${failures.join('; ')}`);
  return result;
}

export class SearchClustersError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SearchClustersError';
  }
}
