// Deleting a file: its chunk groups (and, when asked, their chunks), its bytes, then its row.
import type { Services } from '../../services.js';
import { deleteGroup } from '../groups.js';
import { notFound } from '../../errors.js';
import type { FileRow } from './records.js';

/**
 * The row is marked `deleting` first: it leaves listings at once, an ingestion still under way stops
 * at its next step, and a deletion cut short is finished by deleting again. The row goes last.
 */
export async function deleteFile(services: Services, datasetId: string, fileId: string, withChunks: boolean): Promise<void> {
  const db = services.store.db;
  const [row] = await db<FileRow>('files')
    .where({ id: fileId, dataset_id: datasetId })
    .update({ status: 'deleting', updated_at: db.fn.now() as never })
    .returning('*');
  if (!row) throw notFound(`file ${fileId} not found in this dataset`);
  const groupIds: string[] = await db('chunk_groups').where({ dataset_id: datasetId, file_id: fileId }).pluck('id');
  for (const id of groupIds) await deleteGroup(services, datasetId, { id }, withChunks);
  if (row.storage_key) await services.storage.remove(row.storage_key);
  await db('files').where({ id: fileId }).del();
}
