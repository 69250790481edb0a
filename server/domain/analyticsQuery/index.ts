// The generic analytics query (POST /api/analytics): the body checked and compiled for the
// dataset (compile.ts), then run (store.ts). Records still queued for writing are written first, so
// the answer includes what was recorded before it was asked for.
import type * as T from '../../../sdk/src/generated/types.gen.js';
import type { AnalyticsStore } from '../searchAnalytics/index.js';
import { compile } from './compile.js';
import { runQuery } from './store.js';

export async function analyticsQuery(at: AnalyticsStore, datasetId: string, query: T.AnalyticsQuery): Promise<Record<string, unknown>[]> {
  const compiled = compile(query, datasetId);
  await at.pending();
  return runQuery(at.db, compiled);
}
