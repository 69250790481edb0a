// Handlers of the Chunk Group operations; the rules are in domain/groups.ts, the searches and
// recommendations in search/groups/ and search/recommend.ts.
import type {
  AddChunkToGroupByTrackingIdHandler,
  AddChunkToGroupHandler,
  AutocompleteSearchOverGroupsHandler,
  CountGroupChunksHandler,
  CreateChunkGroupHandler,
  DeleteChunkGroupHandler,
  DeleteGroupByTrackingIdHandler,
  GetChunkGroupHandler,
  GetChunksInGroupByTrackingIdHandler,
  GetChunksInGroupHandler,
  GetGroupByTrackingIdHandler,
  GetGroupsForChunksHandler,
  GetGroupsForDatasetHandler,
  GetRecommendedGroupsHandler,
  RemoveChunkFromGroupHandler,
  SearchOverGroupsHandler,
  SearchWithinGroupHandler,
  UpdateChunkGroupHandler,
} from '../../generated/handlers.js';
import type { ApiVersion } from '../domain/chunks/records.js';
import { assertSameDataset } from '../domain/datasets.js';
import {
  addChunkToGroup,
  addChunkToGroupByTrackingId,
  chunksInGroup,
  countGroupChunks,
  createGroups,
  deleteGroup,
  getGroup,
  getGroupByTrackingId,
  groupsForChunks,
  listDatasetGroups,
  removeChunkFromGroup,
  updateGroup,
} from '../domain/groups.js';
import { groupSearchResponse, searchOverGroups, searchWithinGroup, withinGroupResponse } from '../search/groups/index.js';
import { recommendGroups, recommendGroupsResponse } from '../search/recommend.js';

/** The record shape `X-API-Version` asks for (the validator has checked its value); V1 by default. */
function apiVersionOf(headers: { 'X-API-Version'?: ApiVersion } | undefined): ApiVersion {
  return headers?.['X-API-Version'] ?? 'V1';
}

export const create_chunk_group: CreateChunkGroupHandler = async ({ body, dataset, services }) => {
  const batch = Array.isArray(body);
  const groups = await createGroups(services.store.db, dataset.id, batch ? body : [body], batch);
  return { status: 200, body: batch ? groups : groups[0] };
};

export const update_chunk_group: UpdateChunkGroupHandler = async ({ body, dataset, services }) => {
  await updateGroup(services.store.db, dataset.id, body);
  return { status: 204, body: undefined };
};

export const get_chunk_group: GetChunkGroupHandler = async ({ path, dataset, services }) => ({
  status: 200,
  body: await getGroup(services.store.db, dataset.id, path.group_id),
});

export const get_group_by_tracking_id: GetGroupByTrackingIdHandler = async ({ path, dataset, services }) => ({
  status: 200,
  body: await getGroupByTrackingId(services.store.db, dataset.id, path.tracking_id),
});

export const delete_chunk_group: DeleteChunkGroupHandler = async ({ path, query, dataset, services }) => {
  await deleteGroup(services, dataset.id, { id: path.group_id }, query?.delete_chunks === true);
  return { status: 204, body: undefined };
};

export const delete_group_by_tracking_id: DeleteGroupByTrackingIdHandler = async ({ path, query, dataset, services }) => {
  await deleteGroup(services, dataset.id, { trackingId: path.tracking_id }, query?.delete_chunks === true);
  return { status: 204, body: undefined };
};

export const add_chunk_to_group: AddChunkToGroupHandler = async ({ path, body, dataset, services }) => {
  await addChunkToGroup(services.store.db, dataset.id, path.group_id, body);
  return { status: 204, body: undefined };
};

export const add_chunk_to_group_by_tracking_id: AddChunkToGroupByTrackingIdHandler = async ({ path, body, dataset, services }) => {
  await addChunkToGroupByTrackingId(services.store.db, dataset.id, path.tracking_id, body);
  return { status: 204, body: undefined };
};

export const remove_chunk_from_group: RemoveChunkFromGroupHandler = async ({ path, query, body, dataset, services }) => {
  // An absent body reaches the handler as undefined or as an empty object, depending on the client.
  const fromBody = body && typeof body === 'object' ? (body as { chunk_id?: string }).chunk_id : undefined;
  await removeChunkFromGroup(services.store.db, dataset.id, path.group_id, query?.chunk_id, fromBody);
  return { status: 204, body: undefined };
};

export const get_chunks_in_group: GetChunksInGroupHandler = async ({ path, headers, dataset, services }) => ({
  status: 200,
  body: await chunksInGroup(services.store.db, dataset.id, { id: path.group_id }, Number(path.page), apiVersionOf(headers)),
});

export const get_chunks_in_group_by_tracking_id: GetChunksInGroupByTrackingIdHandler = async ({ path, headers, dataset, services }) => ({
  status: 200,
  body: await chunksInGroup(services.store.db, dataset.id, { trackingId: path.group_tracking_id }, Number(path.page), apiVersionOf(headers)),
});

export const get_groups_for_chunks: GetGroupsForChunksHandler = async ({ body, dataset, services }) => ({
  status: 200,
  body: await groupsForChunks(services.store.db, dataset.id, body),
});

export const count_group_chunks: CountGroupChunksHandler = async ({ body, dataset, services }) => ({
  status: 200,
  body: await countGroupChunks(services.store.db, dataset.id, body),
});

export const get_groups_for_dataset: GetGroupsForDatasetHandler = async ({ path, query, dataset, services }) => {
  assertSameDataset(dataset, path.dataset_id);
  return {
    status: 200,
    body: await listDatasetGroups(services.store.db, dataset.id, {
      page: Number(path.page),
      useCursor: query?.use_cursor === true,
      cursor: query?.cursor ?? null,
    }),
  };
};

export const search_within_group: SearchWithinGroupHandler = async ({ body, headers, caller, dataset, services }) => ({
  status: 200,
  body: withinGroupResponse(await searchWithinGroup(services, dataset, caller, body), apiVersionOf(headers)),
});

export const search_over_groups: SearchOverGroupsHandler = async ({ body, headers, caller, dataset, services }) => {
  const outcome = await searchOverGroups(services, dataset, caller, body, {
    prefix: false,
    page: body.page ?? 1,
    getTotalPages: body.get_total_pages ?? false,
  });
  return { status: 200, body: groupSearchResponse(outcome, apiVersionOf(headers)) };
};

export const autocomplete_search_over_groups: AutocompleteSearchOverGroupsHandler = async ({ body, headers, caller, dataset, services }) => {
  const outcome = await searchOverGroups(services, dataset, caller, body, {
    prefix: true,
    page: 1,
    getTotalPages: false,
    extendResults: body.extend_results ?? false,
  });
  return { status: 200, body: groupSearchResponse(outcome, apiVersionOf(headers)) };
};

export const get_recommended_groups: GetRecommendedGroupsHandler = async ({ body, headers, dataset, services }) => ({
  status: 200,
  body: recommendGroupsResponse(await recommendGroups(services, dataset, body), apiVersionOf(headers)),
});
