// Transcription through the endpoint's `/audio/transcriptions` (a multipart upload of the audio).
import type OpenAI from 'openai';
import { toFile } from 'openai';
import { type LlmEndpoint, LlmError, llmFailure, openaiClient } from './index.js';

export interface AudioFile {
  /** Its name; endpoints tell the format by its extension. */
  name: string;
  bytes: Uint8Array;
}

/** The text heard in the audio. */
export async function transcribe(endpoint: LlmEndpoint, model: string, audio: AudioFile, signal?: AbortSignal): Promise<string> {
  const client = openaiClient(endpoint.outbound, endpoint.baseUrl, endpoint.apiVersion);
  let answer: OpenAI.Audio.Transcription;
  try {
    answer = await client.audio.transcriptions.create({ model, file: await toFile(audio.bytes, audio.name) }, { signal });
  } catch (error) {
    throw llmFailure(endpoint.baseUrl, error, 'a transcription');
  }
  if (typeof answer?.text !== 'string') throw new LlmError(`the LLM endpoint ${endpoint.baseUrl} answered something that is not a transcription`);
  return answer.text;
}
