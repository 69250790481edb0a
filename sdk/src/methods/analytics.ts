// Analytics of the dataset's RAG queries.
import type { ChunkSearch } from '../chunk-search.js';
import { unwrap } from '../errors.js';
import * as api from '../generated/sdk.gen.js';
import type * as T from '../generated/types.gen.js';
import { datasetHeaders, reading } from '../scope.js';

/** The dataset's RAG queries, one or a page of them: `POST /api/analytics/rag`. */
export function getRagAnalytics(this: ChunkSearch, data: T.RagAnalytics, signal?: AbortSignal) {
  return unwrap(api.getRagAnalytics({ ...reading(this, signal), headers: datasetHeaders(this), body: data }));
}
