// Click-through reports (get_ctr_analytics): how many searches or recommendations were clicked and
// where, and lists of those with and without clicks.
import type { Knex } from 'knex';
import type * as T from '../../../sdk/src/generated/types.gen.js';
import { timestamp } from '../../format.js';
import { chunkRecord } from '../chunks/records.js';
import { recommendationScope } from '../recommendationAnalytics/scope.js';
import { scopeOf } from '../searchAnalytics/scope.js';
import { offsetOf } from './filters.js';
import { type ClickRow, chunksByIds, clicksPage, ctrFigures, unclickedPage } from './store.js';

export async function ctrReport(db: Knex, datasetId: string, request: T.CtrAnalytics): Promise<T.CtrAnalyticsResponse> {
  switch (request.type) {
    case 'search_ctr_metrics': {
      const figures = await ctrFigures(db, 'search', datasetId, scopeOf(datasetId, request.filter));
      const [withClicks, without] = percents(figures.clicked, figures.requests);
      return {
        searches_with_clicks: figures.clicked,
        percent_searches_with_clicks: withClicks,
        percent_searches_without_clicks: without,
        avg_position_of_click: figures.averagePosition ?? 0,
      };
    }
    case 'recommendation_ctr_metrics': {
      const figures = await ctrFigures(db, 'recommendation', datasetId, recommendationScope(request.filter));
      const [withClicks, without] = percents(figures.clicked, figures.requests);
      return {
        recommendations_with_clicks: figures.clicked,
        percent_recommendations_with_clicks: withClicks,
        percent_recommendations_without_clicks: without,
        avg_position_of_click: figures.averagePosition ?? 0,
      };
    }
    case 'searches_with_clicks': {
      const rows = await clicksPage(db, 'search', datasetId, scopeOf(datasetId, request.filter), offsetOf(request.page));
      const chunks = await clickedChunks(db, datasetId, rows);
      return {
        queries: rows.map((row) => ({
          query: row.query ?? '',
          results: row.results,
          clicked_chunk: chunks(row),
          request_id: row.request_id,
          created_at: timestamp(row.created_at),
        })),
      };
    }
    case 'recommendations_with_clicks': {
      const rows = await clicksPage(db, 'recommendation', datasetId, recommendationScope(request.filter), offsetOf(request.page));
      const chunks = await clickedChunks(db, datasetId, rows);
      return {
        recommendations: rows.map((row) => ({
          ...examples(row),
          results: row.results,
          clicked_chunk: chunks(row),
          request_id: row.request_id,
          created_at: timestamp(row.created_at),
        })),
      };
    }
    case 'searches_without_clicks': {
      const rows = await unclickedPage(db, 'search', datasetId, scopeOf(datasetId, request.filter), offsetOf(request.page));
      return { queries: rows.map((row) => ({ query: row.query ?? '', request_id: row.id, created_at: timestamp(row.created_at) })) };
    }
    case 'recommendations_without_clicks': {
      const rows = await unclickedPage(db, 'recommendation', datasetId, recommendationScope(request.filter), offsetOf(request.page));
      return { recommendations: rows.map((row) => ({ ...examples(row), request_id: row.id, created_at: timestamp(row.created_at) })) };
    }
  }
}

/** The shares (percent) with and without clicks; 0 and 0 when there is nothing to share. */
function percents(clicked: number, total: number): [number, number] {
  if (total === 0) return [0, 0];
  return [(clicked * 100) / total, ((total - clicked) * 100) / total];
}

function examples(row: Pick<ClickRow, 'positive_ids' | 'negative_ids' | 'positive_tracking_ids' | 'negative_tracking_ids'>) {
  return {
    positive_ids: row.positive_ids ?? [],
    negative_ids: row.negative_ids ?? [],
    positive_tracking_ids: row.positive_tracking_ids ?? [],
    negative_tracking_ids: row.negative_tracking_ids ?? [],
  };
}

/** The clicked chunk of each click, with its position (the page's rows only name chunks still in the dataset). */
async function clickedChunks(db: Knex, datasetId: string, rows: ClickRow[]): Promise<(row: ClickRow) => T.ChunkMetadataWithPosition> {
  const chunks = await chunksByIds(db, datasetId, [...new Set(rows.map((row) => row.clicked_chunk_id))]);
  return (row) => ({ chunk: chunkRecord(chunks.get(row.clicked_chunk_id)!), position: row.position });
}
