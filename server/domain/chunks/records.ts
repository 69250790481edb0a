// Chunk rows and the records the API returns for them, in either API version's shape.
import type * as T from '../../../sdk/src/generated/types.gen.js';
import { timestamp } from '../../format.js';

export interface ChunkRow {
  id: string;
  dataset_id: string;
  tracking_id: string | null;
  chunk_html: string | null;
  link: string | null;
  metadata: unknown;
  tag_set: string[] | null;
  /** `YYYY-MM-DD HH:MM:SS[.ffffff]` as the database keeps it (no zone). */
  time_stamp: string | null;
  weight: number;
  num_value: number | null;
  image_urls: string[] | null;
  location_lat: number | null;
  location_lon: number | null;
  created_at: Date;
  updated_at: Date;
}

/**
 * The columns of a ChunkRow: what reads of chunk records select, leaving out the derived columns
 * (terms, words, embedding inputs) that a `select *` would read and send for nothing.
 */
const chunkColumns = [
  'id',
  'dataset_id',
  'tracking_id',
  'chunk_html',
  'link',
  'metadata',
  'tag_set',
  'time_stamp',
  'weight',
  'num_value',
  'image_urls',
  'location_lat',
  'location_lon',
  'created_at',
  'updated_at',
] as const satisfies readonly (keyof ChunkRow)[];
export const CHUNK_COLUMNS: (keyof ChunkRow)[] = [...chunkColumns];

/** CHUNK_COLUMNS of a table aliased `alias`. */
export const chunkColumnsOf = (alias: string) => CHUNK_COLUMNS.map((column) => `${alias}.${column}`);

export type ApiVersion = 'V1' | 'V2';

/** The V2 record: `tag_set` as a list. */
export function chunkRecord(row: ChunkRow): T.ChunkMetadata {
  return {
    id: row.id,
    dataset_id: row.dataset_id,
    tracking_id: row.tracking_id,
    chunk_html: row.chunk_html,
    link: row.link,
    metadata: row.metadata ?? null,
    tag_set: row.tag_set ?? [],
    time_stamp: row.time_stamp ? isoWithoutZone(row.time_stamp) : null,
    weight: row.weight,
    num_value: row.num_value,
    image_urls: row.image_urls ?? [],
    location: row.location_lat == null || row.location_lon == null ? null : { lat: row.location_lat, lon: row.location_lon },
    created_at: timestamp(row.created_at),
    updated_at: timestamp(row.updated_at),
  };
}

/** The record in the shape an `X-API-Version` asks for; V1 gives `tag_set` as comma-separated text. */
export function versionedChunkRecord(row: ChunkRow, version: ApiVersion): T.ChunkReturnTypes {
  const record = chunkRecord(row);
  return version === 'V2' ? record : { ...record, tag_set: (row.tag_set ?? []).join(',') };
}

/** `time_stamp` is a zone-less date and time, returned in ISO 8601 form. */
function isoWithoutZone(value: string): string {
  return value.replace(' ', 'T');
}
