// RAG over chunks the caller chose (generate_off_chunks): the chunks' texts and the caller's
// conversation go to the dataset's model; the answer comes back whole or as it is written, and is
// recorded as a RAG query once complete.
import { randomUUID } from 'node:crypto';
import type * as T from '../../../sdk/src/generated/types.gen.js';
import type { ChatRequest } from '../../engines/llm/index.js';
import { notFound } from '../../errors.js';
import type { Services } from '../../services.js';
import { datasetConfig } from '../datasetConfig.js';
import type { DatasetRow } from '../datasets.js';
import { asBadRequest, datasetModel } from './endpoint.js';
import { checkHallucinations } from './hallucinations.js';
import { promptImages, ragMessages, type SourceChunk, sourceText } from './prompt.js';
import { recordRagQuery } from './records.js';
import { startStream } from './stream.js';
import { spokenText } from './transcription.js';

interface ChunkRow extends SourceChunk {
  id: string;
  tracking_id: string | null;
  metadata: unknown;
  image_urls: string[] | null;
}

export interface RagAnswer {
  queryId: string;
  /** The whole answer, or its parts as the model writes them. */
  answer: string | AsyncIterable<string>;
}

export async function generateOffChunks(services: Services, dataset: DatasetRow, body: T.GenerateOffChunksReqPayload, signal: AbortSignal): Promise<RagAnswer> {
  const chunks = await chosenChunks(services, dataset, body.chunk_ids);
  const { chat, model } = datasetModel(services, dataset, body.model);
  const config = datasetConfig(dataset);
  const conversation = [...body.prev_messages];
  // Spoken, the question replaces the text of the last message.
  if (body.audio_input != null)
    conversation[conversation.length - 1] = { role: 'user', content: await spokenText(services, dataset, body.audio_input, signal) };
  const { messages, question } = ragMessages({
    systemPrompt: config.SYSTEM_PROMPT,
    ragPrompt: body.prompt ?? config.RAG_PROMPT,
    documents: chunks.map((chunk) => ({ text: sourceText(chunk), link: chunk.link })),
    conversation,
    includeLinks: body.context_options?.include_links ?? false,
    images: promptImages(body.image_urls, chunks, body.image_config),
  });
  const request: ChatRequest = {
    model,
    messages,
    temperature: body.temperature ?? config.TEMPERATURE,
    frequencyPenalty: body.frequency_penalty ?? config.FREQUENCY_PENALTY,
    presencePenalty: body.presence_penalty ?? config.PRESENCE_PENALTY,
    maxTokens: body.max_tokens ?? config.MAX_TOKENS,
    stop: body.stop_tokens ?? config.STOP_TOKENS,
  };
  const queryId = randomUUID();
  const record = (answer: string) => {
    // What the answer may rest on: the chunks and the conversation.
    const check = checkHallucinations(answer, [...chunks.map(sourceText), ...conversation.map((m) => m.content)]);
    return recordRagQuery(services.store.db, {
      id: queryId,
      datasetId: dataset.id,
      ragType: 'chosen_chunks',
      userId: body.user_id,
      userMessage: question,
      llmResponse: answer,
      results: chunks.map((c) => ({ id: c.id, tracking_id: c.tracking_id, chunk_html: c.chunk_html, link: c.link, metadata: c.metadata })),
      topScore: 0,
      hallucinationScore: check.score,
      detectedHallucinations: check.detected,
      metadata: body.metadata,
    });
  };

  if (body.stream_response === false) {
    const { content } = await chat.complete(request, signal).catch(asBadRequest);
    await record(content);
    return { queryId, answer: content };
  }
  return { queryId, answer: await startStream(chat.stream(request, signal), {}, record) };
}

/** The dataset's chunks of `ids`, in that order; 404 naming those it does not hold. */
async function chosenChunks(services: Services, dataset: DatasetRow, ids: string[]): Promise<ChunkRow[]> {
  const rows: ChunkRow[] = await services.store
    .db('chunks')
    .where({ dataset_id: dataset.id })
    .whereIn('id', ids)
    .select('id', 'tracking_id', 'chunk_html', 'link', 'metadata', 'image_urls');
  const byId = new Map(rows.map((r) => [r.id, r]));
  const missing = [...new Set(ids.filter((id) => !byId.has(id)))];
  if (missing.length > 0)
    throw notFound(`chunks not found in this dataset: ${missing.slice(0, 5).join(', ')}${missing.length > 5 ? ` and ${missing.length - 5} more` : ''}`);
  return ids.map((id) => byId.get(id)!);
}
