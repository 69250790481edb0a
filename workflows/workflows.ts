// Temporal's view of the flows: each export is a workflow, named like its registry entry, that
// runs the shared flow with proxied activities. Bundled into Temporal's sandbox by the worker.
import { ApplicationFailure, ContinueAsNew, proxyActivities, TemporalFailure } from '@temporalio/workflow';
import type { Activities } from './activities/index.js';
import {
  activityOptions,
  clearDatasetFlow,
  cloneDatasetFlow,
  purgeDatasetFlow,
  purgeOrganizationFlow,
  type ClearDatasetInput,
  type CloneDatasetInput,
  type FlowContext,
  type PurgeDatasetInput,
  type PurgeOrganizationInput,
} from './flows.js';
import { crawlFlow, type CrawlInput } from './crawl.js';
import { ingestFileFlow, type IngestFileInput } from './ingest.js';
import { pagefindIndexFlow, type PagefindIndexInput } from './pagefind.js';
import { searchClustersFlow, type SearchClustersInput } from './searchClusters.js';

type AnyActivity = (...args: unknown[]) => Promise<unknown>;

// One proxy per activity, so each gets its own options (timeouts, retry policy).
const activities = Object.fromEntries(
  Object.entries(activityOptions).map(([name, options]) => [name, proxyActivities<Record<string, AnyActivity>>(options)[name]]),
) as unknown as Activities;

const ctx: FlowContext<Activities> = { activities };

/**
 * Runs a flow. A plain error thrown by the flow itself (bad input, say) fails the workflow for
 * good, as in the in-process runner; left as is, Temporal would retry the workflow task forever.
 */
async function runFlow<I, O>(flow: (ctx: FlowContext<Activities>, input: I) => Promise<O>, input: I): Promise<O> {
  try {
    return await flow(ctx, input);
  } catch (err) {
    if (err instanceof TemporalFailure || err instanceof ContinueAsNew || !(err instanceof Error)) throw err;
    throw ApplicationFailure.fromError(err, { nonRetryable: true });
  }
}

export async function purgeDataset(input: PurgeDatasetInput) {
  return runFlow(purgeDatasetFlow, input);
}

export async function purgeOrganization(input: PurgeOrganizationInput) {
  return runFlow(purgeOrganizationFlow, input);
}

export async function clearDataset(input: ClearDatasetInput) {
  return runFlow(clearDatasetFlow, input);
}

export async function cloneDataset(input: CloneDatasetInput) {
  return runFlow(cloneDatasetFlow, input);
}

export async function ingestFile(input: IngestFileInput) {
  return runFlow(ingestFileFlow, input);
}

export async function crawl(input: CrawlInput) {
  return runFlow(crawlFlow, input);
}

export async function pagefindIndex(input: PagefindIndexInput) {
  return runFlow(pagefindIndexFlow, input);
}

export async function searchClusters(input: SearchClustersInput) {
  return runFlow(searchClustersFlow, input);
}
