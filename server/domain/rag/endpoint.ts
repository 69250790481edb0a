// Which model a dataset's RAG calls: the endpoint the dataset names, else the instance's; the model
// the request names, else the dataset's default, else the instance's. Missing either is the
// operator's or the tenant's to configure, and the error says which setting.
import { chatModel, type ChatModel, type LlmEndpoint, LlmError } from '../../engines/llm/index.js';
import { badRequest } from '../../errors.js';
import type { Services } from '../../services.js';
import { datasetConfig } from '../datasetConfig.js';
import type { DatasetRow } from '../datasets.js';

export interface DatasetModel {
  chat: ChatModel;
  model: string;
}

export function datasetModel(services: Services, dataset: DatasetRow, requested?: string | null): DatasetModel {
  const { outbound, baseUrl, apiVersion } = datasetEndpoint(services, dataset);
  return { chat: chatModel(outbound, baseUrl, apiVersion), model: datasetModelName(services, dataset, requested) };
}

/** The model the request names, else the dataset's default, else the instance's. */
export function datasetModelName(services: Services, dataset: DatasetRow, requested?: string | null): string {
  const model = requested ?? datasetConfig(dataset).LLM_DEFAULT_MODEL ?? services.config.llmDefaultModel;
  if (!model) throw badRequest("no model is named: give `model`, or set LLM_DEFAULT_MODEL in the dataset's server_configuration or the instance's");
  return model;
}

/** The dataset's endpoint, else the instance's (alone where the model is fixed: image edits, transcription). */
export function datasetEndpoint(services: Services, dataset: DatasetRow): LlmEndpoint {
  const config = datasetConfig(dataset);
  const baseUrl = config.LLM_BASE_URL ?? services.config.outbound.llm?.baseUrl ?? null;
  if (!baseUrl) throw badRequest("no LLM endpoint is configured: set LLM_BASE_URL in the dataset's server_configuration, or the instance's LLM_BASE_URL");
  return { outbound: services.config.outbound, baseUrl, apiVersion: config.LLM_API_VERSION };
}

/** A model's failure as the request's: a 400 naming the endpoint (for `.catch`). */
export function asBadRequest(error: unknown): never {
  throw error instanceof LlmError ? badRequest(error.message) : error;
}
