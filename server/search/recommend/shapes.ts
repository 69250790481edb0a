// Recommended chunks in the response shapes: V2 ScoreChunks, V1 records with their score
// (`ChunkMetadataWithScore`, `tag_set` as text); `slim_chunks` leaves chunk_html out.
import type * as T from '../../../sdk/src/generated/types.gen.js';
import { chunkRecord, type ChunkRow } from '../../domain/chunks/records.js';
import type { ChunkShapes } from '../groups/index.js';
import type { Result } from '../index.js';

function v2Chunk(row: ChunkRow, slim: boolean): T.NewChunkMetadataTypes {
  const { chunk_html, ...rest } = chunkRecord(row);
  return slim ? rest : { ...rest, chunk_html };
}

function v1Chunk(row: ChunkRow, slim: boolean): T.ChunkMetadataTypes {
  const { chunk_html, ...rest } = chunkRecord(row);
  const record = { ...rest, tag_set: (row.tag_set ?? []).join(',') };
  return slim ? record : { ...record, chunk_html };
}

export function recommendShapes(slim: boolean): ChunkShapes {
  return {
    v2: (results) => results.map((r) => ({ chunk: v2Chunk(r.row, slim), highlights: null, score: r.score })),
    v1: (results) => results.map((r) => ({ metadata: [v1Chunk(r.row, slim)], highlights: null, score: r.score })),
  };
}

/** The V1 record of a recommended chunk: its fields and its score. */
export function v1ChunkWithScore({ row, score }: Result, slim: boolean): T.ChunkMetadataWithScore {
  const record = chunkRecord(row);
  const fields: T.ChunkMetadataWithScore = {
    id: record.id,
    dataset_id: record.dataset_id,
    link: record.link,
    metadata: record.metadata,
    tag_set: (row.tag_set ?? []).join(','),
    time_stamp: record.time_stamp,
    tracking_id: record.tracking_id,
    weight: record.weight,
    score,
    created_at: record.created_at,
    updated_at: record.updated_at,
  };
  return slim ? fields : { ...fields, chunk_html: record.chunk_html };
}
