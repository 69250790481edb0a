// Handlers of the Message operations that call the dataset's model without a topic; the rules are in
// domain/rag (completion, toolParams, imageEdit, transcription).
import type * as H from '../../generated/handlers.js';
import { TextStream } from '../context.js';
import { messageCompletion } from '../domain/rag/completion.js';
import { editImage } from '../domain/rag/imageEdit.js';
import { toolFunctionParams } from '../domain/rag/toolParams.js';
import { transcribeAudio } from '../domain/rag/transcription.js';

export const generate_message_completions: H.GenerateMessageCompletionsHandler = async ({ body, dataset, services, signal }) => ({
  status: 200,
  body: TextStream.whole(await messageCompletion(services, dataset, body, signal)),
});

export const get_tool_function_params: H.GetToolFunctionParamsHandler = async ({ body, dataset, services, signal }) => ({
  status: 200,
  body: await toolFunctionParams(services, dataset, body, signal),
});

export const edit_image: H.EditImageHandler = async ({ body, dataset, services, signal }) => ({
  status: 200,
  body: await editImage(services, dataset, body, signal),
});

export const transcribe_audio: H.TranscribeAudioHandler = async ({ body, dataset, services, signal }) => ({
  status: 200,
  body: TextStream.whole(await transcribeAudio(services, dataset, body.base64_audio, 'base64_audio', signal)),
});
