// Deleting chunks: the rows (with their vectors and bookmarks) in one transaction, then their lexical
// index entries. An entry left behind when the index fails has no row, so no search can return it.
import type { Services } from '../../services.js';

export async function deleteChunks(services: Services, datasetId: string, chunkIds: string[]): Promise<number> {
  if (chunkIds.length === 0) return 0;
  const deleted: string[] = await services.store.db('chunks').where({ dataset_id: datasetId }).whereIn('id', chunkIds).del().returning('id').then((rows) => rows.map((r: { id: string }) => r.id));
  if (deleted.length > 0) await services.lexical.remove(datasetId, deleted);
  return deleted.length;
}
