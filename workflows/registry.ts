// Every workflow by name, with its flow. The engines' `run(name, ...)` is typed from this map,
// the in-process runner looks flows up in it, and workflows.ts wraps each one for Temporal.
import { cloneDatasetFlow, clearDatasetFlow, purgeDatasetFlow, purgeOrganizationFlow } from './flows.js';
import { crawlFlow } from './crawl.js';
import { ingestFileFlow } from './ingest.js';
import { pagefindIndexFlow } from './pagefind.js';
import { searchClustersFlow } from './searchClusters.js';

export const flows = {
  purgeDataset: purgeDatasetFlow,
  purgeOrganization: purgeOrganizationFlow,
  clearDataset: clearDatasetFlow,
  cloneDataset: cloneDatasetFlow,
  ingestFile: ingestFileFlow,
  crawl: crawlFlow,
  pagefindIndex: pagefindIndexFlow,
  searchClusters: searchClustersFlow,
};

export type WorkflowRegistry = typeof flows;

/** Readable workflow ids; one per subject, so a second start while one runs is refused. */
export const workflowIds = {
  purgeDataset: (datasetId: string) => `purge-dataset-${datasetId}`,
  purgeOrganization: (organizationId: string) => `purge-organization-${organizationId}`,
  clearDataset: (datasetId: string) => `clear-dataset-${datasetId}`,
  /** By the new dataset: each clone fills one. */
  cloneDataset: (targetDatasetId: string) => `clone-dataset-${targetDatasetId}`,
  /** One ingestion per file. */
  ingestFile: (fileId: string) => `ingest-file-${fileId}`,
  /** One run of a crawl at a time. */
  crawl: (crawlId: string) => `crawl-${crawlId}`,
  /** One workflow per build; every request for an index is a build. */
  pagefindIndex: (buildId: string) => `pagefind-${buildId}`,
  /** The scheduled run over every dataset, or a run for one dataset. */
  searchClusters: (datasetId?: string) => (datasetId ? `search-clusters-${datasetId}` : 'search-clusters'),
};
