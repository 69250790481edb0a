// Transcription of a caller's audio (transcribe_audio, and the audio_input of questions): the
// audio is checked here (base64, size, a known format) so the endpoint only gets what it can read.
import { transcribe } from '../../engines/llm/audio.js';
import { badRequest } from '../../errors.js';
import type { Services } from '../../services.js';
import type { DatasetRow } from '../datasets.js';
import { asBadRequest, datasetEndpoint } from './endpoint.js';
import { audioExtensionOf, decodeBase64 } from './media.js';

/** The model Trieve transcribes with; OpenAI-compatible endpoints serve it under this name. */
export const TRANSCRIPTION_MODEL = 'whisper-1';
/** The largest audio OpenAI's transcription accepts. */
export const MAX_AUDIO_BYTES = 25 * 1024 * 1024;

export async function transcribeAudio(services: Services, dataset: DatasetRow, base64: string, field: string, signal?: AbortSignal): Promise<string> {
  const bytes = decodeBase64(base64, field, MAX_AUDIO_BYTES);
  const extension = audioExtensionOf(bytes);
  if (!extension) throw badRequest(`${field} is not audio of a known format (MP3, WAV, Ogg, FLAC, WebM or MP4/M4A)`);
  const endpoint = datasetEndpoint(services, dataset);
  return transcribe(endpoint, TRANSCRIPTION_MODEL, { name: `audio.${extension}`, bytes }, signal).catch(asBadRequest);
}

/** The question a caller spoke: 400 when nothing was heard in it. */
export async function spokenText(services: Services, dataset: DatasetRow, base64: string, signal?: AbortSignal): Promise<string> {
  const text = (await transcribeAudio(services, dataset, base64, 'audio_input', signal)).trim();
  if (!text) throw badRequest('audio_input: nothing was heard in the audio');
  return text;
}
