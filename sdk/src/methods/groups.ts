// Chunk groups: create, read, update and delete them, add and remove their chunks, search over
// them and within one, and recommend groups.
import type { ChunkSearch } from '../chunk-search.js';
import { type HeadersCallback, unwrap } from '../errors.js';
import * as api from '../generated/sdk.gen.js';
import type * as T from '../generated/types.gen.js';
import { datasetHeaders, reading, sending, V2 } from '../scope.js';

/** Create a group, or several in one call: `POST /api/chunk_group`. */
export function createChunkGroup(this: ChunkSearch, data: T.CreateChunkGroupReqPayloadEnum, signal?: AbortSignal) {
  return unwrap(api.createChunkGroup({ ...sending(this, signal), headers: datasetHeaders(this), body: data }));
}

/** Update a group named by `group_id` or `tracking_id`: `PUT /api/chunk_group`. */
export function updateGroup(this: ChunkSearch, data: T.UpdateChunkGroupReqPayload, signal?: AbortSignal): Promise<void> {
  return unwrap(api.updateChunkGroup({ ...sending(this, signal), headers: datasetHeaders(this), body: data }));
}

/** A group by its id: `GET /api/chunk_group/{group_id}`. */
export function getGroup(this: ChunkSearch, data: { groupId: string }, signal?: AbortSignal) {
  return unwrap(api.getChunkGroup({ ...sending(this, signal), headers: datasetHeaders(this), path: { group_id: data.groupId } }));
}

/** Delete a group by its id, with its chunks when `deleteChunks`: `DELETE /api/chunk_group/{group_id}`. */
export function deleteGroup(this: ChunkSearch, data: { groupId: string; deleteChunks?: boolean }, signal?: AbortSignal): Promise<void> {
  return unwrap(
    api.deleteChunkGroup({
      ...sending(this, signal),
      headers: datasetHeaders(this),
      path: { group_id: data.groupId },
      query: { delete_chunks: data.deleteChunks },
    }),
  );
}

/** A group by its tracking id: `GET /api/chunk_group/tracking_id/{tracking_id}`. */
export function getGroupByTrackingId(this: ChunkSearch, data: { trackingId: string }, signal?: AbortSignal) {
  return unwrap(api.getGroupByTrackingId({ ...sending(this, signal), headers: datasetHeaders(this), path: { tracking_id: data.trackingId } }));
}

/** Delete a group by its tracking id, with its chunks when `deleteChunks`: `DELETE /api/chunk_group/tracking_id/{tracking_id}`. */
export function deleteGroupByTrackingId(
  this: ChunkSearch,
  data: { deleteChunks?: boolean } & ({ trackingId: string } | { tracking_id: string }),
  signal?: AbortSignal,
): Promise<void> {
  const trackingId = 'trackingId' in data ? data.trackingId : data.tracking_id;
  return unwrap(
    api.deleteGroupByTrackingId({
      ...sending(this, signal),
      headers: datasetHeaders(this),
      path: { tracking_id: trackingId },
      query: { delete_chunks: data.deleteChunks },
    }),
  );
}

/** Add a chunk (by `chunk_id` or `chunk_tracking_id`) to the group `group_id`: `POST /api/chunk_group/chunk/{group_id}`. */
export function addChunkToGroup(this: ChunkSearch, data: T.AddChunkToGroupReqPayload & { group_id: string }, signal?: AbortSignal): Promise<void> {
  const { group_id, ...body } = data;
  return unwrap(api.addChunkToGroup({ ...sending(this, signal), headers: datasetHeaders(this), path: { group_id }, body }));
}

/** Add a chunk to the group with tracking id `tracking_id`: `POST /api/chunk_group/tracking_id/{tracking_id}`. */
export function addChunkToGroupByTrackingId(
  this: ChunkSearch,
  data: T.AddChunkToGroupReqPayload & { tracking_id: string },
  signal?: AbortSignal,
): Promise<void> {
  const { tracking_id, ...body } = data;
  return unwrap(api.addChunkToGroupByTrackingId({ ...sending(this, signal), headers: datasetHeaders(this), path: { tracking_id }, body }));
}

/** Take a chunk out of the group `group_id`: `DELETE /api/chunk_group/chunk/{group_id}`. */
export function removeChunkFromGroup(this: ChunkSearch, data: T.RemoveChunkFromGroupReqPayload & { group_id: string }, signal?: AbortSignal): Promise<void> {
  const { group_id, ...body } = data;
  return unwrap(api.removeChunkFromGroup({ ...sending(this, signal), headers: datasetHeaders(this), path: { group_id }, body }));
}

/** The chunks of a group, a page at a time: `GET /api/chunk_group/{group_id}/{page}`. */
export function getChunksInGroup(this: ChunkSearch, data: { groupId: string; page: number; xApiVersion?: T.ApiVersion }, signal?: AbortSignal) {
  return unwrap(
    api.getChunksInGroup({
      ...sending(this, signal),
      headers: { ...datasetHeaders(this), 'X-API-Version': data.xApiVersion },
      path: { group_id: data.groupId, page: data.page },
    }),
  );
}

/** The chunks of a group named by its tracking id, a page at a time: `GET /api/chunk_group/tracking_id/{group_tracking_id}/{page}`. */
export function getChunksGroupByTrackingId(
  this: ChunkSearch,
  data: { groupTrackingId: string; page: number; xApiVersion?: T.ApiVersion },
  signal?: AbortSignal,
) {
  return unwrap(
    api.getChunksInGroupByTrackingId({
      ...sending(this, signal),
      headers: { ...datasetHeaders(this), 'X-API-Version': data.xApiVersion ?? 'V2' },
      path: { group_tracking_id: data.groupTrackingId, page: data.page },
    }),
  );
}

/** The groups of each of the chunks named: `POST /api/chunk_group/chunks`. */
export function getGroupsForChunks(this: ChunkSearch, data: T.GetGroupsForChunksReqPayload, signal?: AbortSignal) {
  return unwrap(api.getGroupsForChunks({ ...reading(this, signal), headers: datasetHeaders(this), body: data }));
}

/** The dataset's groups, a page at a time or by cursor: `GET /api/dataset/groups/{dataset_id}/{page}`. */
export function getGroupsForDataset(this: ChunkSearch, data: { page: number; cursor?: string; useCursor?: boolean }, signal?: AbortSignal) {
  const headers = datasetHeaders(this);
  return unwrap(
    api.getGroupsForDataset({
      ...sending(this, signal),
      headers,
      path: { dataset_id: headers['SVC-Dataset'], page: data.page },
      query: { cursor: data.cursor, use_cursor: data.useCursor },
    }),
  );
}

/** Search for groups, each with its best chunks: `POST /api/chunk_group/group_oriented_search`. */
export function searchOverGroups(this: ChunkSearch, data: T.SearchOverGroupsReqPayload, signal?: AbortSignal, parseHeaders?: HeadersCallback) {
  return unwrap(
    api.searchOverGroups({ ...reading(this, signal), headers: { ...datasetHeaders(this), ...V2 }, body: data }),
    parseHeaders,
  ) as Promise<T.SearchOverGroupsResponseBody>;
}

/** Search the chunks of one group: `POST /api/chunk_group/search`. */
export function searchInGroup(this: ChunkSearch, data: T.SearchWithinGroupReqPayload, signal?: AbortSignal, parseHeaders?: HeadersCallback) {
  return unwrap(
    api.searchWithinGroup({ ...reading(this, signal), headers: { ...datasetHeaders(this), ...V2 }, body: data }),
    parseHeaders,
  ) as Promise<T.SearchWithinGroupResponseBody>;
}

/** Groups like the positive examples and unlike the negative ones: `POST /api/chunk_group/recommend`. */
export function recommendedGroups(this: ChunkSearch, data: T.RecommendGroupsReqPayload, signal?: AbortSignal) {
  return unwrap(
    api.getRecommendedGroups({ ...reading(this, signal), headers: { ...datasetHeaders(this), ...V2 }, body: data }),
  ) as Promise<T.RecommendGroupsResponseBody>;
}
