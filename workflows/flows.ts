// Workflow orchestrations, written once and run by both engines: Temporal (wrapped in
// workflows.ts and bundled into its deterministic sandbox) and the in-process runner (which
// journals each activity call). So: type imports only, and no I/O, clocks or randomness here —
// everything that touches the world is an activity.
import type { ActivityOptions } from '@temporalio/workflow';
import type { Activities } from './activities/index.js';
import { checkBatchSize, checkUuid, isCancellation, reasonOf, retry } from './common.js';
import { crawlActivityOptions } from './crawl.js';
import { ingestActivityOptions } from './ingest.js';
import { pagefindActivityOptions } from './pagefind.js';
import { searchClusterActivityOptions } from './searchClusters.js';

export interface FlowContext<A> {
  /**
   * The activities, retried by the engine and recorded once they succeed: a replayed flow gets
   * the recorded results back. Call them in a deterministic order and let their errors propagate.
   */
  activities: A;
}

// Per-activity options: what Temporal's proxyActivities takes; the in-process runner reads `retry`.
// startToCloseTimeout is also how long Temporal waits before retrying an attempt whose worker died.
export const activityOptions: { [K in keyof Activities]: ActivityOptions } = {
  removeDatasetFromLexicalIndex: { startToCloseTimeout: '5m', retry },
  deleteDatasetChunks: { startToCloseTimeout: '1m', retry }, // one batch: seconds at most
  deleteDatasetGroups: { startToCloseTimeout: '1m', retry },
  deleteDatasetFiles: { startToCloseTimeout: '1m', retry },
  deleteDatasetRow: { startToCloseTimeout: '5m', retry }, // cascades to groups, files, analytics rows
  recordDatasetEvent: { startToCloseTimeout: '30s', retry },
  retireOrganizationDatasets: { startToCloseTimeout: '1m', retry },
  deleteOrganizationRow: { startToCloseTimeout: '5m', retry }, // cascades to keys, memberships, invitations
  copyDatasetChunks: { startToCloseTimeout: '2m', retry },
  copyDatasetGroups: { startToCloseTimeout: '2m', retry },
  copyDatasetBookmarks: { startToCloseTimeout: '2m', retry },
  indexDatasetChunks: { startToCloseTimeout: '2m', retry },
  ...ingestActivityOptions,
  ...crawlActivityOptions,
  ...pagefindActivityOptions,
  ...searchClusterActivityOptions,
};

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
  checkUuid('purgeDataset', 'datasetId', datasetId);
  checkBatchSize('purgeDataset', batchSize);
  return { chunksDeleted: await purgeOneDataset(ctx, datasetId, batchSize) };
}

/** The steps of purging one dataset; a failure is reported as a `dataset_delete_failed` event, then rethrown. */
async function purgeOneDataset(ctx: FlowContext<Activities>, datasetId: string, batchSize: number): Promise<number> {
  const { removeDatasetFromLexicalIndex, deleteDatasetChunks, deleteDatasetRow, recordDatasetEvent } = ctx.activities;
  try {
    await removeDatasetFromLexicalIndex(datasetId);
    let chunksDeleted = 0;
    for (;;) {
      const deleted = await deleteDatasetChunks({ datasetId, batchSize });
      if (deleted === 0) break;
      chunksDeleted += deleted;
    }
    // Last, so a purge cut short leaves the dataset row to retry from.
    await deleteDatasetRow(datasetId);
    return chunksDeleted;
  } catch (err) {
    if (!isCancellation(err)) {
      await recordDatasetEvent({ datasetId, type: 'dataset_delete_failed', data: { dataset_id: datasetId, message: reasonOf(err) } });
    }
    throw err;
  }
}

export interface PurgeOrganizationInput {
  organizationId: string;
  /** Chunks deleted per activity call; 5000 unless set. */
  batchSize?: number;
}

export interface PurgeOrganizationResult {
  datasetsPurged: number;
  chunksDeleted: number;
}

/**
 * Deletes an organization and everything it owns: its datasets are hidden at once, then purged one
 * after the other as purgeDataset does, and the organization row goes last (its keys, subscription,
 * memberships and invitations with it).
 */
export async function purgeOrganizationFlow(ctx: FlowContext<Activities>, input: PurgeOrganizationInput): Promise<PurgeOrganizationResult> {
  const { organizationId, batchSize = 5000 } = input;
  checkUuid('purgeOrganization', 'organizationId', organizationId);
  checkBatchSize('purgeOrganization', batchSize);
  const datasetIds = await ctx.activities.retireOrganizationDatasets(organizationId);
  let chunksDeleted = 0;
  for (const datasetId of datasetIds) chunksDeleted += await purgeOneDataset(ctx, datasetId, batchSize);
  await ctx.activities.deleteOrganizationRow(organizationId);
  return { datasetsPurged: datasetIds.length, chunksDeleted };
}

export interface ClearDatasetInput {
  datasetId: string;
  /** Rows deleted per activity call; 5000 unless set. */
  batchSize?: number;
}

export interface ClearDatasetResult {
  chunksDeleted: number;
  groupsDeleted: number;
  filesDeleted: number;
}

/**
 * Empties a dataset and keeps it: its lexical index entries, files (bytes and records), chunks and
 * chunk groups (with their bookmarks) are deleted in small steps; then a `bulk_chunks_deleted`
 * event reports how many chunks went.
 */
export async function clearDatasetFlow(ctx: FlowContext<Activities>, input: ClearDatasetInput): Promise<ClearDatasetResult> {
  const { datasetId, batchSize = 5000 } = input;
  checkUuid('clearDataset', 'datasetId', datasetId);
  checkBatchSize('clearDataset', batchSize);
  const { removeDatasetFromLexicalIndex, deleteDatasetChunks, deleteDatasetGroups, deleteDatasetFiles, recordDatasetEvent } = ctx.activities;
  const drain = async (step: (batch: { datasetId: string; batchSize: number }) => Promise<number>) => {
    let total = 0;
    for (;;) {
      const deleted = await step({ datasetId, batchSize });
      if (deleted === 0) return total;
      total += deleted;
    }
  };
  try {
    // Files first: once a file's row is gone its ingestion writes no more chunks (each batch locks
    // the row), so the steps after it leave nothing, in the index or the tables, that it adds later.
    const filesDeleted = await drain(deleteDatasetFiles);
    await removeDatasetFromLexicalIndex(datasetId);
    const chunksDeleted = await drain(deleteDatasetChunks);
    const groupsDeleted = await drain(deleteDatasetGroups);
    await recordDatasetEvent({
      datasetId,
      type: 'bulk_chunks_deleted',
      data: { dataset_id: datasetId, chunks_deleted: chunksDeleted, groups_deleted: groupsDeleted, files_deleted: filesDeleted },
    });
    return { chunksDeleted, groupsDeleted, filesDeleted };
  } catch (err) {
    if (!isCancellation(err)) {
      await recordDatasetEvent({ datasetId, type: 'chunk_action_failed', data: { dataset_id: datasetId, action: 'clear', message: reasonOf(err) } });
    }
    throw err;
  }
}

export interface CloneDatasetInput {
  /** The dataset copied from. */
  sourceId: string;
  /** The new dataset, created before the workflow starts. */
  targetId: string;
  /** Rows copied per activity call; 1000 unless set. */
  batchSize?: number;
}

export interface CloneDatasetResult {
  chunksCopied: number;
  groupsCopied: number;
  bookmarksCopied: number;
  chunksIndexed: number;
}

/**
 * Copies a dataset's chunks, chunk groups and bookmarks into a new dataset (new ids, the same
 * relations), then indexes the copied chunks for lexical search. Every batch may run twice safely:
 * a copy's id is derived from the target and the original's id. Stops early when the target is deleted.
 */
export async function cloneDatasetFlow(ctx: FlowContext<Activities>, input: CloneDatasetInput): Promise<CloneDatasetResult> {
  const { sourceId, targetId, batchSize = 1000 } = input;
  checkUuid('cloneDataset', 'sourceId', sourceId);
  checkUuid('cloneDataset', 'targetId', targetId);
  checkBatchSize('cloneDataset', batchSize);
  const { copyDatasetChunks, copyDatasetGroups, copyDatasetBookmarks, indexDatasetChunks } = ctx.activities;
  const pages = async (
    step: (batch: { sourceId: string; targetId: string; afterId: string | null; batchSize: number }) => Promise<{ count: number; lastId: string | null }>,
  ) => {
    let total = 0;
    for (let afterId: string | null = null; ; ) {
      const { count, lastId }: { count: number; lastId: string | null } = await step({ sourceId, targetId, afterId, batchSize });
      total += count;
      if (count < batchSize || lastId === null) return total;
      afterId = lastId;
    }
  };
  const chunksCopied = await pages(copyDatasetChunks);
  const groupsCopied = await pages(copyDatasetGroups);
  let bookmarksCopied = 0;
  for (let after: { groupId: string; chunkId: string } | null = null; ; ) {
    const { count, last }: { count: number; last: { groupId: string; chunkId: string } | null } = await copyDatasetBookmarks({
      sourceId,
      targetId,
      after,
      batchSize,
    });
    bookmarksCopied += count;
    if (count < batchSize || last === null) break;
    after = last;
  }
  let chunksIndexed = 0;
  for (let afterId: string | null = null; ; ) {
    const { count, lastId }: { count: number; lastId: string | null } = await indexDatasetChunks({ datasetId: targetId, afterId, batchSize });
    chunksIndexed += count;
    if (count < batchSize || lastId === null) break;
    afterId = lastId;
  }
  return { chunksCopied, groupsCopied, bookmarksCopied, chunksIndexed };
}
