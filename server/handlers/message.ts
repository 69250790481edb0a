// Handlers of the Message operations; the rules are in domain/topics.ts.
import type { GetAllTopicMessagesHandler, GetMessageByIdHandler } from '../../generated/handlers.js';
import { getMessage, topicMessages } from '../domain/topics.js';

export const get_message_by_id: GetMessageByIdHandler = async ({ path, dataset, services }) => ({
  status: 200,
  body: await getMessage(services.store.db, dataset.id, path.message_id),
});

export const get_all_topic_messages: GetAllTopicMessagesHandler = async ({ path, dataset, services }) => ({
  status: 200,
  body: await topicMessages(services.store.db, dataset.id, path.messages_topic_id),
});
