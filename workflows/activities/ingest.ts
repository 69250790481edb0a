// File ingestion activities: the I/O steps of the ingestFile workflow. Each is idempotent: a retry
// or a replay after a crash runs it again safely (derived ids, staged pieces replaced, the outcome
// recorded only once). Content problems (unsupported or broken file, bad options, plan full) are
// returned as a reason, or thrown as non-retryable failures: retrying cannot fix them. A failing
// embedding endpoint is thrown as retryable: the workflow's retry policy waits and tries again.
import { ApplicationFailure } from '@temporalio/common';
import type { DatasetRow } from '../../server/domain/datasets.js';
import { countChunks, planOf } from '../../server/domain/quotas.js';
import { STRICT_OUTBOUND } from '../../server/engines/outbound.js';
import { ObjectNotFoundError } from '../../server/engines/storage/types.js';
import { ChunkEmbeddingError } from '../../server/domain/chunks/write.js';
import { HttpError } from '../../server/errors.js';
import { countPieceChunks, createPieceChunks, discardPieceChunks } from '../../server/ingest/chunks.js';
import { extractDocument, UnreadableFileError } from '../../server/ingest/extract/index.js';
import { FileGoneError, loadIngestFile, markProcessing, recordOutcome, type IngestOutcome } from '../../server/ingest/file.js';

/** How the flow ends a file: the count of its chunks is the activity's to take. */
export type FinishOutcome = { status: 'completed'; groupId: string | null } | Extract<IngestOutcome, { status: 'failed' }>;
import { dropEmptyFileGroup, ensureFileGroup } from '../../server/ingest/group.js';
import { readIngestOptions } from '../../server/ingest/options.js';
import { filePieces } from '../../server/ingest/pieces.js';
import { dropPieces, readPieces, stagedCount, stagePieces } from '../../server/ingest/staging.js';
import { type CrawlWebhookBody, postWebhook, type WebhookBody } from '../../server/ingest/webhook.js';
import { heartbeat } from './heartbeat.js';
import type { ActivityDeps } from './index.js';

export interface FileRef {
  datasetId: string;
  fileId: string;
}

export type BeginResult =
  | { ok: true; fileName: string; groupId: string | null; webhookUrl: string | null }
  /** `gone`: the file or its dataset was deleted; nothing to report. */
  | { ok: false; gone: boolean; fileName: string | null; webhookUrl: string | null; reason: string };

export type StageResult = { ok: true; pieces: number } | { ok: false; reason: string };

export interface ChunkRangeResult {
  created: number;
  /** The file (or its dataset) was deleted meanwhile: the ingestion stops. */
  gone: boolean;
}

const GONE = 'the file was deleted before its ingestion ended';

export function ingestActivities(deps: ActivityDeps) {
  const { store, lexical, storage } = deps;
  const { db } = store;
  const outbound = deps.outbound ?? STRICT_OUTBOUND;
  const chunkServices = { store, lexical, config: { outbound } };

  const liveDataset = (datasetId: string): Promise<DatasetRow | undefined> => db<DatasetRow>('datasets').where({ id: datasetId, deleted: 0 }).first();

  return {
    /** Checks the file and its options, marks it processing and makes its chunk group (unless create_chunks is false). */
    async beginFileIngestion({ datasetId, fileId }: FileRef): Promise<BeginResult> {
      const file = await loadIngestFile(db, datasetId, fileId);
      if (!file || !(await liveDataset(datasetId))) return { ok: false, gone: true, fileName: file?.file_name ?? null, webhookUrl: null, reason: GONE };
      const webhookUrl = webhookOf(file.ingest_options);
      let options;
      try {
        options = readIngestOptions(file.ingest_options);
      } catch (error) {
        if (!(error instanceof UnreadableFileError)) throw error;
        return { ok: false, gone: false, fileName: file.file_name, webhookUrl, reason: error.message };
      }
      await markProcessing(db, fileId);
      if (options.create_chunks === false) return { ok: true, fileName: file.file_name, groupId: null, webhookUrl };
      const groupId = await ensureFileGroup(db, {
        datasetId,
        fileId,
        name: file.file_name,
        description: options.description ?? null,
        tagSet: options.tag_set ?? null,
        trackingId: options.group_tracking_id ?? null,
      });
      return { ok: true, fileName: file.file_name, groupId, webhookUrl };
    },

    /**
     * Reads the file from storage, extracts and splits it, and stages its pieces; returns how many,
     * or why the file cannot be ingested. Refuses a file whose chunks would not fit the plan.
     */
    async stageFilePieces({ datasetId, fileId }: FileRef): Promise<StageResult> {
      const file = await loadIngestFile(db, datasetId, fileId);
      const dataset = await liveDataset(datasetId);
      if (!file || !dataset) return { ok: false, reason: GONE };
      if (!file.storage_key) return { ok: false, reason: 'the file has no stored bytes' };
      const key = file.storage_key;
      let pieces: number;
      try {
        const options = readIngestOptions(file.ingest_options);
        const document = await extractDocument({ fileName: file.file_name, mimeType: file.mime_type, open: () => storage.get(key) });
        pieces = await stagePieces(db, fileId, filePieces(document, options), (staged) => heartbeat({ staged }));
      } catch (error) {
        if (error instanceof UnreadableFileError) return { ok: false, reason: error.message };
        if (error instanceof ObjectNotFoundError) return { ok: false, reason: 'the file bytes are missing from storage' };
        throw error;
      }
      if (pieces === 0) return { ok: false, reason: 'no text could be extracted from the file' };
      const plan = await planOf(db, dataset.organization_id);
      const used = await countChunks(db, dataset.organization_id);
      if (used + pieces > plan.chunk_count) {
        return {
          ok: false,
          reason: `the file makes ${pieces} chunks; the ${plan.name} plan allows ${plan.chunk_count} chunks and the organization has ${used}`,
        };
      }
      return { ok: true, pieces };
    },

    /** Creates the chunks of the staged pieces at positions [from, from + count), skipping those already made. */
    async createFileChunks(range: FileRef & { groupId: string; from: number; count: number }): Promise<ChunkRangeResult> {
      const { datasetId, fileId, groupId, from, count } = range;
      const live = async () => Boolean((await liveDataset(datasetId)) && (await loadIngestFile(db, datasetId, fileId)));
      const dataset = await liveDataset(datasetId);
      if (!dataset || !(await loadIngestFile(db, datasetId, fileId))) return { created: 0, gone: true };
      const pieces = await readPieces(db, fileId, from, count);
      try {
        const { created } = await createPieceChunks(chunkServices, dataset, { id: fileId, groupId }, pieces, () => heartbeat({ from }));
        return { created, gone: false };
      } catch (error) {
        // Deleted meanwhile (the batch's lock saw it, or a step before found the file's group gone):
        // the failed batch wrote nothing; stop here.
        if (error instanceof FileGoneError || !(await live())) return { created: 0, gone: true };
        // The embedding endpoint failed (no answer, 429, 5xx): retried with the policy's back-off.
        if (error instanceof ChunkEmbeddingError && error.transient) {
          throw ApplicationFailure.retryable(`the chunks of pieces ${from} to ${from + count - 1} were not written: ${error.message}`, 'EmbeddingUnavailable');
        }
        // The chunk path's own refusals (a bad field, the plan's limit, an embedding refused) are final.
        if (error instanceof HttpError && error.status < 500) {
          throw ApplicationFailure.nonRetryable(`the chunks of pieces ${from} to ${from + count - 1} were refused: ${error.message}`, 'ChunksRefused');
        }
        throw error;
      }
    },

    /**
     * Ends the ingestion: on failure the chunks it made (and its own group, when empty) are deleted,
     * so a failed file leaves no half set; the staged pieces go; the file's status and the dataset
     * event are recorded once. Answers how many of the file's chunks exist (counted, not summed
     * over steps, so a resumed or replayed step is not counted twice or missed).
     */
    async finishFileIngestion(end: FileRef & { fileName: string; outcome: FinishOutcome }): Promise<{ chunksCreated: number }> {
      const { datasetId, fileId, outcome } = end;
      if (outcome.status === 'failed') {
        const staged = await stagedCount(db, fileId);
        for (let from = 0; from < staged; from += 1000) {
          await discardPieceChunks({ store, lexical }, datasetId, fileId, from, Math.min(1000, staged - from));
          heartbeat({ discarded: from });
        }
        await dropEmptyFileGroup(db, fileId);
      }
      const chunksCreated = outcome.status === 'completed' ? await countPieceChunks(db, datasetId, fileId, await stagedCount(db, fileId)) : 0;
      await dropPieces(db, fileId);
      const recorded = outcome.status === 'completed' ? { ...outcome, chunksCreated } : outcome;
      await recordOutcome(db, { id: fileId, datasetId, fileName: end.fileName }, recorded);
      return { chunksCreated };
    },

    /** One POST to the upload's webhook_url; throws on a refused connection or an answer outside 2xx. */
    async notifyWebhook({ url, body }: { url: string; body: WebhookBody | CrawlWebhookBody }): Promise<number> {
      return postWebhook(url, body, outbound);
    },
  };
}

/** The webhook address from the stored options, read on its own so that even bad options are reported to it. */
function webhookOf(options: unknown): string | null {
  const url = (options as { webhook_url?: unknown } | null)?.webhook_url;
  return typeof url === 'string' && url ? url : null;
}
