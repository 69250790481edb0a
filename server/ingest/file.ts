// The file being ingested, as the upload recorded it, and its end state.
import type { Knex } from 'knex';
import { emitEvent } from '../domain/events.js';

export interface IngestFileRow {
  id: string;
  dataset_id: string;
  file_name: string;
  storage_key: string | null;
  mime_type: string | null;
  ingest_options: unknown;
  status: string;
}

/** The file, unless it is gone or being deleted (then there is nothing to ingest). */
export async function loadIngestFile(db: Knex, datasetId: string, fileId: string): Promise<IngestFileRow | null> {
  const row = await db<IngestFileRow>('files')
    .where({ id: fileId, dataset_id: datasetId })
    .first('id', 'dataset_id', 'file_name', 'storage_key', 'mime_type', 'ingest_options', 'status');
  return row && row.status !== 'deleting' ? row : null;
}

/** The file is deleted or being deleted, or its dataset is: its ingestion must write nothing more. */
export class FileGoneError extends Error {
  constructor(fileId: string) {
    super(`file ${fileId} was deleted during its ingestion`);
    this.name = 'FileGoneError';
  }
}

/**
 * Locks the file's row and its dataset's row (FOR SHARE) in the transaction that writes a batch of
 * the file's chunks, and throws FileGoneError when the file is gone or being deleted or the dataset
 * is deleted. Deleting a file or a dataset first updates its row, which waits for this lock: so a
 * batch either commits before the deletion marks the row (its chunks are then in the file's group,
 * which the deletion removes) or sees the mark and writes nothing.
 */
export async function lockLiveFile(trx: Knex.Transaction, datasetId: string, fileId: string): Promise<void> {
  const row: { status: string; deleted: number } | undefined = await trx('files as f')
    .join('datasets as d', 'd.id', 'f.dataset_id')
    .where({ 'f.id': fileId, 'f.dataset_id': datasetId })
    .forShare()
    .first('f.status', 'd.deleted');
  if (!row || row.status === 'deleting' || row.deleted !== 0) throw new FileGoneError(fileId);
}

/** Marks the file as being processed (only from pending: a finished file keeps its state). */
export async function markProcessing(db: Knex, fileId: string): Promise<void> {
  await db('files').where({ id: fileId, status: 'pending' }).update({ status: 'processing', updated_at: db.fn.now() });
}

export type IngestOutcome = { status: 'completed'; chunksCreated: number; groupId: string | null } | { status: 'failed'; reason: string };

/**
 * Records the outcome: the file's status and, in the same transaction, the dataset event
 * (`file_uploaded` or `file_upload_failed`). Only a file still pending or processing changes, so
 * a repeated call emits no second event. Returns whether this call recorded it.
 */
export async function recordOutcome(db: Knex, file: { id: string; datasetId: string; fileName: string }, outcome: IngestOutcome): Promise<boolean> {
  return db.transaction(async (trx) => {
    const updated = await trx('files')
      .where({ id: file.id })
      .whereIn('status', ['pending', 'processing'])
      .update({ status: outcome.status, updated_at: trx.fn.now() })
      .returning('id');
    if (updated.length === 0) return false;
    const data =
      outcome.status === 'completed'
        ? { file_id: file.id, file_name: file.fileName, group_id: outcome.groupId, chunks_created: outcome.chunksCreated }
        : { file_id: file.id, file_name: file.fileName, error: outcome.reason };
    await emitEvent(trx, { datasetId: file.datasetId, type: outcome.status === 'completed' ? 'file_uploaded' : 'file_upload_failed', data });
    return true;
  });
}
