// Topics: the conversations whose messages the service keeps (see methods/messages.ts).
import type { ChunkSearch } from '../chunk-search.js';
import { unwrap } from '../errors.js';
import * as api from '../generated/sdk.gen.js';
import type * as T from '../generated/types.gen.js';
import { datasetHeaders, sending } from '../scope.js';

/**
 * Start a topic for `owner_id`: `POST /api/topic`.
 *
 * ```ts
 * const topic = await chunkSearch.createTopic({ owner_id: 'visitor-1', first_user_message: 'Where does the glacier end?' });
 * ```
 */
export function createTopic(this: ChunkSearch, data: T.CreateTopicReqPayload, signal?: AbortSignal) {
  return unwrap(api.createTopic({ ...sending(this, signal), headers: datasetHeaders(this), body: data }));
}

/** A copy of a topic with its messages, for another owner: `POST /api/topic/clone`. */
export function cloneTopic(this: ChunkSearch, data: T.CloneTopicReqPayload, signal?: AbortSignal) {
  return unwrap(api.cloneTopic({ ...sending(this, signal), headers: datasetHeaders(this), body: data }));
}

/** Rename a topic: `PUT /api/topic`. */
export function updateTopic(this: ChunkSearch, data: T.UpdateTopicReqPayload, signal?: AbortSignal): Promise<void> {
  return unwrap(api.updateTopic({ ...sending(this, signal), headers: datasetHeaders(this), body: data }));
}

/** The topics of an owner: `GET /api/topic/owner/{owner_id}`. */
export function getAllTopics(this: ChunkSearch, data: { ownerId: string }, signal?: AbortSignal) {
  return unwrap(api.getAllTopicsForOwnerId({ ...sending(this, signal), headers: datasetHeaders(this), path: { owner_id: data.ownerId } }));
}

/** Delete a topic and its messages: `DELETE /api/topic/{topic_id}`. */
export function deleteTopic(this: ChunkSearch, data: { topicId: string }, signal?: AbortSignal): Promise<void> {
  return unwrap(api.deleteTopic({ ...sending(this, signal), headers: datasetHeaders(this), path: { topic_id: data.topicId } }));
}
