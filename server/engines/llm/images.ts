// Image edits through the endpoint's `/images/edits` (a multipart upload of the images and the prompt).
import type OpenAI from 'openai';
import { toFile } from 'openai';
import { type LlmEndpoint, LlmError, llmFailure, openaiClient } from './index.js';

export interface ImageFile {
  name: string;
  /** Its media type, such as image/png. */
  type: string;
  bytes: Uint8Array;
}

export interface ImageEditRequest {
  model: string;
  images: ImageFile[];
  prompt: string;
  n: number;
  size: '1024x1024' | '1024x1536' | '1536x1024';
  quality: 'low' | 'medium' | 'high';
}

/** An image made: its bytes in base64, or where the endpoint keeps it. */
export type EditedImage = { base64: string } | { url: string };

export async function editImages(endpoint: LlmEndpoint, request: ImageEditRequest, signal?: AbortSignal): Promise<EditedImage[]> {
  const client = openaiClient(endpoint.outbound, endpoint.baseUrl, endpoint.apiVersion);
  let answer: OpenAI.ImagesResponse;
  try {
    const files = await Promise.all(request.images.map((image) => toFile(image.bytes, image.name, { type: image.type })));
    answer = await client.images.edit(
      { model: request.model, image: files, prompt: request.prompt, n: request.n, size: request.size, quality: request.quality },
      { signal },
    );
  } catch (error) {
    throw llmFailure(endpoint.baseUrl, error, 'images');
  }
  if (!Array.isArray(answer?.data)) throw new LlmError(`the LLM endpoint ${endpoint.baseUrl} answered something that is not images`);
  return answer.data.flatMap((image): EditedImage[] => {
    if (typeof image?.b64_json === 'string' && image.b64_json) return [{ base64: image.b64_json }];
    if (typeof image?.url === 'string' && image.url) return [{ url: image.url }];
    return [];
  });
}
