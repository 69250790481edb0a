// Handlers of the Message operations; the rules are in domain/topics.ts (reading) and
// domain/rag/conversation.ts (asking and answering).
import type * as H from '../../generated/handlers.js';
import { createMessage, editMessage, regenerateMessage } from '../domain/rag/conversation.js';
import { getMessage, topicMessages } from '../domain/topics.js';
import { answerReply } from './answerReply.js';

export const create_message: H.CreateMessageHandler = async ({ body, caller, dataset, services, signal }) =>
  answerReply(await createMessage(services, dataset, caller, body, signal));

export const edit_message: H.EditMessageHandler = async ({ body, caller, dataset, services, signal }) =>
  answerReply(await editMessage(services, dataset, caller, body, signal));

export const regenerate_message: H.RegenerateMessageHandler = async ({ body, caller, dataset, services, signal }) =>
  answerReply(await regenerateMessage(services, dataset, caller, body, signal));

export const regenerate_message_patch: H.RegenerateMessagePatchHandler = async ({ body, caller, dataset, services, signal }) =>
  answerReply(await regenerateMessage(services, dataset, caller, body, signal));

export const get_message_by_id: H.GetMessageByIdHandler = async ({ path, dataset, services }) => ({
  status: 200,
  body: await getMessage(services.store.db, dataset.id, path.message_id),
});

export const get_all_topic_messages: H.GetAllTopicMessagesHandler = async ({ path, dataset, services }) => ({
  status: 200,
  body: await topicMessages(services.store.db, dataset.id, path.messages_topic_id),
});
