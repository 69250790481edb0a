// Handlers of the File operations; the rules are in domain/files/. A multipart upload of POST
// /api/file does not come here: http/multipart.ts streams it to storage (see app.ts).
import type {
  CreatePresignedUrlForCsvJsonlHandler,
  DeleteFileHandlerHandler,
  GetDatasetFilesAndGroupIdsHandlerHandler,
  GetFileHandlerHandler,
  GetFilesCursorHandlerHandler,
  UploadFileHandlerHandler,
  UploadHtmlPageHandler,
} from '../../generated/handlers.js';
import { assertSameDataset } from '../domain/datasets.js';
import { createCsvJsonlUpload } from '../domain/files/csvJsonl.js';
import { deleteFile } from '../domain/files/delete.js';
import { getFile } from '../domain/files/get.js';
import { receiveHtmlPage } from '../domain/files/htmlPage.js';
import { listDatasetFiles, scrollFiles } from '../domain/files/list.js';
import { fileRecord } from '../domain/files/records.js';
import { uploadBase64File } from '../domain/files/upload.js';

export const upload_file_handler: UploadFileHandlerHandler = async ({ body, dataset, services }) => ({
  status: 200,
  body: { file_metadata: fileRecord(await uploadBase64File(services, dataset, body)) },
});

export const upload_html_page: UploadHtmlPageHandler = async ({ body, services }) => {
  await receiveHtmlPage(services, body);
  return { status: 204, body: undefined };
};

export const create_presigned_url_for_csv_jsonl: CreatePresignedUrlForCsvJsonlHandler = async ({ body, dataset, services }) => ({
  status: 200,
  body: await createCsvJsonlUpload(services, dataset, body),
});

export const get_file_handler: GetFileHandlerHandler = async ({ path, query, dataset, services }) => ({
  status: 200,
  body: await getFile(services, dataset.id, path.file_id, { ttlSeconds: query?.ttl, contentType: query?.content_type }),
});

export const delete_file_handler: DeleteFileHandlerHandler = async ({ path, query, dataset, services }) => {
  await deleteFile(services, dataset.id, path.file_id, query.delete_chunks);
  return { status: 204, body: undefined };
};

export const get_dataset_files_and_group_ids_handler: GetDatasetFilesAndGroupIdsHandlerHandler = async ({ path, dataset, services }) => {
  assertSameDataset(dataset, path.dataset_id);
  return { status: 200, body: await listDatasetFiles(services.store.db, dataset.id, path.page) };
};

export const get_files_cursor_handler: GetFilesCursorHandlerHandler = async ({ query, dataset, services }) => ({
  status: 200,
  body: await scrollFiles(services.store.db, dataset.id, { cursor: query?.cursor, pageSize: query?.page_size ?? 10 }),
});
