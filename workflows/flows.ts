// Workflow orchestrations, written once and run by both engines: Temporal (wrapped in
// workflows.ts and bundled into its deterministic sandbox) and the in-process runner (which
// journals each activity call). So: type imports only, and no I/O, clocks or randomness here —
// everything that touches the world is an activity.
import type { ActivityOptions, RetryPolicy } from '@temporalio/workflow';
import type { Activities } from './activities/index.js';

export interface FlowContext<A> {
  /**
   * The activities, retried by the engine and recorded once they succeed: a replayed flow gets
   * the recorded results back. Call them in a deterministic order and let their errors propagate.
   */
  activities: A;
}

// Per-activity options: what Temporal's proxyActivities takes; the in-process runner reads `retry`.
const retry: RetryPolicy = { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '1m', maximumAttempts: 5 };
// startToCloseTimeout is also how long Temporal waits before retrying an attempt whose worker died.
export const activityOptions: { [K in keyof Activities]: ActivityOptions } = {
  removeDatasetFromLexicalIndex: { startToCloseTimeout: '5m', retry },
  deleteDatasetChunks: { startToCloseTimeout: '1m', retry }, // one batch: seconds at most
  deleteDatasetRow: { startToCloseTimeout: '5m', retry }, // cascades to groups, files, analytics rows
};

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface PurgeDatasetInput {
  datasetId: string;
  /** Chunks deleted per activity call (one short transaction each); 5000 unless set. */
  batchSize?: number;
}

export interface PurgeDatasetResult {
  chunksDeleted: number;
}

/** Deletes a dataset and everything in it, in steps that each stay small whatever its size. */
export async function purgeDatasetFlow(ctx: FlowContext<Activities>, input: PurgeDatasetInput): Promise<PurgeDatasetResult> {
  const { datasetId, batchSize = 5000 } = input;
  if (typeof datasetId !== 'string' || !UUID.test(datasetId)) {
    throw new Error(`purgeDataset: datasetId must be a UUID, got ${JSON.stringify(datasetId)}`);
  }
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 100_000) {
    throw new Error(`purgeDataset: batchSize must be an integer from 1 to 100000, got ${JSON.stringify(batchSize)}`);
  }
  const { removeDatasetFromLexicalIndex, deleteDatasetChunks, deleteDatasetRow } = ctx.activities;
  await removeDatasetFromLexicalIndex(datasetId);
  let chunksDeleted = 0;
  for (;;) {
    const deleted = await deleteDatasetChunks({ datasetId, batchSize });
    if (deleted === 0) break;
    chunksDeleted += deleted;
  }
  // Last, so a purge cut short leaves the dataset row to retry from.
  await deleteDatasetRow(datasetId);
  return { chunksDeleted };
}
