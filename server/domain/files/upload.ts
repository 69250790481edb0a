// Storing an uploaded file: its bytes streamed into storage (never held whole in memory), then its
// row (status pending) in a transaction that checks the plan's file storage, then its ingestion
// started as durable work. A failure at any step removes what the earlier steps wrote.
import { randomBytes, randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import type { Knex } from 'knex';
import type * as T from '../../../sdk/src/generated/types.gen.js';
import { workflowIds } from '../../../workflows/registry.js';
import { ObjectTooLargeError } from '../../engines/storage/types.js';
import { badRequest, HttpError, payloadTooLarge, planLimitReached } from '../../errors.js';
import type { Services } from '../../services.js';
import type { DatasetRow } from '../datasets.js';
import { planOf, reservePlanCapacity, sumFileBytes } from '../quotas.js';
import { describeFile, mimeTypeOf, type FileDescription } from './options.js';
import type { FileRow } from './records.js';

/** The bytes of an upload as they arrive, and the request field that carries them (named in errors). */
export interface IncomingBytes {
  stream: Readable;
  field: string;
  /** The media type the client declared for the bytes, if any. */
  declaredType?: string | null;
}

/** A new key for a file's bytes: each upload writes its own, so concurrent uploads never share one. */
export function newStorageKey(datasetId: string, fileId: string): string {
  return `${datasetStoragePrefix(datasetId)}/${fileId}-${randomBytes(4).toString('hex')}`;
}

/** The prefix of every key of the dataset's files: purging the dataset removes everything under it. */
export function datasetStoragePrefix(datasetId: string): string {
  return datasetId;
}

/** Stores a new file of the dataset and starts its ingestion; returns its row. */
export async function storeNewFile(services: Services, dataset: DatasetRow, description: FileDescription, incoming: IncomingBytes): Promise<FileRow> {
  await assertStorageLeft(services.store.db, dataset.organization_id);
  const fileId = randomUUID();
  const key = newStorageKey(dataset.id, fileId);
  const stored = await receiveBytes(services, key, incoming);
  let row: FileRow;
  try {
    row = await services.store.db.transaction(async (trx) => {
      const [inserted] = await trx<FileRow>('files')
        .insert({
          id: fileId,
          dataset_id: dataset.id,
          file_name: description.fileName,
          size: stored.bytes,
          link: description.link,
          metadata: jsonb(description.metadata) as never,
          tag_set: description.tagSet,
          time_stamp: description.timeStamp,
          status: 'pending',
          storage_key: key,
          mime_type: mimeTypeOf(description.fileName, incoming.declaredType),
          sha256: stored.sha256,
          ingest_options: JSON.stringify(description.ingestOptions) as never,
        })
        .returning('*');
      await reservePlanCapacity(trx, dataset.organization_id, { fileBytes: stored.bytes }, { written: true });
      return inserted as FileRow;
    });
  } catch (error) {
    await services.storage.remove(key);
    throw error;
  }
  await startIngestion(services, row);
  return row;
}

/**
 * Streams the bytes into storage under `key`: 413 past the upload limit, 400 when empty or cut off.
 * Nothing is left under the key when it throws.
 */
export async function receiveBytes(services: Services, key: string, incoming: IncomingBytes): Promise<{ bytes: number; sha256: string }> {
  const limit = services.config.fileUploadLimit;
  let stored;
  try {
    stored = await services.storage.put(key, incoming.stream, { maxBytes: limit });
  } catch (error) {
    if (error instanceof ObjectTooLargeError) {
      throw payloadTooLarge(`${incoming.field}: the file is over the upload limit of ${limit} bytes (${describeSize(limit)})`);
    }
    if (error instanceof HttpError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOSPC' || code === 'EACCES' || code === 'EROFS' || code === 'EIO') throw error;
    throw badRequest(`${incoming.field}: the upload did not complete: ${(error as Error).message}`);
  }
  if (stored.bytes === 0) {
    await services.storage.remove(key);
    throw badRequest(`${incoming.field}: the file is empty`);
  }
  return stored;
}

/**
 * Starts the file's ingestion without waiting for it. When it cannot start, the file's row and
 * bytes are removed and the request fails (503): nothing is left that no work would ever pick up.
 */
export async function startIngestion(services: Services, row: FileRow): Promise<void> {
  try {
    await services.workflows.run('ingestFile', { workflowId: workflowIds.ingestFile(row.id), input: { datasetId: row.dataset_id, fileId: row.id } });
  } catch (error) {
    await services.store.db('files').where({ id: row.id }).del();
    if (row.storage_key) await services.storage.remove(row.storage_key);
    throw new HttpError(503, `the file could not be handed to its ingestion, so it was not kept: ${(error as Error).message}`);
  }
}

/**
 * Refuses (426) before any byte is read when the organization's file storage is already full; the
 * exact check, with the file's size, is made when its row is written.
 */
export async function assertStorageLeft(db: Knex, organizationId: string): Promise<void> {
  const plan = await planOf(db, organizationId);
  const used = await sumFileBytes(db, organizationId);
  if (used >= Number(plan.file_storage)) {
    throw planLimitReached(`the ${plan.name} plan allows ${plan.file_storage} bytes of file storage and the organization has used ${used}`);
  }
}

/** Decodes a `base64_file`: the standard or the URL-safe alphabet, padding optional; 400 otherwise. */
export function decodeBase64(text: string, field = 'base64_file'): Buffer {
  const body = text.replace(/=+$/, '');
  if (/[^A-Za-z0-9+/_-]/.test(body) || body.length % 4 === 1 || text.length - body.length > 2) {
    throw badRequest(`${field}: is not valid base64 (only the base64 alphabets, standard or URL-safe, and at most two = of padding)`);
  }
  return Buffer.from(body, 'base64');
}

function describeSize(bytes: number): string {
  for (const [unit, size] of [
    ['GB', 1024 ** 3],
    ['MB', 1024 ** 2],
    ['KB', 1024],
  ] as const) {
    if (bytes >= size && bytes % size === 0) return `${bytes / size} ${unit}`;
  }
  return `${bytes} bytes`;
}

/** A JSON value for a jsonb column: the driver would write a JS array as a Postgres array. */
function jsonb(value: unknown): string | null {
  return value === undefined || value === null ? null : JSON.stringify(value);
}

/** POST /api/file with a JSON body: the file arrives base64-encoded. */
export async function uploadBase64File(services: Services, dataset: DatasetRow, request: T.UploadFileReqPayload): Promise<FileRow> {
  const description = describeFile(request.file_name, request);
  const bytes = decodeBase64(request.base64_file);
  return storeNewFile(services, dataset, description, { stream: Readable.from([bytes]), field: 'base64_file' });
}
