// Chunk groups: named collections of a dataset's chunks, and bookmarks placing chunks in them.
import type { Knex } from 'knex';
import type * as T from '../../generated/client/types.gen.js';
import { badRequest, notFound } from '../errors.js';
import { timestamp } from '../format.js';

export interface GroupRow {
  id: string;
  dataset_id: string;
  tracking_id: string | null;
  name: string;
  description: string;
  metadata: unknown;
  tag_set: string[] | null;
  file_id: string | null;
  created_at: Date;
  updated_at: Date;
}

export async function getGroupByTrackingId(db: Knex, datasetId: string, trackingId: string): Promise<T.ChunkGroupAndFileId> {
  const row = await db<GroupRow>('chunk_groups').where({ dataset_id: datasetId, tracking_id: trackingId }).first();
  if (!row) throw notFound(`group with tracking_id ${trackingId} not found in this dataset`);
  return { ...groupRecord(row), file_id: row.file_id };
}

/** Bookmarks a chunk in a group; adding a chunk that is already there changes nothing. */
export async function addChunkToGroup(
  db: Knex,
  datasetId: string,
  groupId: string,
  chunk: { chunk_id?: string | null; chunk_tracking_id?: string | null },
): Promise<void> {
  const byId = chunk.chunk_id != null;
  if (byId === (chunk.chunk_tracking_id != null)) throw badRequest('give exactly one of chunk_id and chunk_tracking_id');
  const group = await db('chunk_groups').where({ id: groupId, dataset_id: datasetId }).first('id');
  if (!group) throw notFound(`group ${groupId} not found in this dataset`);
  const found = await db('chunks')
    .where({ dataset_id: datasetId, ...(byId ? { id: chunk.chunk_id } : { tracking_id: chunk.chunk_tracking_id }) })
    .first('id');
  if (!found) throw notFound(`chunk ${byId ? chunk.chunk_id : `with tracking_id ${chunk.chunk_tracking_id}`} not found in this dataset`);
  await db('chunk_group_bookmarks').insert({ group_id: groupId, chunk_id: found.id }).onConflict(['group_id', 'chunk_id']).ignore();
}

export function groupRecord(row: GroupRow): T.ChunkGroup {
  return {
    id: row.id,
    dataset_id: row.dataset_id,
    name: row.name,
    description: row.description,
    metadata: row.metadata ?? null,
    tag_set: row.tag_set ?? [],
    tracking_id: row.tracking_id,
    created_at: timestamp(row.created_at),
    updated_at: timestamp(row.updated_at),
  };
}
