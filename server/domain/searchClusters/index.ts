// Search query clusters (POST /api/analytics/search/cluster): the topics of a dataset's recent
// searches, made by the searchClusters workflow (build.ts), and the searches of one topic.
import type { Knex } from 'knex';
import type * as T from '../../../sdk/src/generated/types.gen.js';
import { notFound } from '../../errors.js';
import { timestamp } from '../../format.js';
import { dateBounds } from '../dateRange.js';
import { searchRecord } from '../searchAnalytics/records.js';
import { chunksByIds } from '../searchAnalytics/store.js';
import * as store from './store.js';

export async function clusterAnalytics(db: Knex, datasetId: string, request: T.ClusterAnalytics): Promise<T.ClusterAnalyticsResponse> {
  if (request.type === 'cluster_topics') {
    const rows = await store.clusterTopics(db, datasetId, dateBounds(request.filter?.date_range, 'filter.date_range'));
    return { clusters: rows.map(topicRecord) };
  }
  if (!(await store.clusterExists(db, datasetId, request.cluster_id))) throw notFound(`cluster ${request.cluster_id} not found`);
  const rows = await store.clusterSearches(db, datasetId, request.cluster_id, Math.max(request.page ?? 1, 1));
  const chunks = await chunksByIds(
    db,
    datasetId,
    rows.flatMap((r) => r.results),
  );
  return { queries: rows.map((row) => searchRecord(row, chunks)) };
}

function topicRecord(row: store.ClusterRow): T.SearchClusterTopics {
  return {
    id: row.id,
    dataset_id: row.dataset_id,
    topic: row.topic,
    density: row.density,
    avg_score: Number(row.avg_score),
    created_at: timestamp(row.created_at),
  };
}
