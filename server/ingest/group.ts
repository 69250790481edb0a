// The chunk group that holds a file's chunks and carries its file id (so a file is listed with its
// groups). Its id derives from the file, so creating it again is a no-op. With a group tracking id
// the upload takes over the dataset's group of that tracking id, as the reference does.
import type { Knex } from 'knex';
import { fileGroupId } from './ids.js';

export interface FileGroup {
  datasetId: string;
  fileId: string;
  name: string;
  description: string | null;
  tagSet: string[] | null;
  trackingId: string | null;
}

export async function ensureFileGroup(db: Knex, group: FileGroup): Promise<string> {
  const row = {
    id: fileGroupId(group.fileId),
    dataset_id: group.datasetId,
    tracking_id: group.trackingId,
    name: group.name,
    description: group.description ?? '',
    tag_set: group.tagSet?.length ? group.tagSet : null,
    file_id: group.fileId,
  };
  if (group.trackingId === null) {
    await db('chunk_groups').insert(row).onConflict('id').ignore();
    return row.id;
  }
  const [stored] = await db('chunk_groups')
    .insert(row)
    .onConflict(['dataset_id', 'tracking_id'])
    .merge({ name: row.name, description: row.description, tag_set: row.tag_set, file_id: row.file_id, updated_at: db.fn.now() })
    .returning('id');
  return stored.id;
}

/** Removes the file's own group (not a group it took over by tracking id) once it holds no chunk. */
export async function dropEmptyFileGroup(db: Knex, fileId: string): Promise<void> {
  await db('chunk_groups')
    .where({ id: fileGroupId(fileId) })
    .whereNotExists(db('chunk_group_bookmarks').where('group_id', fileGroupId(fileId)).select(db.raw('1')))
    .del();
}
