// A dataset's server configuration: every field the interface knows, validated, with the defaults
// of a self-hosted instance (the instance's default embedder, no LLM or reranker configured). Datasets
// store it resolved (every field present); `datasetConfig(row)` is how the rest of the service reads it.
import { z } from 'zod';
import { BUILTIN_MODEL, MODELS_IN_SERVICE } from '../engines/embeddings/index.js';
import { LOCAL_MODEL } from '../engines/embeddings/local/files.js';
import { badRequest } from '../errors.js';
import type { DatasetRow } from './datasets.js';

const httpUrl = z.string().refine(
  (value) => {
    try {
      const url = new URL(value);
      return url.protocol === 'http:' || url.protocol === 'https:';
    } catch {
      return false;
    }
  },
  { message: 'must be an http(s) URL' },
);
const nonEmpty = z.string().min(1, { message: 'must not be empty' });
const optionalText = z.string().nullable().optional();

const publicDataset = z.object({
  enabled: z.boolean(),
  extra_params: z.record(z.string(), z.unknown()).nullable().optional(),
});

const toolConfiguration = z.object({
  query_tool_options: z
    .object({
      tool_description: optionalText,
      query_parameter_description: optionalText,
      price_filter_description: optionalText,
      max_price_option_description: optionalText,
      min_price_option_description: optionalText,
    })
    .nullable()
    .optional(),
});

/** The value each field may take once resolved. */
const fields = {
  EMBEDDING_BASE_URL: httpUrl.nullable(),
  EMBEDDING_MODEL_NAME: nonEmpty,
  EMBEDDING_QUERY_PREFIX: z.string(),
  EMBEDDING_SIZE: z.int().min(1, { message: 'must be at least 1' }).max(16_000, { message: 'must be at most 16000' }),
  DISTANCE_METRIC: z.enum(['euclidean', 'cosine', 'manhattan', 'dot'], { message: 'must be one of euclidean, cosine, manhattan, dot' }),
  FULLTEXT_ENABLED: z.boolean(),
  SEMANTIC_ENABLED: z.boolean(),
  BM25_ENABLED: z.boolean(),
  BM25_K: z.number().min(0, { message: 'must be at least 0' }),
  BM25_B: z.number().min(0, { message: 'must be between 0 and 1' }).max(1, { message: 'must be between 0 and 1' }),
  BM25_AVG_LEN: z.number().positive({ message: 'must be greater than 0' }).nullable(),
  QDRANT_ONLY: z.boolean(),
  INDEXED_ONLY: z.boolean(),
  LOCKED: z.boolean(),
  DISABLE_ANALYTICS: z.boolean(),
  MAX_LIMIT: z.int().min(1, { message: 'must be at least 1' }),
  N_RETRIEVALS_TO_INCLUDE: z.int().min(1, { message: 'must be between 1 and 100' }).max(100, { message: 'must be between 1 and 100' }),
  LLM_BASE_URL: httpUrl.nullable(),
  LLM_DEFAULT_MODEL: nonEmpty.nullable(),
  LLM_API_VERSION: z.string().nullable(),
  TEMPERATURE: z.number().min(0, { message: 'must be between 0 and 2' }).max(2, { message: 'must be between 0 and 2' }),
  PRESENCE_PENALTY: z.number().min(-2, { message: 'must be between -2 and 2' }).max(2, { message: 'must be between -2 and 2' }),
  FREQUENCY_PENALTY: z.number().min(-2, { message: 'must be between -2 and 2' }).max(2, { message: 'must be between -2 and 2' }),
  MAX_TOKENS: z.int().min(1, { message: 'must be at least 1' }).nullable(),
  STOP_TOKENS: z.array(nonEmpty).max(16, { message: 'may hold at most 16 sequences' }).nullable(),
  SYSTEM_PROMPT: z.string(),
  RAG_PROMPT: z.string(),
  MESSAGE_TO_QUERY_PROMPT: z.string(),
  USE_MESSAGE_TO_QUERY_PROMPT: z.boolean(),
  RERANKER_BASE_URL: httpUrl.nullable(),
  RERANKER_MODEL_NAME: nonEmpty.nullable(),
  AIMON_RERANKER_TASK_DEFINITION: z.string().nullable(),
  PAGEFIND_ENABLED: z.boolean(),
  PUBLIC_DATASET: publicDataset,
  TOOL_CONFIGURATION: toolConfiguration.nullable(),
};

const configurationSchema = z.object(fields);

/** A dataset's complete configuration. */
export type DatasetConfiguration = z.infer<typeof configurationSchema>;
export type ConfigurationField = keyof DatasetConfiguration;

const fieldNames = Object.keys(fields) as ConfigurationField[];

/** What a dataset starts with unless its creator says otherwise. */
export const defaultConfiguration: Readonly<DatasetConfiguration> = Object.freeze({
  EMBEDDING_BASE_URL: null,
  // What a stored configuration without the field meant: new datasets get the instance's default
  // embedder instead (datasetDefaults).
  EMBEDDING_MODEL_NAME: BUILTIN_MODEL,
  EMBEDDING_QUERY_PREFIX: '',
  EMBEDDING_SIZE: 384,
  DISTANCE_METRIC: 'cosine',
  FULLTEXT_ENABLED: true,
  SEMANTIC_ENABLED: true,
  BM25_ENABLED: true,
  BM25_K: 1.2,
  BM25_B: 0.75,
  // Unset: the dataset's actual average chunk length (search/retrieval/bm25).
  BM25_AVG_LEN: null,
  QDRANT_ONLY: false,
  INDEXED_ONLY: false,
  LOCKED: false,
  DISABLE_ANALYTICS: false,
  MAX_LIMIT: 10_000,
  N_RETRIEVALS_TO_INCLUDE: 8,
  LLM_BASE_URL: null,
  LLM_DEFAULT_MODEL: null,
  LLM_API_VERSION: null,
  TEMPERATURE: 0.5,
  PRESENCE_PENALTY: 0.8,
  FREQUENCY_PENALTY: 0.8,
  MAX_TOKENS: null,
  STOP_TOKENS: null,
  SYSTEM_PROMPT:
    'You are a helpful assistant. Answer from the documents you are given, say so plainly when they do not ' +
    'contain the answer, and keep your answers short and accurate.',
  RAG_PROMPT:
    'Use the following retrieved passages to answer the question that follows. Prefer the passages over ' +
    'what you already know, and mention which passage an answer comes from when that helps.',
  MESSAGE_TO_QUERY_PROMPT:
    'Rewrite the message below as a short search query that would find the documents needed to answer it. ' + 'Reply with the query only.',
  USE_MESSAGE_TO_QUERY_PROMPT: false,
  RERANKER_BASE_URL: null,
  RERANKER_MODEL_NAME: null,
  AIMON_RERANKER_TASK_DEFINITION: null,
  PAGEFIND_ENABLED: false,
  PUBLIC_DATASET: { enabled: false },
  TOOL_CONFIGURATION: null,
});

/** The configuration a new dataset starts from on an instance whose default embedder is `model`. */
export function datasetDefaults(model: string): DatasetConfiguration {
  return { ...structuredClone(defaultConfiguration), EMBEDDING_MODEL_NAME: model };
}

/**
 * Fields that shape the stored vectors: they cannot change once a dataset holds chunks (vectors of
 * another model or size would not compare with them).
 */
export const vectorShapeFields = ['EMBEDDING_MODEL_NAME', 'EMBEDDING_SIZE', 'DISTANCE_METRIC'] as const satisfies readonly ConfigurationField[];

/**
 * Validates the configuration fields a request gives. A missing field is not in the result; a null
 * one takes its default. Throws 400 naming the first field that is unknown or has a wrong value.
 */
export function parseConfigurationInput(input: unknown, where = 'server_configuration'): Partial<DatasetConfiguration> {
  if (input === null || input === undefined) return {};
  if (typeof input !== 'object' || Array.isArray(input)) throw badRequest(`${where}: must be an object`);
  const result: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(input)) {
    if (!Object.hasOwn(fields, field)) throw badRequest(`${where}.${field}: not a configuration field`);
    const name = field as ConfigurationField;
    if (value === null) {
      result[name] = structuredClone(defaultConfiguration[name]);
      continue;
    }
    const parsed = fields[name].safeParse(value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const at = issue.path.length ? `.${issue.path.join('.')}` : '';
      throw badRequest(`${where}.${name}${at}: ${issue.message}, got ${JSON.stringify(value)}`);
    }
    result[name] = parsed.data;
  }
  return result as Partial<DatasetConfiguration>;
}

/** The configuration `changes` make of `base`: given fields replace stored ones, the rest stay. */
export function mergeConfiguration(base: DatasetConfiguration, changes: Partial<DatasetConfiguration>): DatasetConfiguration {
  const merged = { ...base, ...changes };
  const inService = (MODELS_IN_SERVICE as readonly string[]).includes(merged.EMBEDDING_MODEL_NAME);
  // A model the service runs means nothing to a remote endpoint.
  if (merged.EMBEDDING_BASE_URL && inService) {
    throw badRequest('server_configuration.EMBEDDING_MODEL_NAME: name the model of EMBEDDING_BASE_URL');
  }
  const embedderChanged = 'EMBEDDING_MODEL_NAME' in changes || 'EMBEDDING_BASE_URL' in changes;
  if (!merged.EMBEDDING_BASE_URL && !inService && embedderChanged) {
    throw badRequest(
      `server_configuration.EMBEDDING_MODEL_NAME: without EMBEDDING_BASE_URL it names a model the service runs ` +
        `(${MODELS_IN_SERVICE.join(' or ')}), got ${JSON.stringify(merged.EMBEDDING_MODEL_NAME)}`,
    );
  }
  if (merged.EMBEDDING_MODEL_NAME === LOCAL_MODEL.name && !merged.EMBEDDING_BASE_URL && merged.EMBEDDING_SIZE !== LOCAL_MODEL.dimension) {
    throw badRequest(
      `server_configuration.EMBEDDING_SIZE: ${LOCAL_MODEL.name} makes vectors of ${LOCAL_MODEL.dimension} numbers, got ${merged.EMBEDDING_SIZE}`,
    );
  }
  return merged;
}

/** A complete configuration from a stored one: fields missing or no longer valid read as their defaults. */
export function resolveStoredConfiguration(stored: unknown): DatasetConfiguration {
  const source = stored && typeof stored === 'object' && !Array.isArray(stored) ? (stored as Record<string, unknown>) : {};
  const result: Record<string, unknown> = {};
  for (const name of fieldNames) {
    const parsed = source[name] === undefined ? null : fields[name].safeParse(source[name]);
    result[name] = parsed?.success ? parsed.data : structuredClone(defaultConfiguration[name]);
  }
  return result as DatasetConfiguration;
}

// Resolved configurations by the stored object they came from: resolving validates every field, and
// one search asks for its dataset's configuration several times. Frozen, as callers share them.
const resolved = new WeakMap<object, DatasetConfiguration>();

/** The configuration a dataset runs with: its stored one, defaults filled in. */
export function datasetConfig(row: Pick<DatasetRow, 'server_configuration'>): DatasetConfiguration {
  const stored = row.server_configuration;
  if (!stored || typeof stored !== 'object') return resolveStoredConfiguration(stored);
  let config = resolved.get(stored);
  if (!config) {
    config = deepFreeze(resolveStoredConfiguration(stored));
    resolved.set(stored, config);
  }
  return config;
}

function deepFreeze<V>(value: V): V {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}
