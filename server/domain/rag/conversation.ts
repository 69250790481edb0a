// Answers in a topic: create_message asks, edit_message asks again in place of a question, and
// regenerate_message answers the last question again. Each searches the dataset for the question
// (./sources.ts), gives the model the chunks found and the conversation, and sends the answer framed
// with the chunks. The question, the answer and the RAG query are stored in one transaction once the
// answer is complete (with the plan's message quotas checked in it), so a failed or abandoned answer
// leaves the topic as it was.
import { randomUUID } from 'node:crypto';
import type * as T from '../../../sdk/src/generated/types.gen.js';
import type { Caller } from '../../auth/caller.js';
import type { ChatMessage, ChatModel, ChatRequest } from '../../engines/llm/index.js';
import { badRequest, notFound } from '../../errors.js';
import type { Services } from '../../services.js';
import { datasetConfig } from '../datasetConfig.js';
import type { DatasetRow } from '../datasets.js';
import { reservePlanCapacity } from '../quotas.js';
import { conversation, findTopic, type MessageRow, storeTurn, type TopicRow } from '../topics.js';
import { asBadRequest, datasetModel } from './endpoint.js';
import type { RagAnswer } from './generate.js';
import { checkHallucinations } from './hallucinations.js';
import { promptImages, ragMessages } from './prompt.js';
import { recordRagQuery } from './records.js';
import { completionOf, findSources, sourceDocuments, sourcesJson } from './sources.js';
import { startStream } from './stream.js';
import { spokenText } from './transcription.js';

/** What every answering request may say (create and edit add the question). */
type AnswerOptions = T.RegenerateMessageReqPayload;

const NO_RESULT_MESSAGE = 'I was not able to find any relevant information to answer your query.';
/** Earlier messages the model reads when the request does not say. */
const HISTORY = 10;

interface Turn {
  topic: TopicRow;
  /** The topic's messages before the question. */
  earlier: MessageRow[];
  question: string;
  /** URLs of images the question comes with. */
  images: string[];
  /** The topic's messages from this sort order on are replaced; null to add the turn at the end. */
  replaceFrom: number | null;
  /** The question is stored already: only the answer is written. */
  questionStored: boolean;
}

export async function createMessage(
  services: Services,
  dataset: DatasetRow,
  caller: Caller,
  body: T.CreateMessageReqPayload,
  signal: AbortSignal,
): Promise<RagAnswer> {
  refuseUnsupported(body);
  const topic = await findTopic(services.store.db, dataset.id, body.topic_id);
  const question = await questionOf(services, dataset, body, signal);
  const earlier = await conversation(services.store.db, topic.id);
  const images = body.image_urls ?? [];
  return answer(services, dataset, caller, body, { topic, earlier, question, images, replaceFrom: null, questionStored: false }, signal);
}

export async function editMessage(
  services: Services,
  dataset: DatasetRow,
  caller: Caller,
  body: T.EditMessageReqPayload,
  signal: AbortSignal,
): Promise<RagAnswer> {
  refuseUnsupported(body);
  const topic = await findTopic(services.store.db, dataset.id, body.topic_id);
  const messages = await conversation(services.store.db, topic.id);
  const at = body.message_sort_order;
  const edited = messages.find((m) => m.sort_order === at);
  if (!edited) throw notFound(`topic ${topic.id} has no message at sort order ${at}`);
  if (edited.role !== 'user') throw badRequest(`the message at sort order ${at} is a ${edited.role} message; only a user message can be edited`);
  const question = await questionOf(services, dataset, body, signal);
  const earlier = messages.filter((m) => m.sort_order < at);
  const images = body.image_urls ?? [];
  return answer(services, dataset, caller, body, { topic, earlier, question, images, replaceFrom: at, questionStored: false }, signal);
}

export async function regenerateMessage(services: Services, dataset: DatasetRow, caller: Caller, body: AnswerOptions, signal: AbortSignal): Promise<RagAnswer> {
  refuseUnsupported(body);
  const topic = await findTopic(services.store.db, dataset.id, body.topic_id);
  const messages = await conversation(services.store.db, topic.id);
  const lastAnswer = messages.findLastIndex((m) => m.role === 'assistant');
  const asked = messages.slice(0, Math.max(lastAnswer, 0)).findLast((m) => m.role === 'user');
  if (!asked) throw badRequest(`topic ${topic.id} has no answered question to answer again`);
  const earlier = messages.filter((m) => m.sort_order < asked.sort_order);
  return answer(
    services,
    dataset,
    caller,
    body,
    { topic, earlier, question: asked.content, images: [], replaceFrom: messages[lastAnswer].sort_order, questionStored: true },
    signal,
  );
}

/** The question: `audio_input` transcribed, else `new_message_content`. */
async function questionOf(
  services: Services,
  dataset: DatasetRow,
  body: T.CreateMessageReqPayload | T.EditMessageReqPayload,
  signal: AbortSignal,
): Promise<string> {
  if (body.audio_input != null) return spokenText(services, dataset, body.audio_input, signal);
  const question = body.new_message_content?.trim();
  if (!question) throw badRequest('give the question: new_message_content, with more than white space, or audio_input');
  return question;
}

/** Options of the reference this service does not offer yet, refused before anything is done. */
function refuseUnsupported(body: AnswerOptions): void {
  if (body.use_agentic_search) throw badRequest('use_agentic_search is not supported yet: leave it out or false');
  if (body.only_include_docs_used) throw badRequest('only_include_docs_used is not supported yet: leave it out or false');
}

async function answer(services: Services, dataset: DatasetRow, caller: Caller, body: AnswerOptions, turn: Turn, signal: AbortSignal): Promise<RagAnswer> {
  const db = services.store.db;
  const config = datasetConfig(dataset);
  const { chat, model } = datasetModel(services, dataset, body.model);
  const adding = (turn.earlier.length === 0 ? 1 : 0) + (turn.questionStored ? 1 : 2);
  // Refused before the model is paid for; checked again where the messages are written.
  await db.transaction((trx) => reservePlanCapacity(trx, dataset.organization_id, { messages: adding }));

  const stored = turn.earlier.find((m) => m.role === 'system')?.content;
  const systemPrompt = body.llm_options?.system_prompt ?? stored ?? config.SYSTEM_PROMPT;
  const keep = body.number_of_messages_to_include ?? HISTORY;
  const history = (keep === 0 ? [] : turn.earlier.filter((m) => m.role !== 'system').slice(-keep)).map(
    (m): ChatMessage => ({ role: m.role, content: m.role === 'assistant' ? completionOf(m.content) : m.content }),
  );

  const query = await searchQuery(chat, model, dataset, body, turn, signal);
  const sources = await findSources(services, dataset, caller, body, query);
  const documents = body.rag_context ? [{ text: body.rag_context, link: null }] : sourceDocuments(sources.results, body.currency);
  const queryId = randomUUID();
  const finish = (completion: string, framed: string, tokens: { prompt: number | null; completion: number | null }) =>
    db.transaction(async (trx) => {
      const added = await storeTurn(trx, {
        topicId: turn.topic.id,
        datasetId: dataset.id,
        replaceFrom: turn.replaceFrom,
        systemPrompt,
        question: turn.questionStored ? null : turn.question,
        answer: framed,
        promptTokens: tokens.prompt,
        completionTokens: tokens.completion,
      });
      const check = checkHallucinations(completion, [...documents.map((d) => d.text), ...history.map((m) => m.content), turn.question]);
      await recordRagQuery(trx, {
        id: queryId,
        datasetId: dataset.id,
        ragType: 'all_chunks',
        searchId: sources.searchId,
        topicId: turn.topic.id,
        userId: body.user_id,
        userMessage: turn.question,
        llmResponse: completion,
        results: sources.results.map(({ row }) => ({
          id: row.id,
          tracking_id: row.tracking_id,
          chunk_html: row.chunk_html,
          link: row.link,
          metadata: row.metadata,
        })),
        topScore: sources.results[0]?.score ?? 0,
        hallucinationScore: check.score,
        detectedHallucinations: check.detected,
        metadata: body.metadata,
      });
      await reservePlanCapacity(trx, dataset.organization_id, { messages: added }, { written: true });
    });

  if (sources.results.length === 0) {
    // Nothing to answer from: the model is not asked.
    const completion = body.no_result_message ?? NO_RESULT_MESSAGE;
    const framed = `[]||${completion}`;
    await finish(completion, framed, { prompt: null, completion: null });
    return { queryId, answer: framed };
  }

  const { messages } = ragMessages({
    systemPrompt,
    ragPrompt: config.RAG_PROMPT,
    documents,
    conversation: [...history, { role: 'user', content: turn.question }],
    includeLinks: body.context_options?.include_links ?? false,
    images: promptImages(
      turn.images,
      sources.results.map((r) => r.row),
      body.llm_options?.image_config,
    ),
  });
  const options = body.llm_options;
  const request: ChatRequest = {
    model,
    messages,
    temperature: options?.temperature ?? config.TEMPERATURE,
    frequencyPenalty: options?.frequency_penalty ?? config.FREQUENCY_PENALTY,
    presencePenalty: options?.presence_penalty ?? config.PRESENCE_PENALTY,
    maxTokens: options?.max_tokens ?? config.MAX_TOKENS,
    stop: options?.stop_tokens ?? config.STOP_TOKENS,
  };
  const chunks = sourcesJson(sources.results);
  const completionFirst = options?.completion_first ?? false;
  const frame = (completion: string) => (completionFirst ? `${completion}||${chunks}` : `${chunks}||${completion}`);

  if (options?.stream_response === false) {
    const whole = await chat.complete(request, signal).catch(asBadRequest);
    const framed = frame(whole.content);
    await finish(whole.content, framed, { prompt: whole.promptTokens, completion: whole.completionTokens });
    return { queryId, answer: framed };
  }
  const framing = completionFirst ? { tail: `||${chunks}` } : { head: `${chunks}||` };
  const streamed = await startStream(chat.stream(request, signal), framing, (completion) =>
    finish(completion, frame(completion), { prompt: null, completion: null }),
  );
  return { queryId, answer: streamed };
}

/**
 * What is searched: `search_query`; else the question (after every earlier user message when
 * `concat_user_messages_query`), rewritten by the model into a search query when the dataset's
 * USE_MESSAGE_TO_QUERY_PROMPT says so.
 */
async function searchQuery(chat: ChatModel, model: string, dataset: DatasetRow, body: AnswerOptions, turn: Turn, signal: AbortSignal): Promise<string> {
  if (body.search_query?.trim()) return body.search_query;
  const asked = body.concat_user_messages_query
    ? [...turn.earlier.filter((m) => m.role === 'user').map((m) => m.content), turn.question].join('\n\n')
    : turn.question;
  const config = datasetConfig(dataset);
  if (!config.USE_MESSAGE_TO_QUERY_PROMPT) return asked;
  const rewritten = await chat
    .complete({ model, messages: [{ role: 'user', content: `${config.MESSAGE_TO_QUERY_PROMPT}\n${asked}` }] }, signal)
    .catch(asBadRequest);
  return rewritten.content.trim() || asked;
}
