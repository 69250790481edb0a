// Picks the embedder a dataset's configuration asks for.
import type { OutboundSettings } from '../outbound.js';
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

/** `outbound`: the service's configuration.outbound, which decides whether the instance key goes along. */
export function embedderFor(settings: EmbeddingSettings, outbound: OutboundSettings): Embedder {
  if (!settings.EMBEDDING_BASE_URL) {
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
