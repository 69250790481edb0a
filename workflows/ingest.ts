// The ingestFile flow: turns a stored file into chunks inside a group for the file, then reports.
// Steps (each an activity, so each is retried, journaled and replayed, never redone once done):
//   begin (check, mark processing, make the group) -> stage the file's pieces (extract + split,
//   read from storage by file id, so no text passes through workflow history) -> create chunks
//   a range of pieces at a time -> finish (status + one dataset event; a failure deletes what
//   was made) -> the webhook, when the upload gave one (its failure is recorded, not fatal).
// A file that failed fails the workflow at the very end (FileIngestionError), after its status,
// event and webhook are done, so the Temporal UI and the job rows show it as failed.
// Deterministic code only: it runs in Temporal's workflow sandbox.
import type { ActivityOptions } from '@temporalio/workflow';
import type { Activities } from './activities/index.js';
import type { WebhookBody } from '../server/ingest/webhook.js';
import { checkBatchSize, checkUuid, isCancellation, reasonOf, retry } from './common.js';
import type { FlowContext } from './flows.js';

// Long steps heartbeat: a worker that dies mid-step is noticed within the heartbeat timeout.
const heartbeatTimeout = '20s';
export const ingestActivityOptions = {
  beginFileIngestion: { startToCloseTimeout: '1m', retry },
  stageFilePieces: { startToCloseTimeout: '2h', heartbeatTimeout, retry },
  createFileChunks: { startToCloseTimeout: '15m', heartbeatTimeout, retry },
  finishFileIngestion: { startToCloseTimeout: '30m', heartbeatTimeout, retry },
  // Four tries over a few seconds; then the delivery is given up and recorded as failed.
  notifyWebhook: { startToCloseTimeout: '30s', retry: { initialInterval: '500ms', backoffCoefficient: 2, maximumAttempts: 4 } },
} satisfies Record<string, ActivityOptions>;

export interface IngestFileInput {
  datasetId: string;
  fileId: string;
  /** Pieces per chunk-creating activity (chunks are written 120 at a time within it); 480 unless set. */
  batchSize?: number;
}

export interface IngestFileResult {
  /** `gone`: the file or its dataset was deleted before the ingestion ended. */
  status: 'completed' | 'gone';
  /** The file's chunks that exist at the end (a replayed or resumed step counts them once). */
  chunksCreated: number;
  /** Why the file was not ingested, when it is gone. */
  reason?: string;
  /** The webhook delivery, when the upload asked for one. */
  webhook?: { delivered: true; status: number } | { delivered: false; error: string };
}

export async function ingestFileFlow(ctx: FlowContext<Activities>, input: IngestFileInput): Promise<IngestFileResult> {
  const { datasetId, fileId, batchSize = 480 } = input;
  checkUuid('ingestFile', 'datasetId', datasetId);
  checkUuid('ingestFile', 'fileId', fileId);
  checkBatchSize('ingestFile', batchSize);
  const { beginFileIngestion, stageFilePieces, createFileChunks, finishFileIngestion } = ctx.activities;

  const begun = await beginFileIngestion({ datasetId, fileId });
  if (!begun.ok && begun.gone) return { status: 'gone', chunksCreated: 0, reason: begun.reason };

  let failure: string | null = begun.ok ? null : begun.reason;
  let gone = false;
  if (begun.ok && begun.groupId) {
    try {
      const staged = await stageFilePieces({ datasetId, fileId });
      if (!staged.ok) failure = staged.reason;
      else {
        for (let from = 0; from < staged.pieces && !gone; from += batchSize) {
          const count = Math.min(batchSize, staged.pieces - from);
          const range = await createFileChunks({ datasetId, fileId, groupId: begun.groupId, from, count });
          gone = range.gone;
        }
      }
    } catch (err) {
      if (isCancellation(err)) throw err;
      failure = reasonOf(err);
    }
  }
  const fileName = begun.fileName ?? fileId;
  if (gone) failure = 'the file was deleted before its ingestion ended';
  const outcome =
    failure === null ? { status: 'completed' as const, groupId: begun.ok ? begun.groupId : null } : { status: 'failed' as const, reason: failure };
  const { chunksCreated } = await finishFileIngestion({ datasetId, fileId, fileName, outcome });
  const result: IngestFileResult = failure === null ? { status: 'completed', chunksCreated } : { status: 'gone', chunksCreated: 0, reason: failure };

  if (begun.webhookUrl && !gone) {
    const body: WebhookBody = {
      event_type: failure === null ? 'file_uploaded' : 'file_upload_failed',
      dataset_id: datasetId,
      file_id: fileId,
      file_name: fileName,
      status: failure === null ? 'completed' : 'failed',
      chunks_created: chunksCreated,
      error: failure,
    };
    try {
      result.webhook = { delivered: true, status: await ctx.activities.notifyWebhook({ url: begun.webhookUrl, body }) };
    } catch (err) {
      if (isCancellation(err)) throw err;
      result.webhook = { delivered: false, error: reasonOf(err) };
    }
  }
  if (failure !== null && !gone) throw new FileIngestionError(failure);
  return result;
}

/** The file could not be ingested; the message is the reason its event and webhook carry. */
export class FileIngestionError extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'FileIngestionError';
  }
}
