// A completion of a system and a user message (generate_message_completions): no chunks, no topic,
// nothing recorded; the dataset's endpoint and model as for RAG.
import type * as T from '../../../sdk/src/generated/types.gen.js';
import type { ChatMessage } from '../../engines/llm/index.js';
import type { Services } from '../../services.js';
import type { DatasetRow } from '../datasets.js';
import { asBadRequest, datasetModel } from './endpoint.js';

export async function messageCompletion(
  services: Services,
  dataset: DatasetRow,
  body: T.GenerateMessageCompletionsReqPayload,
  signal?: AbortSignal,
): Promise<string> {
  const { chat, model } = datasetModel(services, dataset);
  // An empty system message says nothing; endpoints may refuse it.
  const messages: ChatMessage[] = [
    ...(body.system_message ? [{ role: 'system' as const, content: body.system_message }] : []),
    { role: 'user', content: body.user_message },
  ];
  const { content } = await chat.complete({ model, messages }, signal).catch(asBadRequest);
  return content;
}
