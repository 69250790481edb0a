// Tool calling: the model is given one function and made to call it. The arguments come back as the
// endpoint wrote them, text that may not even be JSON: judging them is the caller's business.
import type OpenAI from 'openai';
import { type LlmEndpoint, LlmError, llmFailure, openaiClient } from './index.js';

export type ContentPart = { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } };

export interface FunctionTool {
  name: string;
  description: string;
  /** A JSON schema of the arguments, an object. */
  parameters: Record<string, unknown>;
}

export interface ToolCallRequest {
  model: string;
  /** The one user message: text and images. */
  content: ContentPart[];
  tool: FunctionTool;
  temperature?: number;
}

/** The arguments of the model's call of the tool, as sent; null when the model did not call it. */
export async function callTool(endpoint: LlmEndpoint, request: ToolCallRequest, signal?: AbortSignal): Promise<string | null> {
  const client = openaiClient(endpoint.outbound, endpoint.baseUrl, endpoint.apiVersion);
  let answer: OpenAI.Chat.Completions.ChatCompletion;
  try {
    answer = await client.chat.completions.create(
      {
        model: request.model,
        messages: [{ role: 'user', content: request.content }],
        tools: [{ type: 'function', function: request.tool }],
        tool_choice: { type: 'function', function: { name: request.tool.name } },
        temperature: request.temperature,
        stream: false,
      },
      { signal },
    );
  } catch (error) {
    throw llmFailure(endpoint.baseUrl, error);
  }
  const message = answer?.choices?.[0]?.message;
  if (!message || typeof message !== 'object') throw new LlmError(`the LLM endpoint ${endpoint.baseUrl} answered without a completion`);
  const call = (message.tool_calls ?? []).find((c) => c?.type === 'function' && c.function?.name === request.tool.name);
  return call && call.type === 'function' && typeof call.function.arguments === 'string' ? call.function.arguments : null;
}
