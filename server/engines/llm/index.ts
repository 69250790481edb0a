// The LLM seam: chat completions from any OpenAI-compatible endpoint, whole or streamed, through
// the official client (its retries before an answer starts, its reading of the event stream). Every
// request goes out through outboundFetch, which adds the instance's key only under LLM_BASE_URL and
// keeps a tenant's URL off private addresses. A failure is an LlmError naming the endpoint and what
// went wrong, never repeating the endpoint's own words.
import OpenAI from 'openai';
import { type OutboundSettings, outboundFetch } from '../outbound.js';

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
  /** URLs of images the model looks at with a user message's text. */
  images?: string[];
}

export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  temperature?: number;
  maxTokens?: number | null;
  frequencyPenalty?: number;
  presencePenalty?: number;
  stop?: string[] | null;
}

export interface Completion {
  content: string;
  promptTokens: number | null;
  completionTokens: number | null;
}

export interface ChatModel {
  /** The whole answer. */
  complete(request: ChatRequest, signal?: AbortSignal): Promise<Completion>;
  /** The answer's text as it is generated; ends with the answer, or throws an LlmError. */
  stream(request: ChatRequest, signal?: AbortSignal): AsyncIterable<string>;
}

/** The endpoint failed, or answered something that is not a completion. */
export class LlmError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LlmError';
  }
}

/** Until an answer starts: a whole answer arrives at once, so this allows for a long one. */
const ANSWER_TIMEOUT_MS = 120_000;
/** Retries of a request that got no answer, or a 408, 409, 429 or 5xx, before the answer starts. */
const RETRIES = 2;

export function chatModel(outbound: OutboundSettings, baseUrl: string, apiVersion: string | null = null): ChatModel {
  const client = openaiClient(outbound, baseUrl, apiVersion);
  const failure = (error: unknown) => llmFailure(baseUrl, error);
  const body = (request: ChatRequest) => ({
    model: request.model,
    messages: request.messages.map(
      ({ role, content, images }): OpenAI.Chat.ChatCompletionMessageParam =>
        role === 'user' && images?.length
          ? { role, content: [{ type: 'text', text: content }, ...images.map((url) => ({ type: 'image_url' as const, image_url: { url } }))] }
          : { role, content },
    ),
    temperature: request.temperature,
    max_tokens: request.maxTokens ?? undefined,
    frequency_penalty: request.frequencyPenalty,
    presence_penalty: request.presencePenalty,
    stop: request.stop?.length ? request.stop : undefined,
  });

  return {
    async complete(request, signal) {
      let answer: OpenAI.Chat.Completions.ChatCompletion;
      try {
        answer = await client.chat.completions.create({ ...body(request), stream: false }, { signal });
      } catch (error) {
        throw failure(error);
      }
      const content = answer?.choices?.[0]?.message?.content;
      if (typeof content !== 'string') throw new LlmError(`the LLM endpoint ${baseUrl} answered without a completion`);
      if (!content.trim()) throw new LlmError(`the LLM endpoint ${baseUrl} answered with an empty completion`);
      return { content, promptTokens: answer.usage?.prompt_tokens ?? null, completionTokens: answer.usage?.completion_tokens ?? null };
    },

    async *stream(request, signal) {
      try {
        const chunks = await client.chat.completions.create({ ...body(request), stream: true }, { signal });
        let finished = false;
        let said = false;
        for await (const chunk of chunks) {
          const choice = chunk?.choices?.[0];
          if (typeof choice?.delta?.content === 'string' && choice.delta.content) {
            said ||= choice.delta.content.trim() !== '';
            yield choice.delta.content;
          }
          if (choice?.finish_reason) finished = true;
        }
        // The stream ended without saying the answer was done: it was cut off.
        if (!finished) throw new LlmError(`the LLM endpoint ${baseUrl} ended its answer before finishing it`);
        if (!said) throw new LlmError(`the LLM endpoint ${baseUrl} answered with an empty completion`);
      } catch (error) {
        throw failure(error);
      }
    },
  };
}

/** Where a model is reached, and the outbound rules its requests follow. */
export interface LlmEndpoint {
  outbound: OutboundSettings;
  baseUrl: string;
  apiVersion: string | null;
}

/** The official client for an endpoint, every request going out through outboundFetch. */
export function openaiClient(outbound: OutboundSettings, baseUrl: string, apiVersion: string | null = null): OpenAI {
  return new OpenAI({
    baseURL: baseUrl,
    // The client insists on a key; outboundFetch drops it and adds the instance's where it belongs.
    apiKey: 'unused',
    maxRetries: RETRIES,
    timeout: ANSWER_TIMEOUT_MS,
    defaultQuery: apiVersion ? { 'api-version': apiVersion } : undefined,
    fetch: async (input, init) => {
      const headers: Record<string, string> = {};
      new Headers(init?.headers).forEach((value, name) => {
        if (name !== 'authorization') headers[name] = value;
      });
      let body: string | Uint8Array | undefined = typeof init?.body === 'string' ? init.body : undefined;
      // An upload (images, audio) comes as FormData: encoded here, with its boundary, to bytes.
      if (init?.body instanceof FormData) {
        const encoded = new Response(init.body);
        headers['content-type'] = encoded.headers.get('content-type') ?? 'multipart/form-data';
        body = new Uint8Array(await encoded.arrayBuffer());
      }
      return outboundFetch(outbound, String(input instanceof Request ? input.url : input), {
        method: (init?.method ?? 'GET') as 'GET' | 'POST',
        headers,
        body,
        timeoutMs: ANSWER_TIMEOUT_MS,
        streaming: true,
        signal: init?.signal ?? undefined,
        credential: 'llm',
      }) as unknown as Promise<Response>;
    },
  });
}

/** A failure of a request to the endpoint as an LlmError; `expected` is what it should have answered. */
export function llmFailure(baseUrl: string, error: unknown, expected = 'a chat completion'): LlmError {
  if (error instanceof LlmError) return error;
  const endpoint = `the LLM endpoint ${baseUrl}`;
  if (error instanceof OpenAI.APIConnectionTimeoutError) return new LlmError(`${endpoint} did not answer within ${ANSWER_TIMEOUT_MS} ms`);
  if (error instanceof OpenAI.APIUserAbortError) return new LlmError(`the request to ${endpoint} was cancelled`);
  if (error instanceof OpenAI.APIConnectionError) {
    // outboundFetch's own description (a refused address, a failed connection), never a reply.
    const cause = (error as { cause?: unknown }).cause;
    return new LlmError(`${endpoint} could not be reached${cause instanceof Error ? `: ${cause.message}` : ''}`);
  }
  if (error instanceof OpenAI.APIError && typeof error.status === 'number') return new LlmError(`${endpoint} answered with status ${error.status}`);
  return new LlmError(`${endpoint} answered something that is not ${expected}`);
}
