// File rows and the records the API shows of them.
import type { Knex } from 'knex';
import type * as T from '../../../sdk/src/generated/types.gen.js';
import { notFound } from '../../errors.js';
import { timestamp } from '../../format.js';

/**
 * `awaiting_upload`: a signed upload URL was handed out and the bytes have not come yet;
 * `pending` -> `processing` -> `completed` | `failed`: the ingestion; `deleting`: on its way out.
 */
export type FileStatus = 'awaiting_upload' | 'pending' | 'processing' | 'completed' | 'failed' | 'deleting';

export interface FileRow {
  id: string;
  dataset_id: string;
  file_name: string;
  size: string | number;
  link: string | null;
  metadata: Record<string, unknown> | null;
  /** Comma-separated. */
  tag_set: string | null;
  time_stamp: string | null;
  status: FileStatus;
  storage_key: string | null;
  mime_type: string | null;
  sha256: string | null;
  ingest_options: Record<string, unknown>;
  upload_expires_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

/** Files still waiting for their bytes or being deleted are left out of listings. */
export const UNLISTED_STATUSES: FileStatus[] = ['awaiting_upload', 'deleting'];

/** The file of the dataset (also one awaiting its bytes), or 404. */
export async function findFile(db: Knex, datasetId: string, fileId: string): Promise<FileRow> {
  const row = await db<FileRow>('files').where({ id: fileId, dataset_id: datasetId }).whereNot('status', 'deleting').first();
  if (!row) throw notFound(`file ${fileId} not found in this dataset`);
  return row;
}

export function fileRecord(row: FileRow): T.FileRecord {
  return {
    id: row.id,
    dataset_id: row.dataset_id,
    file_name: row.file_name,
    size: Number(row.size),
    link: row.link,
    metadata: row.metadata,
    tag_set: splitTags(row.tag_set),
    time_stamp: row.time_stamp,
    created_at: timestamp(row.created_at),
    updated_at: timestamp(row.updated_at),
  };
}

/** File tags are kept comma-separated (the spec's file record shows them so). */
export function joinTags(tags: string[] | null | undefined): string | null {
  return tags && tags.length > 0 ? tags.join(',') : null;
}

export function splitTags(text: string | null): string[] | null {
  return text ? text.split(',') : null;
}
