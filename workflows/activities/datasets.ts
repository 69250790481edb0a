// Dataset activities: the I/O steps of purging a dataset. Each is idempotent, so a retry or a
// replay after a crash may run it again safely.
import type { LexicalIndex } from '../../server/engines/lexical/types.js';
import type { Store } from '../../server/store/db.js';

export function datasetActivities({ store, lexical }: { store: Store; lexical: LexicalIndex }) {
  const { db } = store;
  return {
    async removeDatasetFromLexicalIndex(datasetId: string): Promise<void> {
      await lexical.removeDataset(datasetId);
    },

    /** Deletes up to `batchSize` of the dataset's chunks in one short statement; returns how many. */
    async deleteDatasetChunks({ datasetId, batchSize }: { datasetId: string; batchSize: number }): Promise<number> {
      const batch = db('chunks').select('id').where('dataset_id', datasetId).limit(batchSize);
      return db('chunks').whereIn('id', batch).del();
    },

    /** Deletes the dataset row; what still hangs off it (groups, files, crawls...) goes by cascade. */
    async deleteDatasetRow(datasetId: string): Promise<void> {
      await db('datasets').where('id', datasetId).del();
    },
  };
}
