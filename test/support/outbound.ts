// Tests' stand-in servers (embeddings, rerankers, webhooks) listen on 127.0.0.1, a loopback address
// the service refuses to reach unless the operator allows it: these settings allow it.
import type { OutboundSettings } from '../../server/engines/outbound.js';

/** The environment a test service needs to reach local stand-ins. */
export const ALLOW_LOCAL_STAND_INS = { OUTBOUND_ALLOW_PRIVATE: '127.0.0.1' } as const;

/** The same, for a seam used directly: stand-ins as tenants' URLs, no instance endpoint. */
export const localStandIns: OutboundSettings = Object.freeze({ allowPrivate: ['127.0.0.1'], embedding: null, reranker: null, llm: null });
