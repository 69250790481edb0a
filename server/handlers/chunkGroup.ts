import type { AddChunkToGroupHandler, GetGroupByTrackingIdHandler } from '../../generated/handlers.js';
import { addChunkToGroup, getGroupByTrackingId } from '../domain/groups.js';

export const get_group_by_tracking_id: GetGroupByTrackingIdHandler = async ({ path, dataset, services }) => ({
  status: 200,
  body: await getGroupByTrackingId(services.store.db, dataset.id, path.tracking_id),
});

export const add_chunk_to_group: AddChunkToGroupHandler = async ({ path, body, dataset, services }) => {
  await addChunkToGroup(services.store.db, dataset.id, path.group_id, body);
  return { status: 204, body: undefined };
};
