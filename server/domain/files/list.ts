// Files of a dataset: scrolled by id with their chunk groups (spec operation 7), or paged newest first.
import type { Knex } from 'knex';
import type * as T from '../../../sdk/src/generated/types.gen.js';
import { groupRecord, type GroupRow } from '../groups.js';
import { fileRecord, UNLISTED_STATUSES, type FileRow } from './records.js';

/** Files per page of the paged listing (the reference's fixed page size). */
export const FILE_PAGE_SIZE = 10;

function listed(db: Knex, datasetId: string): Knex.QueryBuilder<FileRow> {
  return db<FileRow>('files').where({ dataset_id: datasetId }).whereNotIn('status', UNLISTED_STATUSES);
}

/** A page of files in id order from `cursor` (inclusive); `next_cursor` is the first id of the next page. */
export async function scrollFiles(db: Knex, datasetId: string, page: { cursor?: string | null; pageSize: number }): Promise<T.GetFilesCursorResponseBody> {
  const query = listed(db, datasetId)
    .orderBy('id')
    .limit(page.pageSize + 1);
  if (page.cursor) query.where('id', '>=', page.cursor);
  const rows: FileRow[] = await query;
  const next = rows.length > page.pageSize ? rows.pop()! : null;
  const groups = rows.length
    ? await db<GroupRow>('chunk_groups')
        .where({ dataset_id: datasetId })
        .whereIn(
          'file_id',
          rows.map((r) => r.id),
        )
        .orderBy('created_at')
    : [];
  return {
    // The spec's scroll record shows the tags as the stored comma-separated text.
    file_with_chunk_groups: rows.map((row) => ({
      ...fileRecord(row),
      tag_set: row.tag_set,
      chunk_groups: groups.filter((g) => g.file_id === row.id).map(groupRecord),
    })),
    next_cursor: next?.id ?? null,
  };
}

/** Page `page` (from 1; 0 reads as 1) of the dataset's files, newest first, with the group made from each. */
export async function listDatasetFiles(db: Knex, datasetId: string, page: number): Promise<T.FileData> {
  const [{ count }] = await listed(db, datasetId).count<{ count: string }[]>('* as count');
  const rows: FileRow[] = await listed(db, datasetId)
    .orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])
    .limit(FILE_PAGE_SIZE)
    .offset((Math.max(page, 1) - 1) * FILE_PAGE_SIZE);
  // A file's group is the first made from it (the ingestion makes one).
  const groups: { id: string; file_id: string }[] = rows.length
    ? await db('chunk_groups')
        .where({ dataset_id: datasetId })
        .whereIn(
          'file_id',
          rows.map((r) => r.id),
        )
        .orderBy('created_at', 'desc')
        .select('id', 'file_id')
    : [];
  const groupOf = new Map(groups.map((g) => [g.file_id, g.id]));
  return {
    file_and_group_ids: rows.map((row) => ({ file: fileRecord(row), group_id: groupOf.get(row.id) ?? null })),
    total_pages: Math.ceil(Number(count) / FILE_PAGE_SIZE),
  };
}
