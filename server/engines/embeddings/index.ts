// Picks the embedder a dataset's configuration asks for.
import { BuiltinEmbedder } from './builtin.js';
import { OpenAiEmbedder } from './openai.js';
import type { Embedder } from './types.js';

export type { Embedder, EmbeddingPurpose } from './types.js';
export { EmbeddingError } from './types.js';

export interface EmbeddingSettings {
  EMBEDDING_BASE_URL?: string | null;
  EMBEDDING_MODEL_NAME?: string | null;
  EMBEDDING_SIZE: number;
  EMBEDDING_QUERY_PREFIX?: string | null;
}

const builtins = new Map<number, BuiltinEmbedder>();

export function embedderFor(settings: EmbeddingSettings, apiKey?: string | null): Embedder {
  if (!settings.EMBEDDING_BASE_URL) {
    let embedder = builtins.get(settings.EMBEDDING_SIZE);
    if (!embedder) builtins.set(settings.EMBEDDING_SIZE, (embedder = new BuiltinEmbedder(settings.EMBEDDING_SIZE)));
    return embedder;
  }
  return new OpenAiEmbedder({
    baseUrl: settings.EMBEDDING_BASE_URL,
    model: settings.EMBEDDING_MODEL_NAME ?? 'text-embedding-3-small',
    dimension: settings.EMBEDDING_SIZE,
    apiKey,
    queryPrefix: settings.EMBEDDING_QUERY_PREFIX ?? '',
  });
}
