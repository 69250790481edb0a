// Deleting chunks: the rows (with their vectors and bookmarks) in one transaction, then their lexical
// index entries. An entry left behind when the index fails has no row, so no search can return it.
import type * as T from '../../../sdk/src/generated/types.gen.js';
import { badRequest } from '../../errors.js';
import { applyChunkFilter, validateChunkFilter } from '../../search/filters.js';
import type { Services } from '../../services.js';
import { emitEvent } from '../events.js';

export async function deleteChunks(services: Pick<Services, 'store' | 'lexical'>, datasetId: string, chunkIds: string[]): Promise<number> {
  if (chunkIds.length === 0) return 0;
  const deleted: string[] = await services.store
    .db('chunks')
    .where({ dataset_id: datasetId })
    .whereIn('id', chunkIds)
    .del()
    .returning('id')
    .then((rows) => rows.map((r: { id: string }) => r.id));
  if (deleted.length > 0) await services.lexical.remove(datasetId, deleted);
  return deleted.length;
}

/** Deletes every chunk of the dataset that matches the filter, a thousand at a time. */
export async function deleteChunksMatching(services: Services, datasetId: string, filter: T.ChunkFilter): Promise<number> {
  const conditions = [filter.must, filter.should, filter.must_not].flatMap((list) => list ?? []);
  if (conditions.length === 0) throw badRequest('filter: give at least one condition; to delete every chunk, clear the dataset');
  validateChunkFilter(filter);
  let total = 0;
  for (;;) {
    const ids: string[] = await applyChunkFilter(services.store.db('chunks').where('chunks.dataset_id', datasetId), filter)
      .orderBy('chunks.id')
      .limit(1000)
      .pluck('chunks.id');
    if (ids.length === 0) break;
    total += await deleteChunks(services, datasetId, ids);
  }
  if (total > 0) await emitEvent(services.store.db, { datasetId, type: 'bulk_chunks_deleted', data: { deleted: total } });
  return total;
}
