// Parameters of a caller's function filled in by the model (get_tool_function_params): the function
// becomes one tool the model must call, and of the arguments it gives only the declared parameters
// of the declared type are kept, so the caller gets what it asked for or nothing.
import type * as T from '../../../sdk/src/generated/types.gen.js';
import { callTool, type ContentPart } from '../../engines/llm/tools.js';
import { badRequest } from '../../errors.js';
import type { Services } from '../../services.js';
import { datasetConfig } from '../datasetConfig.js';
import type { DatasetRow } from '../datasets.js';
import { asBadRequest, datasetEndpoint, datasetModelName } from './endpoint.js';
import { transcribeAudio } from './transcription.js';

export async function toolFunctionParams(
  services: Services,
  dataset: DatasetRow,
  body: T.GetToolFunctionParamsReqPayload,
  signal?: AbortSignal,
): Promise<T.GetToolFunctionParamsRespBody> {
  const { tool_function: fn } = body;
  const names = new Set<string>();
  for (const p of fn.parameters) {
    if (names.has(p.name)) throw badRequest(`tool_function.parameters: ${p.name} is declared twice`);
    names.add(p.name);
  }
  const images = [body.image_url, ...(body.image_urls ?? [])].filter((url): url is string => !!url);
  if (!body.user_message_text && !body.audio_input && images.length === 0)
    throw badRequest('give the message: user_message_text, audio_input, image_url or image_urls');
  // The endpoint is checked first: without one, that is the setting to name.
  const endpoint = datasetEndpoint(services, dataset);
  const model = datasetModelName(services, dataset, body.model);
  const text = body.audio_input ? await transcribeAudio(services, dataset, body.audio_input, 'audio_input', signal) : body.user_message_text;
  const content: ContentPart[] = [
    ...images.map((url): ContentPart => ({ type: 'image_url', image_url: { url } })),
    ...(text ? [{ type: 'text' as const, text }] : []),
  ];
  // Only audio, and nothing heard in it: there is no message to fill the parameters from.
  if (content.length === 0) throw badRequest('audio_input: nothing was heard in the audio');
  const tool = {
    name: fn.name,
    description: fn.description,
    parameters: {
      type: 'object',
      properties: Object.fromEntries(fn.parameters.map((p) => [p.name, { type: p.parameter_type, description: p.description }])),
      required: fn.parameters.map((p) => p.name),
    },
  };
  const temperature = body.temperature ?? datasetConfig(dataset).TEMPERATURE;
  const args = await callTool(endpoint, { model, content, tool, temperature }, signal).catch(asBadRequest);
  return { parameters: args === null ? null : declaredArguments(args, fn.parameters) };
}

/** The declared parameters of the right type among the model's arguments; null when they are not a JSON object. */
export function declaredArguments(text: string, declared: T.ToolFunctionParameter[]): Record<string, number | boolean> | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return null;
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return null;
  const given = parsed as Record<string, unknown>;
  const kept: Record<string, number | boolean> = {};
  for (const { name, parameter_type } of declared) {
    const value = Object.hasOwn(given, name) ? given[name] : undefined;
    if (parameter_type === 'boolean' ? typeof value === 'boolean' : typeof value === 'number' && Number.isFinite(value)) kept[name] = value as number | boolean;
  }
  return kept;
}
