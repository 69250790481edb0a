// Groups in the response shapes: V2 `SearchOverGroupsResults` (the group record and its chunks as
// ScoreChunks), V1 `GroupScoreChunk` (the group's fields prefixed with `group_`, its chunks as
// ScoreChunkDTOs). How each chunk is shown (slim, content only, highlights) is the caller's choice.
import type * as T from '../../../sdk/src/generated/types.gen.js';
import { groupRecord, type GroupRow } from '../../domain/groups.js';
import { searchResponse, type Result } from '../index.js';
import type { SearchPayload } from '../request.js';

export interface FoundGroup {
  row: GroupRow;
  results: Result[];
}

/** How a response shows a group's chunks in each version. */
export interface ChunkShapes {
  v2(results: Result[]): T.ScoreChunk[];
  v1(results: Result[]): T.ScoreChunkDto[];
}

/** Chunks shown as a search with this payload shows them (slim, content only, highlights). */
export function searchShapes(payload: SearchPayload): ChunkShapes {
  const outcome = (results: Result[]) => ({ id: '', results, totalPages: 0, correctedQuery: null, payload });
  return {
    v2: (results) => (searchResponse(outcome(results), 'V2') as T.SearchResponseBody).chunks,
    v1: (results) => (searchResponse(outcome(results), 'V1') as T.SearchChunkQueryResponseBody).score_chunks,
  };
}

export function v2Group(group: FoundGroup, shapes: ChunkShapes): T.SearchOverGroupsResults {
  return { group: groupRecord(group.row), chunks: shapes.v2(group.results), file_id: group.row.file_id };
}

export function v1Group(group: FoundGroup, shapes: ChunkShapes): T.GroupScoreChunk {
  const record = groupRecord(group.row);
  return {
    group_id: record.id,
    group_name: record.name,
    group_description: record.description,
    group_tracking_id: record.tracking_id,
    group_metadata: record.metadata,
    group_tag_set: record.tag_set,
    group_dataset_id: record.dataset_id,
    group_created_at: record.created_at,
    group_updated_at: record.updated_at,
    file_id: group.row.file_id,
    metadata: shapes.v1(group.results),
  };
}
