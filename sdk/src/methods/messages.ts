// Messages of a topic, answered from the dataset by an LLM (RAG), whole or as they are written,
// and the LLM tools: tool-call parameters, image edits, transcription, completions.
import type { ChunkSearch } from '../chunk-search.js';
import { type HeadersCallback, unwrap, unwrapResponse } from '../errors.js';
import * as api from '../generated/sdk.gen.js';
import type * as T from '../generated/types.gen.js';
import { datasetHeaders, sending } from '../scope.js';
import { readerOf, readerWithQueryId, TextStream } from '../streaming.js';

/**
 * Ask in a topic and get the whole answer: `POST /api/message`. The answer is the chunks found (a
 * JSON array) and the LLM's completion, separated by `||`. See {@link createMessageStream} to read
 * it as it is written.
 */
export function createMessage(this: ChunkSearch, data: T.CreateMessageReqPayload, signal?: AbortSignal, parseHeaders?: HeadersCallback): Promise<string> {
  return unwrap(api.createMessage({ ...sending(this, signal), headers: datasetHeaders(this), body: data }), parseHeaders);
}

function createReply(sdk: ChunkSearch, data: T.CreateMessageReqPayload, signal?: AbortSignal, parseHeaders?: HeadersCallback) {
  return unwrapResponse(api.createMessage({ ...sending(sdk, signal), headers: datasetHeaders(sdk), body: data, parseAs: 'stream' }), parseHeaders);
}

/**
 * Ask in a topic and read the answer as it is written: `POST /api/message`.
 *
 * ```ts
 * const answer = await chunkSearch.createMessageStream({ topic_id: topic.id, new_message_content: 'How long is it?' });
 * for await (const text of answer) process.stdout.write(text);
 * ```
 */
export async function createMessageStream(this: ChunkSearch, data: T.CreateMessageReqPayload, signal?: AbortSignal): Promise<TextStream> {
  return new TextStream(await createReply(this, data, signal));
}

/** {@link createMessageStream}'s answer as the reader of its bytes. */
export async function createMessageReader(this: ChunkSearch, data: T.CreateMessageReqPayload, signal?: AbortSignal, parseHeaders?: HeadersCallback) {
  return readerOf(await createReply(this, data, signal, parseHeaders));
}

/** {@link createMessageStream}'s answer as the reader of its bytes, with the id of the RAG query recorded with it. */
export async function createMessageReaderWithQueryId(this: ChunkSearch, data: T.CreateMessageReqPayload, signal?: AbortSignal, parseHeaders?: HeadersCallback) {
  return readerWithQueryId(await createReply(this, data, signal, parseHeaders));
}

/** Replace a user message of a topic (and what followed it) and get the new answer whole: `PUT /api/message`. */
export function editMessage(this: ChunkSearch, data: T.EditMessageReqPayload, signal?: AbortSignal): Promise<string> {
  return unwrap(api.editMessage({ ...sending(this, signal), headers: datasetHeaders(this), body: data }));
}

function editReply(sdk: ChunkSearch, data: T.EditMessageReqPayload, signal?: AbortSignal) {
  return unwrapResponse(api.editMessage({ ...sending(sdk, signal), headers: datasetHeaders(sdk), body: data, parseAs: 'stream' }));
}

/** {@link editMessage}, its answer read as it is written. */
export async function editMessageStream(this: ChunkSearch, data: T.EditMessageReqPayload, signal?: AbortSignal): Promise<TextStream> {
  return new TextStream(await editReply(this, data, signal));
}

/** {@link editMessage}, its answer as the reader of its bytes. */
export async function editMessageReader(this: ChunkSearch, data: T.EditMessageReqPayload, signal?: AbortSignal) {
  return readerOf(await editReply(this, data, signal));
}

/** {@link editMessage}, its answer as the reader of its bytes, with the id of the RAG query recorded with it. */
export async function editMessageReaderWithQueryId(this: ChunkSearch, data: T.EditMessageReqPayload, signal?: AbortSignal) {
  return readerWithQueryId(await editReply(this, data, signal));
}

/** Answer the last user message of a topic again and get the new answer whole: `DELETE /api/message`. */
export function regenerateMessage(this: ChunkSearch, data: T.RegenerateMessageReqPayload, signal?: AbortSignal): Promise<string> {
  return unwrap(api.regenerateMessage({ ...sending(this, signal), headers: datasetHeaders(this), body: data }));
}

function regenerateReply(sdk: ChunkSearch, data: T.RegenerateMessageReqPayload, signal?: AbortSignal) {
  return unwrapResponse(api.regenerateMessage({ ...sending(sdk, signal), headers: datasetHeaders(sdk), body: data, parseAs: 'stream' }));
}

/** {@link regenerateMessage}, its answer read as it is written. */
export async function regenerateMessageStream(this: ChunkSearch, data: T.RegenerateMessageReqPayload, signal?: AbortSignal): Promise<TextStream> {
  return new TextStream(await regenerateReply(this, data, signal));
}

/** {@link regenerateMessage}, its answer as the reader of its bytes. */
export async function regenerateMessageReader(this: ChunkSearch, data: T.RegenerateMessageReqPayload, signal?: AbortSignal) {
  return readerOf(await regenerateReply(this, data, signal));
}

/** {@link regenerateMessage}, its answer as the reader of its bytes, with the id of the RAG query recorded with it. */
export async function regenerateMessageReaderWithQueryId(this: ChunkSearch, data: T.RegenerateMessageReqPayload, signal?: AbortSignal) {
  return readerWithQueryId(await regenerateReply(this, data, signal));
}

/** The messages of a topic, in order: `GET /api/messages/{messages_topic_id}`. */
export function getAllMessagesForTopic(this: ChunkSearch, data: { messagesTopicId: string }, signal?: AbortSignal) {
  return unwrap(api.getAllTopicMessages({ ...sending(this, signal), headers: datasetHeaders(this), path: { messages_topic_id: data.messagesTopicId } }));
}

/** A message by its id: `GET /api/message/{message_id}`. */
export function getMessageById(this: ChunkSearch, data: { messageId: string }, signal?: AbortSignal) {
  return unwrap(api.getMessageById({ ...sending(this, signal), headers: datasetHeaders(this), path: { message_id: data.messageId } }));
}

/** The parameters an LLM would call a function with, for a message: `POST /api/message/get_tool_function_params`. */
export function getToolCallFunctionParams(this: ChunkSearch, data: T.GetToolFunctionParamsReqPayload, signal?: AbortSignal, parseHeaders?: HeadersCallback) {
  return unwrap(api.getToolFunctionParams({ ...sending(this, signal), headers: datasetHeaders(this), body: data }), parseHeaders);
}

/** Images edited by the image model as a prompt asks: `POST /api/message/edit_image`. */
export function editImage(this: ChunkSearch, data: T.EditImageReqPayload, signal?: AbortSignal) {
  return unwrap(api.editImage({ ...sending(this, signal), headers: datasetHeaders(this), body: data }));
}

/** The text of a recording: `POST /api/message/transcribe_audio`. */
export function transcribeAudio(this: ChunkSearch, data: T.TranscribeAudioReqPayload, signal?: AbortSignal): Promise<string> {
  return unwrap(api.transcribeAudio({ ...sending(this, signal), headers: datasetHeaders(this), body: data }));
}

/** The LLM's completion of a conversation, without retrieval: `POST /api/message/generate_message_completions`. */
export function generateMessageCompletions(this: ChunkSearch, data: T.GenerateMessageCompletionsReqPayload, signal?: AbortSignal): Promise<string> {
  return unwrap(api.generateMessageCompletions({ ...sending(this, signal), headers: datasetHeaders(this), body: data }));
}
