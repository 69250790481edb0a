// Which model a dataset's RAG calls: the endpoint the dataset names, else the instance's; the model
// the request names, else the dataset's default, else the instance's. Missing either is the
// operator's or the tenant's to configure, and the error says which setting.
import { chatModel, type ChatModel, LlmError } from '../../engines/llm/index.js';
import { badRequest } from '../../errors.js';
import type { Services } from '../../services.js';
import { datasetConfig } from '../datasetConfig.js';
import type { DatasetRow } from '../datasets.js';

export interface DatasetModel {
  chat: ChatModel;
  model: string;
}

export function datasetModel(services: Services, dataset: DatasetRow, requested?: string | null): DatasetModel {
  const config = datasetConfig(dataset);
  const baseUrl = config.LLM_BASE_URL ?? services.config.outbound.llm?.baseUrl ?? null;
  if (!baseUrl) throw badRequest("no LLM endpoint is configured: set LLM_BASE_URL in the dataset's server_configuration, or the instance's LLM_BASE_URL");
  const model = requested ?? config.LLM_DEFAULT_MODEL ?? services.config.llmDefaultModel;
  if (!model) throw badRequest("no model is named: give `model`, or set LLM_DEFAULT_MODEL in the dataset's server_configuration or the instance's");
  return { chat: chatModel(services.config.outbound, baseUrl, config.LLM_API_VERSION), model };
}

/** A model's failure as the request's: a 400 naming the endpoint (for `.catch`). */
export function asBadRequest(error: unknown): never {
  throw error instanceof LlmError ? badRequest(error.message) : error;
}
