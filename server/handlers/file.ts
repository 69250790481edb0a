import type { GetFilesCursorHandlerHandler } from '../../generated/handlers.js';
import { scrollFiles } from '../domain/files.js';

export const get_files_cursor_handler: GetFilesCursorHandlerHandler = async ({ query, dataset, services }) => ({
  status: 200,
  body: await scrollFiles(services.store.db, dataset.id, { cursor: query?.cursor, pageSize: query?.page_size ?? 10 }),
});
