// Picks the embedder a dataset's configuration asks for: its OpenAI-compatible endpoint when it
// names one, else the local model or the built-in hashing embedder, by EMBEDDING_MODEL_NAME.
import type { Logger } from 'pino';
import { ConfigError } from '../../config.js';
import type { OutboundSettings } from '../outbound.js';
import { BuiltinEmbedder } from './builtin.js';
import { LOCAL_MODEL } from './local/files.js';
import { localEmbedder } from './local/index.js';
import { OpenAiEmbedder } from './openai.js';
import type { Embedder } from './types.js';

export type { Embedder, EmbeddingPurpose } from './types.js';
export { EmbeddingError } from './types.js';

/** EMBEDDING_MODEL_NAME of the built-in hashing embedder. */
export const BUILTIN_MODEL = 'builtin';
/** The models that run in the service, without an endpoint: what EMBEDDING_MODEL_NAME may name then. */
export const MODELS_IN_SERVICE = [LOCAL_MODEL.name, BUILTIN_MODEL] as const;

export interface EmbeddingSettings {
  EMBEDDING_BASE_URL?: string | null;
  EMBEDDING_MODEL_NAME?: string | null;
  EMBEDDING_SIZE: number;
  EMBEDDING_QUERY_PREFIX?: string | null;
}

const builtins = new Map<number, BuiltinEmbedder>();

/** `outbound`: the service's configuration.outbound, which decides whether the instance key goes along. */
export function embedderFor(settings: EmbeddingSettings, outbound: OutboundSettings): Embedder {
  if (!settings.EMBEDDING_BASE_URL) {
    if (settings.EMBEDDING_MODEL_NAME === LOCAL_MODEL.name) return localEmbedder();
    // Any other name without an endpoint (the default before the local model, or a configuration
    // stored before names were checked) means the built-in embedder.
    let embedder = builtins.get(settings.EMBEDDING_SIZE);
    if (!embedder) builtins.set(settings.EMBEDDING_SIZE, (embedder = new BuiltinEmbedder(settings.EMBEDDING_SIZE)));
    return embedder;
  }
  return new OpenAiEmbedder({
    baseUrl: settings.EMBEDDING_BASE_URL,
    model: settings.EMBEDDING_MODEL_NAME ?? 'text-embedding-3-small',
    dimension: settings.EMBEDDING_SIZE,
    outbound,
    queryPrefix: settings.EMBEDDING_QUERY_PREFIX ?? '',
  });
}

/**
 * The model new datasets embed with when they name no endpoint, per DEFAULT_EMBEDDER: the local
 * model once it has embedded a probe (so a model that cannot run here is known at start), else the
 * built-in one. `local` insists: a model that does not run stops the start.
 */
export async function chooseDefaultEmbedder(setting: 'auto' | 'local' | 'builtin', logger: Logger): Promise<string> {
  if (setting === 'builtin') {
    logger.info(`embedder: ${BUILTIN_MODEL} (DEFAULT_EMBEDDER=builtin): hashed words, no model`);
    return BUILTIN_MODEL;
  }
  try {
    await localEmbedder().embed(['a probe of the local model'], 'document');
  } catch (error) {
    if (setting === 'local') throw new ConfigError(`DEFAULT_EMBEDDER=local: ${(error as Error).message}`);
    logger.warn(`embedder: ${BUILTIN_MODEL}, not ${LOCAL_MODEL.name}: ${(error as Error).message}; new datasets use the hashing embedder`);
    return BUILTIN_MODEL;
  }
  logger.info(`embedder: ${LOCAL_MODEL.name} (local, ${LOCAL_MODEL.dimension} dimensions, ${LOCAL_MODEL.dir})`);
  return LOCAL_MODEL.name;
}
