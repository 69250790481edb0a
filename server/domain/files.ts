// Files of a dataset, listed with the chunk groups made from them.
import type { Knex } from 'knex';
import type * as T from '../../generated/client/types.gen.js';
import { timestamp } from '../format.js';
import { groupRecord, type GroupRow } from './groups.js';

interface FileRow {
  id: string;
  dataset_id: string;
  file_name: string;
  size: string | number;
  link: string | null;
  metadata: Record<string, unknown> | null;
  tag_set: string | null;
  time_stamp: string | null;
  created_at: Date;
  updated_at: Date;
}

/** A page of files in id order from `cursor` (inclusive); `next_cursor` is the first id of the next page. */
export async function scrollFiles(
  db: Knex,
  datasetId: string,
  page: { cursor?: string | null; pageSize: number },
): Promise<T.GetFilesCursorResponseBody> {
  const query = db<FileRow>('files').where({ dataset_id: datasetId }).orderBy('id').limit(page.pageSize + 1);
  if (page.cursor) query.where('id', '>=', page.cursor);
  const rows = await query;
  const next = rows.length > page.pageSize ? rows.pop()! : null;
  const groups = rows.length
    ? await db<GroupRow>('chunk_groups').whereIn('file_id', rows.map((r) => r.id)).orderBy('created_at')
    : [];
  return {
    file_with_chunk_groups: rows.map((row) => ({
      id: row.id,
      dataset_id: row.dataset_id,
      file_name: row.file_name,
      size: Number(row.size),
      link: row.link,
      metadata: row.metadata,
      tag_set: row.tag_set,
      time_stamp: row.time_stamp,
      created_at: timestamp(row.created_at),
      updated_at: timestamp(row.updated_at),
      chunk_groups: groups.filter((g) => g.file_id === row.id).map(groupRecord),
    })),
    next_cursor: next?.id ?? null,
  };
}
