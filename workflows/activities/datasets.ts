// Dataset activities: the I/O steps of purging, clearing and cloning datasets and of purging an
// organization. Each is idempotent, so a retry or a replay after a crash may run it again safely.
import type { Knex } from 'knex';
import type { LexicalIndex } from '../../server/engines/lexical/types.js';
import type { FileStorage } from '../../server/engines/storage/types.js';
import { datasetStoragePrefix } from '../../server/domain/files/upload.js';
import { emitEvent, type EventType } from '../../server/domain/events.js';
import type { Store } from '../../server/store/db.js';
import { dropVectorIndex, ensureVectorIndex } from '../../server/store/vectors.js';
import { lexicalText } from '../../server/domain/chunks/content.js';
import type { StoredChunk } from '../../server/domain/chunks/write.js';
import { datasetConfig } from '../../server/domain/datasetConfig.js';
import { revokePublicPageKey } from '../../server/domain/publicPage/keys.js';
import type { DatasetRow } from '../../server/domain/datasets.js';
import { forgetDataset } from '../../server/search/retrieval/bm25/postings.js';

/** Where a keyset-paged batch ended: the last id it handled, or null when there was nothing left. */
export interface BatchResult {
  count: number;
  lastId: string | null;
}

export interface BookmarkCursor {
  groupId: string;
  chunkId: string;
}

export function datasetActivities({ store, lexical, storage }: { store: Store; lexical: LexicalIndex; storage: FileStorage }) {
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

    /** Deletes up to `batchSize` of the dataset's chunk groups (their bookmarks go by cascade); returns how many. */
    async deleteDatasetGroups({ datasetId, batchSize }: { datasetId: string; batchSize: number }): Promise<number> {
      const batch = db('chunk_groups').select('id').where('dataset_id', datasetId).limit(batchSize);
      return db('chunk_groups').whereIn('id', batch).del();
    },

    /**
     * Deletes up to `batchSize` of the dataset's files, their bytes first and then their records;
     * returns how many. Bytes already gone (a replay after a crash between the two) are no error.
     */
    async deleteDatasetFiles({ datasetId, batchSize }: { datasetId: string; batchSize: number }): Promise<number> {
      const files: { id: string; storage_key: string | null }[] = await db('files').select('id', 'storage_key').where('dataset_id', datasetId).limit(batchSize);
      for (const { storage_key } of files) if (storage_key) await storage.remove(storage_key);
      return files.length
        ? db('files')
            .whereIn(
              'id',
              files.map((f) => f.id),
            )
            .del()
        : 0;
    },

    /**
     * Deletes the dataset row and its events; what still hangs off it (groups, files, crawls...) goes
     * by cascade. Then the bytes of its files go, all at once under the dataset's storage prefix: an
     * upload racing the purge either committed its file row before (its bytes are under the prefix)
     * or finds the dataset gone and removes its own bytes.
     */
    async deleteDatasetRow(datasetId: string): Promise<void> {
      await db.transaction(async (trx) => {
        await trx('events').where('dataset_id', datasetId).del();
        await revokePublicPageKey(trx, datasetId);
        await forgetDataset(trx, datasetId);
        await trx('datasets').where('id', datasetId).del();
      });
      await dropVectorIndex(db, datasetId);
      await storage.removeAll(datasetStoragePrefix(datasetId));
    },

    /** Records an event of the dataset, with the dataset's organization; nothing when the dataset row is gone. */
    async recordDatasetEvent(event: { datasetId: string; type: EventType; data: Record<string, unknown> }): Promise<void> {
      await emitEvent(db, { datasetId: event.datasetId, type: event.type, data: event.data });
    },

    /**
     * Hides every dataset of the organization (deleted = 1, tracking id freed) and returns all their
     * ids, in creation order, for the purge to work through.
     */
    async retireOrganizationDatasets(organizationId: string): Promise<string[]> {
      await db('datasets').where({ organization_id: organizationId, deleted: 0 }).update({ deleted: 1, tracking_id: null, updated_at: db.fn.now() });
      return db('datasets').where({ organization_id: organizationId }).orderBy(['created_at', 'id']).pluck('id');
    },

    /** Deletes the organization row and its events; keys, subscription, memberships and invitations go by cascade. */
    async deleteOrganizationRow(organizationId: string): Promise<void> {
      await db.transaction(async (trx) => {
        await trx('events').where('organization_id', organizationId).del();
        await trx('organizations').where('id', organizationId).del();
      });
    },

    /**
     * Copies the next `batchSize` chunks of `sourceId` after `afterId` (in id order) into `targetId`,
     * every column as it is, under ids derived from the target and the source chunk, so that a
     * repeated batch inserts nothing twice. Copies nothing once the target is no longer live.
     */
    async copyDatasetChunks(batch: { sourceId: string; targetId: string; afterId: string | null; batchSize: number }): Promise<BatchResult> {
      const result = await copyRows(db, 'chunks', batch, ['id', 'dataset_id'], []);
      if (result.count > 0) await copyVectors(db, batch, result.lastId!);
      return result;
    },

    /** Copies the next `batchSize` chunk groups like copyDatasetChunks; the copies are tied to no file. */
    async copyDatasetGroups(batch: { sourceId: string; targetId: string; afterId: string | null; batchSize: number }): Promise<BatchResult> {
      return copyRows(db, 'chunk_groups', batch, ['id', 'dataset_id', 'file_id'], ['file_id']);
    },

    /** Copies the next `batchSize` bookmarks of the source's groups between the copied groups and chunks. */
    async copyDatasetBookmarks(batch: {
      sourceId: string;
      targetId: string;
      after: BookmarkCursor | null;
      batchSize: number;
    }): Promise<{ count: number; last: BookmarkCursor | null }> {
      const { sourceId, targetId, after, batchSize } = batch;
      if (!(await isLive(db, targetId))) return { count: 0, last: null };
      const page = db('chunk_group_bookmarks as b')
        .join('chunk_groups as g', 'g.id', 'b.group_id')
        .where('g.dataset_id', sourceId)
        .orderBy(['b.group_id', 'b.chunk_id'])
        .limit(batchSize)
        .select('b.group_id', 'b.chunk_id');
      if (after) page.whereRaw('(b.group_id, b.chunk_id) > (?::uuid, ?::uuid)', [after.groupId, after.chunkId]);
      const rows: { group_id: string; chunk_id: string }[] = await page;
      if (rows.length === 0) return { count: 0, last: null };
      await db.raw(
        `insert into chunk_group_bookmarks (group_id, chunk_id, created_at)
         select ${derivedId('?', 'b.group_id')}, ${derivedId('?', 'b.chunk_id')}, b.created_at
         from chunk_group_bookmarks b
         where (b.group_id, b.chunk_id) in (select * from unnest(?::uuid[], ?::uuid[]))
           and exists (select 1 from chunk_groups g where g.id = ${derivedId('?', 'b.group_id')})
           and exists (select 1 from chunks c where c.id = ${derivedId('?', 'b.chunk_id')})
         on conflict do nothing`,
        [targetId, targetId, rows.map((r) => r.group_id), rows.map((r) => r.chunk_id), targetId, targetId],
      );
      const last = rows[rows.length - 1];
      return { count: rows.length, last: { groupId: last.group_id, chunkId: last.chunk_id } };
    },

    /** Puts the next `batchSize` chunks of the dataset (after `afterId`, in id order) into the lexical index. */
    async indexDatasetChunks({ datasetId, afterId, batchSize }: { datasetId: string; afterId: string | null; batchSize: number }): Promise<BatchResult> {
      if (!(await isLive(db, datasetId))) return { count: 0, lastId: null };
      const page = db<StoredChunk>('chunks').where('dataset_id', datasetId).orderBy('id').limit(batchSize);
      if (afterId) page.where('id', '>', afterId);
      const rows: StoredChunk[] = await page;
      if (rows.length === 0) return { count: 0, lastId: null };
      await lexical.upsert(rows.map((r) => ({ id: r.id, datasetId, text: lexicalText(r) })));
      return { count: rows.length, lastId: rows[rows.length - 1].id };
    },
  };
}

/**
 * SQL for the id a copy gets: a version-4-shaped uuid hashed from the target dataset and the
 * source row's id, so the same row copied into the same dataset always gets the same id.
 */
function derivedId(targetParam: string, sourceColumn: string): string {
  return `overlay(overlay(md5(${targetParam}::text || ':' || ${sourceColumn}::text) placing '4' from 13) placing '8' from 17)::uuid`;
}

async function isLive(db: Knex, datasetId: string): Promise<boolean> {
  return Boolean(await db('datasets').where({ id: datasetId, deleted: 0 }).first('id'));
}

/** Copies the vectors of the source chunks of a copied batch (ids after `afterId` up to `lastId`) to their copies. */
async function copyVectors(db: Knex, batch: { sourceId: string; targetId: string; afterId: string | null }, lastId: string): Promise<void> {
  const target = await db<DatasetRow>('datasets').where({ id: batch.targetId }).first();
  if (!target) return;
  const config = datasetConfig(target);
  await ensureVectorIndex(db, batch.targetId, config.EMBEDDING_SIZE, config.DISTANCE_METRIC);
  await db.raw(
    `insert into chunk_vectors (chunk_id, dataset_id, embedding)
     select ${derivedId('?', 'v.chunk_id')}, ?::uuid, v.embedding from chunk_vectors v
     where v.dataset_id = ? and v.chunk_id > coalesce(?::uuid, '00000000-0000-0000-0000-000000000000') and v.chunk_id <= ?::uuid
       and exists (select 1 from chunks c where c.id = ${derivedId('?', 'v.chunk_id')})
     on conflict (chunk_id) do nothing`,
    [batch.targetId, batch.targetId, batch.sourceId, batch.afterId, lastId, batch.targetId],
  );
}

async function copyRows(
  db: Knex,
  table: 'chunks' | 'chunk_groups',
  batch: { sourceId: string; targetId: string; afterId: string | null; batchSize: number },
  derived: string[],
  nulled: string[],
): Promise<BatchResult> {
  const { sourceId, targetId, afterId, batchSize } = batch;
  if (!(await isLive(db, targetId))) return { count: 0, lastId: null };
  const page = db(table).where('dataset_id', sourceId).orderBy('id').limit(batchSize).pluck('id');
  if (afterId) page.where('id', '>', afterId);
  const ids: string[] = await page;
  if (ids.length === 0) return { count: 0, lastId: null };
  // Every column the table has now, so columns added later are copied too.
  const copied = Object.keys(await db(table).columnInfo()).filter((c) => !derived.includes(c));
  const columns = ['id', 'dataset_id', ...nulled, ...copied];
  const values = [derivedId('?', 'id'), '?::uuid', ...nulled.map(() => 'null'), ...copied.map(() => '??')];
  await db.raw(
    `insert into ?? (${columns.map(() => '??').join(', ')})
     select ${values.join(', ')} from ?? where dataset_id = ? and id = any(?::uuid[])
     on conflict do nothing`,
    [table, ...columns, targetId, targetId, ...copied, table, sourceId, ids],
  );
  return { count: ids.length, lastId: ids[ids.length - 1] };
}
