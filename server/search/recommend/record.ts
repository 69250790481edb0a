// Every recommendation is recorded for analytics (table `recommendation_queries`), unless the dataset
// disables analytics; its id is returned either way, as searches do. Like search records, the row is
// written after the answer (services.deferred).
import { randomUUID } from 'node:crypto';
import { datasetConfig } from '../../domain/datasetConfig.js';
import type { DatasetRow } from '../../domain/datasets.js';
import type { Services } from '../../services.js';
import type { ExampleNames } from './examples.js';

export interface RecommendationRecord {
  type: 'Chunk' | 'Group';
  names: ExampleNames;
  request: { user_id?: string | null; metadata?: unknown };
  results: unknown[];
  topScore: number;
  started: number;
}

export function recordRecommendation(services: Services, dataset: DatasetRow, record: RecommendationRecord): string {
  const id = randomUUID();
  if (datasetConfig(dataset).DISABLE_ANALYTICS) return id;
  const { names, request } = record;
  services.deferred.insert('recommendation_queries', {
    id,
    dataset_id: dataset.id,
    recommendation_type: record.type,
    positive_ids: names.positiveIds,
    negative_ids: names.negativeIds,
    positive_tracking_ids: names.positiveTrackingIds,
    negative_tracking_ids: names.negativeTrackingIds,
    request_params: JSON.stringify(request),
    results: JSON.stringify(record.results),
    top_score: record.topScore,
    latency_ms: performance.now() - record.started,
    user_id: request.user_id ?? null,
    metadata: request.metadata === undefined ? null : JSON.stringify(request.metadata),
  });
  return id;
}
