// Handlers of the Topic operations; the rules are in domain/topics.ts.
import type { CloneTopicHandler, CreateTopicHandler, DeleteTopicHandler, GetAllTopicsForOwnerIdHandler, UpdateTopicHandler } from '../../generated/handlers.js';
import { cloneTopic, createTopic, deleteTopic, ownerTopics, renameTopic } from '../domain/topics.js';

export const create_topic: CreateTopicHandler = async ({ body, dataset, services }) => ({
  status: 200,
  body: await createTopic(services.store.db, dataset.id, body),
});

export const update_topic: UpdateTopicHandler = async ({ body, dataset, services }) => {
  await renameTopic(services.store.db, dataset.id, body);
  return { status: 204, body: undefined };
};

export const clone_topic: CloneTopicHandler = async ({ body, dataset, services }) => ({
  status: 200,
  body: await cloneTopic(services.store.db, dataset.id, body),
});

export const get_all_topics_for_owner_id: GetAllTopicsForOwnerIdHandler = async ({ path, dataset, services }) => ({
  status: 200,
  body: await ownerTopics(services.store.db, dataset.id, path.owner_id),
});

export const delete_topic: DeleteTopicHandler = async ({ path, dataset, services }) => {
  await deleteTopic(services.store.db, dataset.id, path.topic_id);
  return { status: 204, body: undefined };
};
