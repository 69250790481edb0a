// The LLM seam against a stand-in OpenAI-compatible endpoint over real HTTP: whole and streamed
// answers, the request it sends, where the instance's key goes, retries, and each failure named.
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { type ChatRequest, chatModel, LlmError } from '../../server/engines/llm/index.js';
import type { OutboundSettings } from '../../server/engines/outbound.js';
import { type LlmStandIn, startLlmStandIn } from '../support/llmStandIn.js';

let standIn: LlmStandIn;
const tenant = (): OutboundSettings => ({ allowPrivate: ['127.0.0.1'], embedding: null, reranker: null, llm: null });
const request: ChatRequest = {
  model: 'stand-in-model',
  messages: [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'Where is the glacier?' },
  ],
  temperature: 0.2,
  maxTokens: 50,
  stop: ['END'],
};

async function collect(stream: AsyncIterable<string>): Promise<string[]> {
  const parts: string[] = [];
  for await (const part of stream) parts.push(part);
  return parts;
}

beforeAll(async () => {
  standIn = await startLlmStandIn();
});
afterAll(() => standIn.close());
beforeEach(() => {
  standIn.received.length = 0;
  standIn.next.length = 0;
  standIn.otherwise = { kind: 'answer', text: 'The glacier lies north of the valley.' };
});

describe('the LLM seam', () => {
  it('answers whole, with token counts, sending the request as asked', async () => {
    const answer = await chatModel(tenant(), standIn.url).complete(request);
    expect(answer.content).toBe('The glacier lies north of the valley.');
    expect(answer.promptTokens).toBeGreaterThan(0);
    expect(answer.completionTokens).toBe(7);
    const [sent] = standIn.received;
    expect(sent.path).toBe('/v1/chat/completions');
    expect(sent.body).toMatchObject({ model: 'stand-in-model', messages: request.messages, temperature: 0.2, max_tokens: 50, stop: ['END'], stream: false });
    // A tenant's URL gets no key, not even the client's placeholder.
    expect(sent.authorization).toBeUndefined();
  });

  it('streams the answer in the pieces the endpoint sends', async () => {
    const parts = await collect(chatModel(tenant(), standIn.url).stream(request));
    expect(parts.length).toBeGreaterThan(3);
    expect(parts.join('')).toBe('The glacier lies north of the valley.');
    expect(standIn.received[0].body.stream).toBe(true);
  });

  it("sends the instance's key to LLM_BASE_URL only", async () => {
    const operator: OutboundSettings = { ...tenant(), allowPrivate: [], llm: { baseUrl: standIn.url, apiKey: 'instance-llm-key' } };
    await chatModel(operator, standIn.url).complete(request);
    expect(standIn.received[0].authorization).toBe('Bearer instance-llm-key');
    // Another path of the same server is not the operator's endpoint: no key, and, being private, not reached.
    const elsewhere = standIn.url.replace(/\/v1$/, '/other/v1');
    await expect(chatModel(operator, elsewhere).complete(request)).rejects.toThrow(/could not be reached: 127\.0\.0\.1 is a loopback address/);
    expect(standIn.received).toHaveLength(1);
  });

  it('retries a failing endpoint before the answer starts, then names the failure', async () => {
    standIn.next.push({ kind: 'status', status: 503 });
    expect((await chatModel(tenant(), standIn.url).complete(request)).content).toContain('glacier');
    expect(standIn.received).toHaveLength(2);

    standIn.received.length = 0;
    standIn.otherwise = { kind: 'status', status: 500 };
    const failure = await chatModel(tenant(), standIn.url)
      .complete(request)
      .catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(LlmError);
    expect((failure as Error).message).toBe(`the LLM endpoint ${standIn.url} answered with status 500`);
    expect((failure as Error).message).not.toContain('stand-in failure');
    expect(standIn.received).toHaveLength(3);
    // A refusal of the request itself is not retried.
    standIn.received.length = 0;
    standIn.otherwise = { kind: 'status', status: 400 };
    await expect(chatModel(tenant(), standIn.url).complete(request)).rejects.toThrow('answered with status 400');
    expect(standIn.received).toHaveLength(1);
  }, 20_000);

  it('names an answer that is not a completion, and a stream cut in the middle', async () => {
    standIn.otherwise = { kind: 'garbage' };
    await expect(chatModel(tenant(), standIn.url).complete(request)).rejects.toThrow(LlmError);
    standIn.otherwise = { kind: 'cut', text: 'A long answer that never gets to its end.' };
    const parts: string[] = [];
    const failure = await (async () => {
      for await (const part of chatModel(tenant(), standIn.url).stream(request)) parts.push(part);
    })().catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(LlmError);
    expect(parts.join('').length).toBeGreaterThan(0);
    expect(parts.join('')).not.toBe('A long answer that never gets to its end.');
  });

  it('names an empty answer, whole or streamed', async () => {
    standIn.otherwise = { kind: 'answer', text: ' ' };
    const empty = `the LLM endpoint ${standIn.url} answered with an empty completion`;
    await expect(chatModel(tenant(), standIn.url).complete(request)).rejects.toThrow(empty);
    standIn.otherwise = { kind: 'answer', text: '' };
    await expect(collect(chatModel(tenant(), standIn.url).stream(request))).rejects.toThrow(empty);
  });

  it('stops the request when the caller goes away', async () => {
    standIn.otherwise = { kind: 'answer', text: 'slow '.repeat(200), delayMs: 300 };
    const caller = new AbortController();
    const stream = chatModel(tenant(), standIn.url).stream(request, caller.signal);
    const reading = collect(stream).catch((e: unknown) => e);
    await vi.waitFor(() => expect(standIn.received).toHaveLength(1));
    caller.abort();
    expect(await reading).toBeInstanceOf(LlmError);
    await vi.waitFor(() => expect(standIn.abandoned).toBeGreaterThan(0));
  });
});
