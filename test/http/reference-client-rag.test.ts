// The published reference client (trieve-ts-sdk) over a topic: createTopic, an answer streamed
// through createMessageReader and one whole through createMessage, getAllMessagesForTopic, and
// getRagAnalytics, with its two scoping headers renamed to ours (TR-Dataset and TR-Organization
// become SVC-Dataset and SVC-Organization) and nothing else changed. Every response is checked
// against the contract.
import { TrieveSDK } from 'trieve-ts-sdk';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { createChunk, createOrganization } from '../../sdk/src/generated/sdk.gen.js';
import { type LlmStandIn, startLlmStandIn } from '../support/llmStandIn.js';
import { ADMIN_KEY, checkedFetch, startTestService, type TestService } from '../support/service.js';

let standIn: LlmStandIn;
let service: TestService;
let trieve: TrieveSDK;

/** The global fetch the client calls, with the reference's scoping headers under our names; every response checked against the contract. */
function renamingFetch(original: typeof fetch): typeof fetch {
  return (input, init) => {
    const headers = new Headers(init?.headers);
    for (const [theirs, ours] of [
      ['TR-Dataset', 'SVC-Dataset'],
      ['TR-Organization', 'SVC-Organization'],
    ]) {
      const value = headers.get(theirs);
      if (value == null) continue;
      headers.delete(theirs);
      headers.set(ours, value);
    }
    return checkedFetch(input, { ...init, headers }, original);
  };
}

beforeAll(async () => {
  standIn = await startLlmStandIn();
  standIn.otherwise = { kind: 'answer', text: 'It ends above the Massa gorge.' };
  service = await startTestService({ LLM_BASE_URL: standIn.url, LLM_DEFAULT_MODEL: 'stand-in-model' });
  const orgId = (await createOrganization({ client: service.client(), body: { name: 'Reference client' }, throwOnError: true })).data.id;
  const dataset = await service.newDataset(orgId, 'glaciers');
  await createChunk({
    client: service.client(),
    headers: { 'SVC-Dataset': dataset.id },
    body: { chunk_html: '<p>The Aletsch glacier is 20 km long and ends above the Massa gorge.</p>' },
    throwOnError: true,
  });
  vi.stubGlobal('fetch', renamingFetch(globalThis.fetch));
  trieve = new TrieveSDK({ apiKey: ADMIN_KEY, baseUrl: service.url, datasetId: dataset.id, organizationId: orgId });
}, 60_000);

afterAll(async () => {
  vi.unstubAllGlobals();
  await service?.stop();
  await standIn?.close();
});

it('asks in a topic, reads the answers back, and finds them in the RAG analytics', async () => {
  const topic = await trieve.createTopic({ owner_id: 'visitor-1', first_user_message: 'Where does the Aletsch glacier end?' });
  expect(topic.name).toBe('Where does the Aletsch glacier end?');

  const reader = await trieve.createMessageReader({ topic_id: topic.id, new_message_content: 'Where does the Aletsch glacier end?', search_type: 'bm25' });
  let streamed = '';
  const decoder = new TextDecoder();
  for (let part = await reader.read(); !part.done; part = await reader.read()) streamed += decoder.decode(part.value, { stream: true });
  const [chunks, completion] = streamed.split('||');
  expect(JSON.parse(chunks)).toHaveLength(1);
  expect(completion).toBe('It ends above the Massa gorge.');

  const whole = await trieve.createMessage({
    topic_id: topic.id,
    new_message_content: 'How long is it?',
    search_query: 'Aletsch glacier',
    llm_options: { stream_response: false, completion_first: true },
  });
  expect(whole.startsWith('It ends above the Massa gorge.||[')).toBe(true);

  const messages = await trieve.getAllMessagesForTopic({ messagesTopicId: topic.id });
  expect(messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user', 'assistant']);
  expect(messages[2].content).toBe(streamed);
  expect(messages[4].content).toBe(whole);

  const analytics = await trieve.getRagAnalytics({ type: 'rag_queries' });
  const queries = (analytics as { queries: { topic_id: string; user_message: string }[] }).queries.filter((q) => q.topic_id === topic.id);
  expect(queries.map((q) => q.user_message).sort()).toEqual(['How long is it?', 'Where does the Aletsch glacier end?']);
});
