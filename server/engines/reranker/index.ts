// Picks the reranker a dataset's configuration names (RERANKER_BASE_URL), or none.
import type { OutboundSettings } from '../outbound.js';
import { HttpReranker } from './http.js';
import type { Reranker } from './types.js';

export type { Reranker } from './types.js';
export { RerankerError } from './types.js';

export interface RerankerSettings {
  RERANKER_BASE_URL: string | null;
  RERANKER_MODEL_NAME: string | null;
}

/** The dataset's reranker, or null when it configures none. `outbound`: the service's configuration.outbound. */
export function rerankerFor(settings: RerankerSettings, outbound: OutboundSettings): Reranker | null {
  if (!settings.RERANKER_BASE_URL) return null;
  return new HttpReranker({ baseUrl: settings.RERANKER_BASE_URL, model: settings.RERANKER_MODEL_NAME, outbound });
}
