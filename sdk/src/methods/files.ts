// Files: upload them (base64 in JSON, or multipart from a Blob or a stream), list, read and delete
// them, and get an upload URL for a CSV or JSONL file.
import type { ChunkSearch } from '../chunk-search.js';
import { unwrap } from '../errors.js';
import * as api from '../generated/sdk.gen.js';
import type * as T from '../generated/types.gen.js';
import { datasetHeaders, sending } from '../scope.js';
import { type UploadFileMultipart, uploadBody } from '../upload.js';

/**
 * Upload a file, which the service stores and turns into chunks in the background: `POST /api/file`.
 *
 * Give `file` (a Blob or File, a ReadableStream or any async iterable of bytes such as a Node.js
 * Readable) and it goes as a multipart upload, streamed, up to 1 GB; or give `base64_file` and it
 * goes base64 in a JSON body, as the reference client sends it. In Node.js, `fileFromPath` of
 * `@chunksearch/sdk/node` opens a file on disk as a File.
 *
 * ```ts
 * await chunkSearch.uploadFile({ file: new File([text], 'notes.md'), tag_set: ['notes'] });
 * await chunkSearch.uploadFile({ file: await fileFromPath('report.pdf') });
 * await chunkSearch.uploadFile({ file: createReadStream('big.pdf'), file_name: 'big.pdf' });
 * ```
 */
export async function uploadFile(this: ChunkSearch, data: T.UploadFileReqPayload | UploadFileMultipart, signal?: AbortSignal) {
  if (!('file' in data)) return unwrap(api.uploadFileHandler({ ...sending(this, signal), headers: datasetHeaders(this), body: data }));
  const { body, contentType } = uploadBody(data);
  // A stream body needs half-duplex fetch (Node.js asks for it to be said; browsers only stream over HTTP/2).
  const streaming = contentType ? { duplex: 'half' } : {};
  return unwrap(
    this.client.post<T.UploadFileHandlerResponses, T.UploadFileHandlerErrors, false>({
      ...sending(this, signal),
      ...streaming,
      url: '/api/file',
      security: [{ name: 'Authorization', type: 'apiKey' }],
      headers: { ...datasetHeaders(this), 'Content-Type': contentType ?? null },
      body,
      bodySerializer: null,
    }),
  );
}

/** Record a CSV or JSONL file still to come and get the URL to `PUT` its bytes to: `POST /api/file/csv_or_jsonl`. */
export function createPresignedUrlForCsvJsonl(this: ChunkSearch, data: T.CreatePresignedUrlForCsvJsonlReqPayload, signal?: AbortSignal) {
  return unwrap(api.createPresignedUrlForCsvJsonl({ ...sending(this, signal), headers: datasetHeaders(this), body: data }));
}

/** The dataset's files by cursor: `GET /api/dataset/scroll_files`. */
export function scrollFiles(this: ChunkSearch, data: { cursor?: string; pageSize?: number }, signal?: AbortSignal) {
  return unwrap(
    api.getFilesCursorHandler({ ...sending(this, signal), headers: datasetHeaders(this), query: { cursor: data.cursor, page_size: data.pageSize } }),
  );
}

/** The dataset's files, a page at a time: `GET /api/dataset/files/{dataset_id}/{page}`. */
export function getFilesForDataset(this: ChunkSearch, data: { page: number }, signal?: AbortSignal) {
  const headers = datasetHeaders(this);
  return unwrap(api.getDatasetFilesAndGroupIdsHandler({ ...sending(this, signal), headers, path: { dataset_id: headers['SVC-Dataset'], page: data.page } }));
}

/** A file's record with a signed URL to download its bytes: `GET /api/file/{file_id}`. */
export function getFile(this: ChunkSearch, data: { fileId: string; contentType?: string; ttl?: number }, signal?: AbortSignal) {
  return unwrap(
    api.getFileHandler({
      ...sending(this, signal),
      headers: datasetHeaders(this),
      path: { file_id: data.fileId },
      query: { content_type: data.contentType, ttl: data.ttl },
    }),
  );
}

/** Delete a file, with its chunks when `deleteChunks`: `DELETE /api/file/{file_id}`. */
export function deleteFile(this: ChunkSearch, data: { fileId: string; deleteChunks: boolean }, signal?: AbortSignal): Promise<void> {
  return unwrap(
    api.deleteFileHandler({
      ...sending(this, signal),
      headers: datasetHeaders(this),
      path: { file_id: data.fileId },
      query: { delete_chunks: data.deleteChunks },
    }),
  );
}
