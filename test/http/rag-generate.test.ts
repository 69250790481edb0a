// RAG over chosen chunks (generate_off_chunks) and suggested queries (get_suggested_queries)
// against a stand-in OpenAI-compatible model: the prompt it is given, the answer streamed or whole,
// the RAG query recorded for analytics with its hallucination check, the endpoint and model a
// dataset resolves to, and every failure a 4xx (or, once streaming, a cut connection) with nothing
// recorded.
import http from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { createChunk, createOrganization, generateOffChunks, getRagAnalytics, getSuggestedQueries } from '../../sdk/src/generated/sdk.gen.js';
import type { RagQueryResponse } from '../../sdk/src/generated/types.gen.js';
import type { DatasetRow } from '../../server/domain/datasets.js';
import { checkHallucinations } from '../../server/domain/rag/hallucinations.js';
import { checkResponse } from '../support/contract.js';
import { type LlmStandIn, startLlmStandIn } from '../support/llmStandIn.js';
import { ADMIN_KEY, startTestService, type TestService } from '../support/service.js';

let standIn: LlmStandIn;
let service: TestService;
let orgId: string;
let dataset: DatasetRow;
const chunkIds: string[] = [];
const ds = (id: string) => ({ 'SVC-Dataset': id });
const UNKNOWN = '00000000-0000-4000-8000-00000000abcd';
const question = { role: 'user' as const, content: 'Where does the Aletsch glacier end?' };

/** The RAG queries recorded for the dataset, newest first. */
async function ragQueries(datasetId = dataset.id) {
  const { data } = await getRagAnalytics({ client: service.client(), headers: ds(datasetId), body: { type: 'rag_queries' }, throwOnError: true });
  return (data as RagQueryResponse).queries;
}

/** A raw POST that reads the streamed answer as it comes, noting when each part arrived. */
function streamedPost(body: unknown): Promise<{ status: number; headers: http.IncomingHttpHeaders; parts: string[]; complete: boolean }> {
  return new Promise((resolve, reject) => {
    const request = http.request(`${service.url}/api/chunk/generate`, {
      method: 'POST',
      headers: { authorization: ADMIN_KEY, 'content-type': 'application/json', ...ds(dataset.id) },
    });
    request.on('response', (response) => {
      const parts: string[] = [];
      response.on('data', (part: Buffer) => parts.push(part.toString()));
      response.on('end', () => {
        // A whole streamed answer is checked against the contract as any other response.
        checkResponse('POST', '/api/chunk/generate', response.statusCode!, parts.join(''), response.headers['content-type'] ?? null);
        resolve({ status: response.statusCode!, headers: response.headers, parts, complete: true });
      });
      response.on('error', () => resolve({ status: response.statusCode!, headers: response.headers, parts, complete: false }));
      response.on('aborted', () => resolve({ status: response.statusCode!, headers: response.headers, parts, complete: false }));
    });
    request.on('error', reject);
    request.end(JSON.stringify(body));
  });
}

beforeAll(async () => {
  standIn = await startLlmStandIn();
  // The instance's endpoint, with its key: reached although on a loopback address.
  service = await startTestService({ LLM_BASE_URL: standIn.url, LLM_API_KEY: 'instance-llm-key', LLM_DEFAULT_MODEL: 'stand-in-model' });
  orgId = (await createOrganization({ client: service.client(), body: { name: 'RAG' }, throwOnError: true })).data.id;
  dataset = await service.newDataset(orgId, 'glaciers', { SYSTEM_PROMPT: 'You answer from the documents.', RAG_PROMPT: 'Answer from the documents:' });
  for (const [html, link] of [
    ['<p>The Aletsch glacier is 20 km long and ends above the Massa gorge.</p>', 'https://example.com/aletsch'],
    ['<p>Glaciers in the Alps lost 10% of their volume between 2022 and 2023.</p>', null],
  ] as const) {
    const { data } = await createChunk({ client: service.client(), headers: ds(dataset.id), body: { chunk_html: html, link }, throwOnError: true });
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
  standIn.otherwise = { kind: 'answer', text: 'It ends above the Massa gorge, after 20 km.' };
});

describe('an answer from chosen chunks', () => {
  it('gives the model the system prompt, the chunks in the order asked, the conversation and the question', async () => {
    const { data, response } = await generateOffChunks({
      client: service.client(),
      headers: ds(dataset.id),
      body: {
        chunk_ids: [chunkIds[1], chunkIds[0]],
        prev_messages: [{ role: 'user', content: 'Hello' }, { role: 'assistant', content: 'Hi! Ask me about glaciers.' }, question],
        stream_response: false,
        context_options: { include_links: true },
        temperature: 0.1,
        stop_tokens: ['END'],
      },
    });
    expect(response.status).toBe(200);
    expect(data).toBe('It ends above the Massa gorge, after 20 km.');
    const [sent] = standIn.received;
    expect(sent.authorization).toBe('Bearer instance-llm-key');
    expect(sent.body).toMatchObject({ model: 'stand-in-model', temperature: 0.1, stop: ['END'], frequency_penalty: 0.8, presence_penalty: 0.8 });
    const messages = sent.body.messages;
    expect(messages.map((m) => m.role)).toEqual(['system', 'user', 'user', 'user', 'assistant', 'user']);
    expect(messages[0].content).toBe('You answer from the documents.');
    expect(messages[1].content).toBe('Document 1:\nGlaciers in the Alps lost 10% of their volume between 2022 and 2023.');
    expect(messages[2].content).toBe('Document 2:\nLink: https://example.com/aletsch\nThe Aletsch glacier is 20 km long and ends above the Massa gorge.');
    expect(messages.slice(3, 5).map((m) => m.content)).toEqual(['Hello', 'Hi! Ask me about glaciers.']);
    expect(messages[5].content).toBe(`Answer from the documents: ${question.content}`);
  });

  it('streams the answer as text, and records the query with its id in SVC-QueryID', async () => {
    standIn.otherwise = { kind: 'answer', text: 'The Aletsch glacier ends above the Massa gorge.', delayMs: 50 };
    const reply = await streamedPost({ chunk_ids: [chunkIds[0]], prev_messages: [question], prompt: '', user_id: 'user-7', metadata: { page: 'faq' } });
    expect(reply.status).toBe(200);
    expect(reply.headers['content-type']).toMatch(/^text\/plain/);
    expect(reply.complete).toBe(true);
    expect(reply.parts.join('')).toBe('The Aletsch glacier ends above the Massa gorge.');
    expect(standIn.received[0].body.stream).toBe(true);
    // An empty prompt leaves the question as it is.
    expect(standIn.received[0].body.messages.at(-1)!.content).toBe(question.content);
    const queryId = reply.headers['svc-queryid'] as string;
    const recorded = (await ragQueries()).find((q) => q.id === queryId);
    expect(recorded).toMatchObject({
      rag_type: 'chosen_chunks',
      user_id: 'user-7',
      user_message: question.content,
      llm_response: 'The Aletsch glacier ends above the Massa gorge.',
      metadata: { page: 'faq' },
      hallucination_score: 0,
      detected_hallucinations: [],
    });
    expect((recorded!.results as { id: string }[]).map((r) => r.id)).toEqual([chunkIds[0]]);
  });

  it('answers a spoken final message, and shows the model the images given', async () => {
    const wav = Buffer.concat([Buffer.from('RIFF'), Buffer.from([36, 0, 0, 0]), Buffer.from('WAVEfmt '), Buffer.alloc(40, 0)]).toString('base64');
    standIn.next = [{ kind: 'answer', text: 'How long is the glacier?' }];
    const { response } = await generateOffChunks({
      client: service.client(),
      headers: ds(dataset.id),
      body: { chunk_ids: [chunkIds[0]], prev_messages: [question], audio_input: wav, image_urls: ['https://img.example/glacier.jpg'], stream_response: false },
    });
    expect(response.status).toBe(200);
    expect(standIn.received.map((r) => r.path)).toEqual(['/v1/audio/transcriptions', '/v1/chat/completions']);
    expect((standIn.received[1].body.messages.at(-1) as unknown as { content: unknown }).content).toEqual([
      { type: 'text', text: 'Answer from the documents: How long is the glacier?' },
      { type: 'image_url', image_url: { url: 'https://img.example/glacier.jpg' } },
    ]);
    const recorded = (await ragQueries()).find((q) => q.id === response.headers.get('SVC-QueryID'));
    expect(recorded!.user_message).toBe('Answer from the documents: How long is the glacier?');
  });

  it('flags the numbers and names of an answer that no chunk nor message holds', async () => {
    standIn.otherwise = { kind: 'answer', text: 'It ends near Brig, after 23 km. The Massa gorge follows.' };
    const { response } = await generateOffChunks({
      client: service.client(),
      headers: ds(dataset.id),
      body: { chunk_ids: [chunkIds[0]], prev_messages: [question], stream_response: false },
    });
    const recorded = (await ragQueries()).find((q) => q.id === response.headers.get('SVC-QueryID'));
    // Named: 23 and Brig; grounded: Massa (in the chunk); "It" and "The" start sentences.
    expect(recorded!.detected_hallucinations).toEqual(['23', 'Brig']);
    expect(recorded!.hallucination_score).toBeCloseTo(2 / 3, 10);
  });
});

describe('suggested queries', () => {
  const suggest = (body: Parameters<typeof getSuggestedQueries>[0]['body']) => getSuggestedQueries({ client: service.client(), headers: ds(dataset.id), body });

  it("are the model's lines, cleaned and without repeats, from the chunks a search finds", async () => {
    standIn.otherwise = { kind: 'answer', text: '1. glacier length\n- Massa gorge\n"Glacier length"\n\n  Alps volume loss  \n' };
    const { data, response } = await suggest({ query: 'Aletsch', search_type: 'bm25', suggestions_to_create: 5 });
    expect(response.status).toBe(200);
    expect(data!.queries).toEqual(['glacier length', 'Massa gorge', 'Alps volume loss']);
    const prompt = standIn.received[0].body.messages[0].content;
    expect(prompt).toMatch(/^Write 5 short keyword searches/);
    expect(prompt).toContain('Document 1: The Aletsch glacier is 20 km long');
    expect(prompt).not.toContain('lost 10%');
  });

  it('read a sample of the chunks without a query, and ask for the kind and number wanted', async () => {
    standIn.otherwise = { kind: 'answer', text: 'How long is the Aletsch glacier?\nWhat did the Alps lose?\nWhere is the gorge?' };
    const { data } = await suggest({ suggestion_type: 'question', suggestions_to_create: 2, context: 'planning a hike' });
    expect(data!.queries).toEqual(['How long is the Aletsch glacier?', 'What did the Alps lose?']);
    const prompt = standIn.received[0].body.messages[0].content;
    expect(prompt).toMatch(/^Write 2 questions/);
    expect(prompt).toContain('planning a hike');
    expect(prompt).toContain('The Aletsch glacier is 20 km long');
    expect(prompt).toContain('lost 10% of their volume');
  });

  it('ask for follow-ups to the query, none when zero are wanted, and refuse an empty answer', async () => {
    standIn.otherwise = { kind: 'answer', text: 'glacier retreat' };
    await suggest({ query: 'Aletsch glacier', is_followup: true });
    expect(standIn.received[0].body.messages[0].content).toMatch(/^Write 10 follow-up short keyword searches .* to the search "Aletsch glacier"/);
    expect((await suggest({ suggestions_to_create: 0 })).data!.queries).toEqual([]);
    expect(standIn.received).toHaveLength(1);
    standIn.otherwise = { kind: 'answer', text: ' \n "" \n' };
    const { response, error } = await suggest({});
    expect(response.status).toBe(400);
    expect((error as { message: string }).message).toMatch(/no suggestions/);
  });
});

describe('the hallucination check', () => {
  it('reads numbers by their digits and names case-insensitively, and scores 0 without any', () => {
    expect(checkHallucinations('About 1,200 people, says Anna.', ['1200 visitors, counted by anna'])).toEqual({ score: 0, detected: [] });
    expect(checkHallucinations('it is long and cold.', ['nothing'])).toEqual({ score: 0, detected: [] });
    expect(checkHallucinations('It measured 3.5 m in Zermatt and in Saas.', ['3.5 m in Saas'])).toEqual({ score: 1 / 3, detected: ['Zermatt'] });
  });
});

describe('failures', () => {
  const ask = (body: Record<string, unknown>, datasetId = dataset.id) =>
    service.request('POST', '/api/chunk/generate', {
      headers: { authorization: ADMIN_KEY, ...ds(datasetId) },
      body: { chunk_ids: chunkIds, prev_messages: [question], ...body },
    });

  it('refuses bad input before calling the model', async () => {
    const before = (await ragQueries()).length;
    for (const [body, status, message] of [
      [{ prev_messages: [] }, 400, /prev_messages/],
      [{ prev_messages: [{ role: 'robot', content: 'x' }] }, 400, /role/],
      [{ chunk_ids: [UNKNOWN] }, 404, new RegExp(UNKNOWN)],
      [{ chunk_ids: ['nope'] }, 400, /chunk_ids/],
      [{ temperature: 3 }, 400, /temperature/],
      [{ audio_input: 'AAAA' }, 400, /audio_input is not audio of a known format/],
    ] as const) {
      const reply = await ask(body as Record<string, unknown>);
      expect(reply.status, JSON.stringify(body)).toBe(status);
      expect(reply.body.message).toMatch(message);
    }
    expect(standIn.received).toHaveLength(0);
    expect(await ragQueries()).toHaveLength(before);
  });

  it('is a 400 naming the endpoint when the model fails before answering, with nothing recorded', async () => {
    const before = (await ragQueries()).length;
    standIn.otherwise = { kind: 'status', status: 500 };
    for (const stream_response of [true, false]) {
      const reply = await ask({ stream_response });
      expect(reply.status).toBe(400);
      expect(reply.body.message).toBe(`the LLM endpoint ${standIn.url} answered with status 500`);
    }
    standIn.otherwise = { kind: 'garbage' };
    expect((await ask({ stream_response: false })).status).toBe(400);
    expect(await ragQueries()).toHaveLength(before);
  }, 30_000);

  it('cuts the reply when the model breaks off its stream, and records nothing', async () => {
    const before = (await ragQueries()).length;
    standIn.otherwise = { kind: 'cut', text: 'A long answer about the glacier that the model never finishes writing.' };
    const reply = await streamedPost({ chunk_ids: chunkIds, prev_messages: [question] });
    expect(reply.status).toBe(200);
    expect(reply.complete).toBe(false);
    expect(await ragQueries()).toHaveLength(before);
  });

  it('stops the model when the client goes away', async () => {
    standIn.otherwise = { kind: 'answer', text: 'word '.repeat(400) };
    const abandonedBefore = standIn.abandoned;
    await new Promise<void>((resolve) => {
      const request = http.request(`${service.url}/api/chunk/generate`, {
        method: 'POST',
        headers: { authorization: ADMIN_KEY, 'content-type': 'application/json', ...ds(dataset.id) },
      });
      request.on('response', (response) => {
        response.once('data', () => {
          request.destroy();
          resolve();
        });
      });
      request.end(JSON.stringify({ chunk_ids: chunkIds, prev_messages: [question] }));
    });
    await vi.waitFor(() => expect(standIn.abandoned).toBeGreaterThan(abandonedBefore));
  });

  it('names the setting when neither the dataset nor the instance configures a model or an endpoint', async () => {
    const bare = await startTestService();
    try {
      const org = (await createOrganization({ client: bare.client(), body: { name: 'No LLM' }, throwOnError: true })).data.id;
      const plain = await bare.newDataset(org, 'plain');
      const { data } = await createChunk({ client: bare.client(), headers: ds(plain.id), body: { chunk_html: '<p>text</p>' }, throwOnError: true });
      const id = (data as { chunk_metadata: { id: string } }).chunk_metadata.id;
      const noEndpoint = await bare.request('POST', '/api/chunk/generate', {
        headers: { authorization: ADMIN_KEY, ...ds(plain.id) },
        body: { chunk_ids: [id], prev_messages: [question] },
      });
      expect(noEndpoint.status).toBe(400);
      expect(noEndpoint.body.message).toMatch(/LLM_BASE_URL/);
      // A dataset naming a private endpoint: no model named, then the address refused.
      const tenant = await bare.newDataset(org, 'tenant endpoint', { LLM_BASE_URL: standIn.url });
      const chunk = await createChunk({ client: bare.client(), headers: ds(tenant.id), body: { chunk_html: '<p>text</p>' }, throwOnError: true });
      const tenantChunk = (chunk.data as { chunk_metadata: { id: string } }).chunk_metadata.id;
      const ask = (body: Record<string, unknown>) =>
        bare.request('POST', '/api/chunk/generate', {
          headers: { authorization: ADMIN_KEY, ...ds(tenant.id) },
          body: { chunk_ids: [tenantChunk], prev_messages: [question], ...body },
        });
      const noModel = await ask({});
      expect(noModel.status).toBe(400);
      expect(noModel.body.message).toMatch(/LLM_DEFAULT_MODEL/);
      const refused = await ask({ model: 'm', stream_response: false });
      expect(refused.status).toBe(400);
      expect(refused.body.message).toMatch(/could not be reached: 127\.0\.0\.1 is a loopback address/);
      expect(standIn.received).toHaveLength(0);
    } finally {
      await bare.stop();
    }
  }, 30_000);
});
