// CSV and JSONL files sent to a signed upload URL: the file is recorded (awaiting its bytes) when the
// URL is handed out; a PUT to the URL streams the bytes to storage and starts the ingestion, which
// makes one chunk per row.
import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import type * as T from '../../../sdk/src/generated/types.gen.js';
import { badRequest, HttpError, notFound } from '../../errors.js';
import type { Services } from '../../services.js';
import type { DatasetRow } from '../datasets.js';
import { reservePlanCapacity } from '../quotas.js';
import { signedLink, UPLOAD_TTL_S } from './links.js';
import { describeFile, mimeTypeOf } from './options.js';
import { fileRecord, type FileRow } from './records.js';
import { assertStorageLeft, newStorageKey, receiveBytes, startIngestion } from './upload.js';

export async function createCsvJsonlUpload(
  services: Services,
  dataset: DatasetRow,
  request: T.CreatePresignedUrlForCsvJsonlReqPayload,
): Promise<T.CreatePresignedUrlForCsvJsonResponseBody> {
  const description = describeFile(request.file_name, request);
  if (!/\.(csv|jsonl)$/i.test(description.fileName)) {
    throw badRequest(`file_name: ${description.fileName} must end in .csv or .jsonl, which says how its rows are read`);
  }
  const db = services.store.db;
  await assertStorageLeft(db, dataset.organization_id);
  // URLs handed out earlier and never used leave rows behind; they go when the next one is asked for.
  await db('files').where({ dataset_id: dataset.id, status: 'awaiting_upload' }).where('upload_expires_at', '<', db.fn.now()).del();
  const expiresAt = new Date(Date.now() + UPLOAD_TTL_S * 1000);
  const [row] = await db<FileRow>('files')
    .insert({
      id: randomUUID(),
      dataset_id: dataset.id,
      file_name: description.fileName,
      size: 0,
      link: description.link,
      metadata: (description.metadata === null ? null : JSON.stringify(description.metadata)) as never,
      tag_set: description.tagSet,
      time_stamp: description.timeStamp,
      status: 'awaiting_upload',
      mime_type: mimeTypeOf(description.fileName),
      ingest_options: JSON.stringify(description.ingestOptions) as never,
      upload_expires_at: expiresAt,
    })
    .returning('*');
  return { file_metadata: fileRecord(row), presigned_put_url: await signedLink(services, 'upload', row.id, expiresAt) };
}

/**
 * Receives the bytes sent to a file's signed upload URL (already verified). A URL takes one upload:
 * once a PUT has stored the bytes, another is refused (409); two at once, the first to finish wins.
 */
export async function receiveCsvJsonlBytes(services: Services, fileId: string, incoming: { stream: Readable; declaredType?: string | null }): Promise<FileRow> {
  const db = services.store.db;
  const file = await db<FileRow>('files').where({ id: fileId }).first();
  if (!file || file.status === 'deleting') throw notFound(`file ${fileId} not found`);
  if (file.status !== 'awaiting_upload') throw new HttpError(409, `file ${fileId} has received its bytes already; this upload URL is used up`);
  const dataset = await db<DatasetRow>('datasets').where({ id: file.dataset_id, deleted: 0 }).first();
  if (!dataset) throw notFound(`the dataset of file ${fileId} no longer exists`);
  await assertStorageLeft(db, dataset.organization_id);
  const key = newStorageKey(dataset.id, fileId);
  const stored = await receiveBytes(services, key, { stream: incoming.stream, field: 'body', declaredType: incoming.declaredType });
  let row: FileRow | undefined;
  try {
    row = await db.transaction(async (trx) => {
      const [updated] = await trx<FileRow>('files')
        .where({ id: fileId, status: 'awaiting_upload' })
        .update({ status: 'pending', size: stored.bytes, storage_key: key, sha256: stored.sha256, upload_expires_at: null, updated_at: trx.fn.now() as never })
        .returning('*');
      if (updated) await reservePlanCapacity(trx, dataset.organization_id, { fileBytes: stored.bytes }, { written: true });
      return updated;
    });
  } catch (error) {
    await services.storage.remove(key);
    throw error;
  }
  if (!row) {
    await services.storage.remove(key);
    throw new HttpError(409, `file ${fileId} received its bytes from another upload meanwhile; this one was discarded`);
  }
  await startIngestion(services, row);
  return row;
}
