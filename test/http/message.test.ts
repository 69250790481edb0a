// Asking in a topic (create_message), asking again in place of a question (edit_message) and
// answering the last question again (regenerate_message, DELETE and PATCH), against a stand-in
// OpenAI-compatible model: the search the question runs, the prompt the model gets, the answer framed
// with the chunks found, the messages and the RAG query stored together once the answer is complete,
// the plan's message quotas, and every failure leaving the topic as it was.
import http from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  addChunkToGroup,
  createChunk,
  createChunkGroup,
  createDataset,
  createMessage,
  createOrganization,
  createTopic,
  deleteChunk,
  editMessage,
  getAllTopicMessages,
  getRagAnalytics,
  regenerateMessage,
  regenerateMessagePatch,
} from '../../sdk/src/generated/sdk.gen.js';
import type { RagQueryResponse } from '../../sdk/src/generated/types.gen.js';
import type { DatasetRow } from '../../server/domain/datasets.js';
import { checkResponse } from '../support/contract.js';
import { type LlmStandIn, startLlmStandIn } from '../support/llmStandIn.js';
import { ADMIN_KEY, startTestService, type TestService } from '../support/service.js';

let standIn: LlmStandIn;
let service: TestService;
let orgId: string;
let dataset: DatasetRow;
const chunkIds: string[] = [];
const ds = (id = dataset.id) => ({ 'SVC-Dataset': id });
const UNKNOWN = '00000000-0000-4000-8000-00000000abcd';
const NIL = '00000000-0000-0000-0000-000000000000';
const QUESTION = 'Where does the Aletsch glacier end?';

const newTopic = async (datasetId = dataset.id) =>
  (await createTopic({ client: service.client(), headers: ds(datasetId), body: { owner_id: 'owner-1' }, throwOnError: true })).data.id;
const messagesOf = async (topicId: string) =>
  (await getAllTopicMessages({ client: service.client(), headers: ds(), path: { messages_topic_id: topicId }, throwOnError: true })).data;
const ragQueries = async () =>
  ((await getRagAnalytics({ client: service.client(), headers: ds(), body: { type: 'rag_queries' }, throwOnError: true })).data as RagQueryResponse).queries;
const ask = (topic_id: string, body: Record<string, unknown> = {}) =>
  createMessage({ client: service.client(), headers: ds(), body: { topic_id, new_message_content: QUESTION, ...body } });
/** The chunks and the completion of an answer framed chunks first. */
const split = (answer: string) => {
  const at = answer.indexOf('||');
  return { chunks: JSON.parse(answer.slice(0, at)) as { id: string; score: number; highlights: unknown }[], completion: answer.slice(at + 2) };
};

/** A raw request that reads the streamed answer as it comes; `leaveAfterFirst` leaves after the first part. */
function streamed(method: string, body: unknown, leaveAfterFirst = false) {
  return new Promise<{ status: number; headers: http.IncomingHttpHeaders; text: string; complete: boolean }>((resolve, reject) => {
    const request = http.request(`${service.url}/api/message`, {
      method,
      headers: { authorization: ADMIN_KEY, 'content-type': 'application/json', ...ds() },
    });
    request.on('response', (response) => {
      const parts: string[] = [];
      const done = (complete: boolean) => resolve({ status: response.statusCode!, headers: response.headers, text: parts.join(''), complete });
      response.on('data', (part: Buffer) => {
        parts.push(part.toString());
        if (leaveAfterFirst) {
          request.destroy();
          done(false);
        }
      });
      response.on('end', () => {
        checkResponse(method, '/api/message', response.statusCode!, parts.join(''), response.headers['content-type'] ?? null);
        done(true);
      });
      response.on('error', () => done(false));
      response.on('aborted', () => done(false));
    });
    request.on('error', (error) => (leaveAfterFirst ? undefined : reject(error)));
    request.end(JSON.stringify(body));
  });
}

beforeAll(async () => {
  standIn = await startLlmStandIn();
  service = await startTestService({ LLM_BASE_URL: standIn.url, LLM_API_KEY: 'instance-llm-key', LLM_DEFAULT_MODEL: 'stand-in-model' });
  orgId = (await createOrganization({ client: service.client(), body: { name: 'Messages' }, throwOnError: true })).data.id;
  dataset = await service.newDataset(orgId, 'glaciers', { SYSTEM_PROMPT: 'You answer from the documents.', RAG_PROMPT: 'Answer from the documents:' });
  for (const [html, num_value] of [
    ['<p>The Aletsch glacier is 20 km long and ends above the Massa gorge.</p>', null],
    ['<p>A guided walk on the Aletsch glacier costs 95 per person.</p>', 95],
    ['<p>Tomatoes ripen in late summer.</p>', null],
  ] as const) {
    const { data } = await createChunk({ client: service.client(), headers: ds(), body: { chunk_html: html, num_value }, throwOnError: true });
    chunkIds.push((data as { chunk_metadata: { id: string } }).chunk_metadata.id);
  }
}, 60_000);

afterAll(async () => {
  await service?.stop();
  await standIn?.close();
});

beforeEach(() => {
  standIn.received.length = 0;
  standIn.next.length = 0;
  standIn.otherwise = { kind: 'answer', text: 'It ends above the Massa gorge.' };
});

describe('asking in a topic', () => {
  it('streams the chunks found, then the completion, and stores the turn with its RAG query', async () => {
    const topic = await newTopic();
    const reply = await streamed('POST', { topic_id: topic, new_message_content: QUESTION, search_type: 'bm25', page_size: 2, user_id: 'u-1' });
    expect(reply.status).toBe(200);
    expect(reply.complete).toBe(true);
    expect(reply.headers['content-type']).toMatch(/^text\/plain/);
    const { chunks, completion } = split(reply.text);
    expect(completion).toBe('It ends above the Massa gorge.');
    expect(chunks.map((c) => c.id)).toEqual([chunkIds[0], chunkIds[1]]);
    expect(chunks[0].score).toBeGreaterThan(0);

    const stored = await messagesOf(topic);
    expect(stored.map((m) => [m.sort_order, m.role])).toEqual([
      [0, 'system'],
      [1, 'user'],
      [2, 'assistant'],
    ]);
    expect(stored[0].content).toBe('You answer from the documents.');
    expect(stored[1].content).toBe(QUESTION);
    expect(stored[2].content).toBe(reply.text);

    const recorded = (await ragQueries()).find((q) => q.id === reply.headers['svc-queryid']);
    expect(recorded).toMatchObject({ rag_type: 'all_chunks', topic_id: topic, user_id: 'u-1', user_message: QUESTION, llm_response: completion });
    expect(recorded!.search_id).not.toBe(NIL);
    await service.services.deferred.flush();
    const search = await service.services.store.db('search_queries').where({ id: recorded!.search_id }).first();
    expect(search).toMatchObject({ search_type: 'rag_chunks', query: QUESTION });
  });

  it('gives the model the system prompt, the chunks as documents, the earlier turns without their chunks, and the question', async () => {
    const topic = await newTopic();
    standIn.otherwise = { kind: 'answer', text: 'Above the Massa gorge.' };
    await ask(topic, { search_type: 'bm25', page_size: 1, stream_response: false });
    standIn.received.length = 0;
    standIn.otherwise = { kind: 'answer', text: 'It costs 95.' };
    const { data } = await ask(topic, {
      new_message_content: 'How much is a guided walk?',
      search_type: 'bm25',
      page_size: 1,
      currency: 'CHF',
      llm_options: { stream_response: false, temperature: 0.2, system_prompt: 'Be brief.' },
    });
    expect(split(data as string).completion).toBe('It costs 95.');
    const sent = standIn.received[0].body;
    expect(sent).toMatchObject({ model: 'stand-in-model', temperature: 0.2 });
    expect(sent.messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Document 1:\nA guided walk on the Aletsch glacier costs 95 per person.\nValue: CHF 95' },
      { role: 'user', content: QUESTION },
      { role: 'assistant', content: 'Above the Massa gorge.' },
      { role: 'user', content: 'Answer from the documents: How much is a guided walk?' },
    ]);
    const stored = await messagesOf(topic);
    expect(stored.map((m) => m.sort_order)).toEqual([0, 1, 2, 3, 4]);
    // A whole answer carries the model's token counts.
    expect(stored[4].prompt_tokens).toBeGreaterThan(0);
  });

  it('sends the completion first when asked, whole as a JSON string or streamed', async () => {
    const topic = await newTopic();
    const whole = await ask(topic, { search_type: 'bm25', llm_options: { completion_first: true, stream_response: false } });
    expect(whole.response.headers.get('content-type')).toMatch(/^application\/json/);
    const text = whole.data as string;
    expect(text.startsWith('It ends above the Massa gorge.||[')).toBe(true);
    expect(JSON.parse(text.slice(text.indexOf('||') + 2)).length).toBeGreaterThan(0);
    const reply = await streamed('POST', {
      topic_id: topic,
      new_message_content: 'How long is the Aletsch glacier?',
      search_type: 'bm25',
      llm_options: { completion_first: true },
    });
    expect(reply.text.startsWith('It ends above the Massa gorge.||[')).toBe(true);
    // The model reads earlier answers without their chunks, whichever side they were on.
    expect(
      standIn.received
        .at(-1)!
        .body.messages.filter((m) => m.role === 'assistant')
        .map((m) => m.content),
    ).toEqual(['It ends above the Massa gorge.']);
  });

  it('answers the no-result message without calling the model when the search finds nothing', async () => {
    const topic = await newTopic();
    const { data } = await ask(topic, { search_type: 'bm25', search_query: 'zzzqqq', no_result_message: 'Nothing on that.' });
    expect(data).toBe('[]||Nothing on that.');
    expect(standIn.received).toHaveLength(0);
    expect((await messagesOf(topic)).map((m) => m.content)).toEqual(['You answer from the documents.', QUESTION, '[]||Nothing on that.']);
  });

  it('searches with every user message of the topic when asked', async () => {
    const topic = await newTopic();
    await ask(topic, { search_type: 'bm25', llm_options: { stream_response: false } });
    const { data } = await ask(topic, {
      new_message_content: 'tomatoes',
      search_type: 'bm25',
      concat_user_messages_query: true,
      llm_options: { stream_response: false },
    });
    const ids = split(data as string).chunks.map((c) => c.id);
    expect(ids).toContain(chunkIds[2]);
    expect(ids).toContain(chunkIds[0]);
    const alone = await ask(topic, { new_message_content: 'tomatoes', search_type: 'bm25', llm_options: { stream_response: false } });
    expect(split(alone.data as string).chunks.map((c) => c.id)).toEqual([chunkIds[2]]);
  });

  it('reads the best chunk of each group found with use_group_search', async () => {
    const { data: group } = await createChunkGroup({ client: service.client(), headers: ds(), body: { name: 'Aletsch' }, throwOnError: true });
    const groupId = (group as { id: string }).id;
    for (const chunk_id of [chunkIds[0], chunkIds[1]])
      await addChunkToGroup({ client: service.client(), headers: ds(), path: { group_id: groupId }, body: { chunk_id }, throwOnError: true });
    const topic = await newTopic();
    const { data } = await ask(topic, { search_type: 'bm25', use_group_search: true, llm_options: { stream_response: false } });
    expect(split(data as string).chunks.map((c) => c.id)).toEqual([chunkIds[0]]);
    await service.services.deferred.flush();
    const [search] = await service.services.store.db('search_queries').where({ search_type: 'rag_groups' });
    expect(search.query).toBe(QUESTION);
  });
});

describe('spoken questions and images', () => {
  const WAV = Buffer.concat([Buffer.from('RIFF'), Buffer.from([36, 0, 0, 0]), Buffer.from('WAVEfmt '), Buffer.alloc(40, 0)]).toString('base64');

  it('asks the transcription of audio_input, and stores it as the question', async () => {
    const topic = await newTopic();
    standIn.next = [{ kind: 'answer', text: ` ${QUESTION} ` }];
    const { data } = await ask(topic, { new_message_content: null, audio_input: WAV, search_type: 'bm25', llm_options: { stream_response: false } });
    expect(split(data as string).completion).toBe('It ends above the Massa gorge.');
    expect(standIn.received.map((r) => r.path)).toEqual(['/v1/audio/transcriptions', '/v1/chat/completions']);
    expect(standIn.received[1].body.messages.at(-1)!.content).toBe(`Answer from the documents: ${QUESTION}`);
    expect((await messagesOf(topic))[1].content).toBe(QUESTION);

    standIn.next = [{ kind: 'answer', text: '' }];
    const silent = await ask(topic, { audio_input: WAV });
    expect(silent.response.status).toBe(400);
    expect(silent.error!.message).toMatch(/audio_input: nothing was heard/);
    expect(await messagesOf(topic)).toHaveLength(3);
  });

  it("shows the model the caller's images and, with image_config, the chunks' images", async () => {
    const { data } = await createChunk({
      client: service.client(),
      headers: ds(),
      body: { chunk_html: '<p>The Aletsch glacier seen from the Eggishorn.</p>', image_urls: ['https://img.example/a.png', 'https://img.example/b.png'] },
      throwOnError: true,
    });
    const pictured = (data as { chunk_metadata: { id: string } }).chunk_metadata.id;
    const topic = await newTopic();
    await ask(topic, {
      search_query: 'Eggishorn',
      search_type: 'bm25',
      image_urls: ['https://img.example/mine.jpg'],
      llm_options: { stream_response: false, image_config: { use_images: true, images_per_chunk: 1 } },
    });
    const last = standIn.received[0].body.messages.at(-1)! as unknown as { content: unknown };
    expect(last.content).toEqual([
      { type: 'text', text: `Answer from the documents: ${QUESTION}` },
      { type: 'image_url', image_url: { url: 'https://img.example/mine.jpg' } },
      { type: 'image_url', image_url: { url: 'https://img.example/a.png' } },
    ]);
    await deleteChunk({ client: service.client(), headers: ds(), path: { chunk_id: pictured }, throwOnError: true });
  });
});

describe('asking again', () => {
  it('edit_message replaces a question and everything after it once the new answer is complete', async () => {
    const topic = await newTopic();
    await ask(topic, { llm_options: { stream_response: false } });
    await ask(topic, { new_message_content: 'How long is it?', llm_options: { stream_response: false } });
    const before = await messagesOf(topic);
    standIn.otherwise = { kind: 'answer', text: 'Tomatoes ripen in late summer.' };
    const { data, response } = await editMessage({
      client: service.client(),
      headers: ds(),
      body: {
        topic_id: topic,
        message_sort_order: 1,
        new_message_content: 'When do tomatoes ripen?',
        search_type: 'bm25',
        llm_options: { stream_response: false },
      },
    });
    expect(response.status).toBe(200);
    expect(split(data as string).completion).toBe('Tomatoes ripen in late summer.');
    const after = await messagesOf(topic);
    expect(after.map((m) => [m.sort_order, m.role])).toEqual([
      [0, 'system'],
      [1, 'user'],
      [2, 'assistant'],
    ]);
    expect(after[0].id).toBe(before[0].id);
    expect(after[1].content).toBe('When do tomatoes ripen?');
    // The model read the conversation before the edited question only.
    expect(standIn.received.at(-1)!.body.messages.map((m) => m.role)).toEqual(['system', 'user', 'user']);

    for (const [order, status, message] of [
      [9, 404, /no message at sort order 9/],
      [2, 400, /assistant message/],
    ] as const) {
      const refused = await editMessage({
        client: service.client(),
        headers: ds(),
        body: { topic_id: topic, message_sort_order: order, new_message_content: 'x' },
      });
      expect(refused.response.status).toBe(status);
      expect(refused.error!.message).toMatch(message);
    }
    expect(await messagesOf(topic)).toEqual(after);
  });

  it('regenerate_message (DELETE and PATCH) replaces the last answer and keeps the question', async () => {
    const topic = await newTopic();
    await ask(topic, { llm_options: { stream_response: false } });
    const before = await messagesOf(topic);
    for (const [regenerate, text] of [
      [regenerateMessage, 'First retry.'],
      [regenerateMessagePatch, 'Second retry.'],
    ] as const) {
      standIn.otherwise = { kind: 'answer', text };
      const { data, response } = await regenerate({
        client: service.client(),
        headers: ds(),
        body: { topic_id: topic, llm_options: { stream_response: false } },
      });
      expect(response.status).toBe(200);
      expect(split(data as string).completion).toBe(text);
      const after = await messagesOf(topic);
      expect(after.slice(0, 2)).toEqual(before.slice(0, 2));
      expect(after).toHaveLength(3);
      expect(split(after[2].content).completion).toBe(text);
      expect(standIn.received.at(-1)!.body.messages.at(-1)!.content).toBe(`Answer from the documents: ${QUESTION}`);
    }
    const empty = await newTopic();
    const refused = await regenerateMessage({ client: service.client(), headers: ds(), body: { topic_id: empty } });
    expect(refused.response.status).toBe(400);
    expect(refused.error!.message).toMatch(/no answered question/);
    expect(await messagesOf(empty)).toEqual([]);
  });
});

describe('failures leave the topic as it was', () => {
  it('refuses bad input before calling the model', async () => {
    const topic = await newTopic();
    const other = await service.newDataset(orgId, 'other');
    const foreign = await newTopic(other.id);
    for (const [body, status, message] of [
      [{ new_message_content: '  ' }, 400, /new_message_content/],
      [{ new_message_content: null }, 400, /new_message_content/],
      [{ topic_id: UNKNOWN }, 404, new RegExp(UNKNOWN)],
      [{ topic_id: foreign }, 404, new RegExp(foreign)],
      [{ audio_input: 'AAAA' }, 400, /audio_input is not audio of a known format/],
      [{ use_agentic_search: true }, 400, /use_agentic_search/],
      [{ only_include_docs_used: true }, 400, /only_include_docs_used/],
      [{ page_size: 1000 }, 400, /page_size/],
      [{ llm_options: { temperature: 5 } }, 400, /temperature/],
    ] as const) {
      const reply = await ask(topic, body as Record<string, unknown>);
      expect(reply.response.status, JSON.stringify(body)).toBe(status);
      expect(reply.error!.message).toMatch(message);
    }
    expect(standIn.received).toHaveLength(0);
    expect(await messagesOf(topic)).toEqual([]);
  });

  it('stores nothing when the model fails, answers nothing, breaks off its stream, or the client leaves', async () => {
    const topic = await newTopic();
    const queries = (await ragQueries()).length;
    standIn.otherwise = { kind: 'status', status: 500 };
    for (const stream_response of [true, false]) {
      const reply = await ask(topic, { llm_options: { stream_response } });
      expect(reply.response.status).toBe(400);
      expect(reply.error!.message).toBe(`the LLM endpoint ${standIn.url} answered with status 500`);
    }
    standIn.otherwise = { kind: 'answer', text: '' };
    const empty = await ask(topic);
    expect(empty.response.status).toBe(400);
    expect(empty.error!.message).toMatch(/answered with an empty completion/);
    standIn.otherwise = { kind: 'cut', text: 'An answer that the model never finishes writing, word after word.' };
    const cut = await streamed('POST', { topic_id: topic, new_message_content: QUESTION });
    expect(cut.status).toBe(200);
    expect(cut.complete).toBe(false);

    standIn.otherwise = { kind: 'answer', text: 'word '.repeat(400) };
    const abandoned = standIn.abandoned;
    await streamed('POST', { topic_id: topic, new_message_content: QUESTION }, true);
    await vi.waitFor(() => expect(standIn.abandoned).toBeGreaterThan(abandoned));
    expect(await messagesOf(topic)).toEqual([]);
    expect(await ragQueries()).toHaveLength(queries);
  }, 30_000);

  it('enforces the plan: message_count and messages_per_month, 426 with nothing written', async () => {
    const db = service.services.store.db;
    const small = (await createOrganization({ client: service.client(), body: { name: 'Few messages' }, throwOnError: true })).data.id;
    const [plan] = await db('plans')
      .insert({
        name: `few-${small}`,
        chunk_count: 10,
        dataset_count: 5,
        file_storage: 1000,
        message_count: 4,
        messages_per_month: 100,
        user_count: 2,
        high_priority: false,
      })
      .returning('id');
    await db('subscriptions').where({ organization_id: small }).update({ plan_id: plan.id });
    const { data: created } = await createDataset({
      client: service.client(),
      headers: { 'SVC-Organization': small },
      body: { dataset_name: 'few' },
      throwOnError: true,
    });
    await createChunk({
      client: service.client(),
      headers: ds(created.id),
      body: { chunk_html: '<p>The Aletsch glacier ends above the Massa gorge.</p>' },
      throwOnError: true,
    });
    const topic = (await createTopic({ client: service.client(), headers: ds(created.id), body: { owner_id: 'o' }, throwOnError: true })).data.id;
    const send = () =>
      createMessage({
        client: service.client(),
        headers: ds(created.id),
        body: { topic_id: topic, new_message_content: QUESTION, llm_options: { stream_response: false } },
      });
    expect((await send()).response.status).toBe(200); // system, user and assistant: 3 of 4
    const over = await send();
    expect(over.response.status).toBe(426);
    expect(over.error!.message).toMatch(/allows 4 messages/);
    await db('plans').where({ id: plan.id }).update({ message_count: 100, messages_per_month: 4 });
    const monthly = await send();
    expect(monthly.response.status).toBe(426);
    expect(monthly.error!.message).toMatch(/allows 4 messages this month/);
    expect(Number((await db('messages').where({ topic_id: topic }).count<{ count: string }[]>('* as count'))[0].count)).toBe(3);
  });
});
