// Recording analytics events and clicks (send_event_data, send_ctr_data). The input is checked and
// the records it names looked up first, so bad input is refused with nothing recorded; the row is
// then queued on the deferred writer (services.deferred), written after the answer in a batch, so
// recording never holds up a request. Searches and recommendations are recorded the same deferred
// way, so the search a click names may still be queued: when it is not found, the queue is flushed
// and it is looked up again before the click is refused. Datasets with DISABLE_ANALYTICS record nothing.
import { randomUUID } from 'node:crypto';
import type * as T from '../../../sdk/src/generated/types.gen.js';
import { badRequest, notFound } from '../../errors.js';
import type { Services } from '../../services.js';
import { datasetConfig } from '../datasetConfig.js';
import type { DatasetRow } from '../datasets.js';
import { ragQueryRow } from '../rag/records.js';
import { chunkIdOf, hasRequest, type NewEventRow, type RequestType } from './store.js';

type UserEvent = Extract<T.EventTypes, { event_type: 'view' | 'add_to_cart' | 'click' | 'purchase' | 'filter_clicked' }>;

export async function recordEvent(services: Services, dataset: DatasetRow, event: T.EventTypes): Promise<void> {
  switch (event.event_type) {
    case 'search':
      return queue(services, dataset, 'search_queries', searchRow(dataset.id, event));
    case 'rag':
      return queue(services, dataset, 'rag_queries', ragRow(dataset.id, event));
    case 'recommendation':
      return queue(services, dataset, 'recommendation_queries', recommendationRow(dataset.id, event));
    default:
      return queue(services, dataset, 'analytics_events', await userEventRow(services, dataset.id, event));
  }
}

export async function recordClick(services: Services, dataset: DatasetRow, click: T.CtrDataRequestBody): Promise<void> {
  const chunk =
    click.clicked_chunk_id != null
      ? { id: click.clicked_chunk_id }
      : click.clicked_chunk_tracking_id != null
        ? { tracking_id: click.clicked_chunk_tracking_id }
        : undefined;
  if (!chunk) throw badRequest('clicked_chunk_id or clicked_chunk_tracking_id: name the chunk that was clicked');
  await requireRequest(services, dataset.id, click.ctr_type, click.request_id);
  const chunkId = await requireChunk(services, dataset.id, chunk);
  queue(services, dataset, 'analytics_events', {
    ...eventBase(dataset.id, 'click', 'click'),
    request_id: click.request_id,
    request_type: click.ctr_type,
    items: [JSON.stringify({ chunk_id: chunkId, position: click.position })],
    clicked_chunk_id: chunkId,
    position: click.position,
    metadata: jsonOrNull(click.metadata),
    is_conversion: true,
  });
}

function queue(services: Services, dataset: DatasetRow, table: string, row: Record<string, unknown>): void {
  if (!datasetConfig(dataset).DISABLE_ANALYTICS) services.deferred.insert(table, row);
}

async function userEventRow(services: Services, datasetId: string, event: UserEvent): Promise<NewEventRow> {
  if (event.request) await requireRequest(services, datasetId, event.request.request_type, event.request.request_id);
  const row: NewEventRow = {
    ...eventBase(datasetId, event.event_type, event.event_name),
    request_id: event.request?.request_id ?? null,
    request_type: event.request?.request_type ?? null,
    location: event.location ?? null,
    user_id: event.user_id ?? null,
    is_conversion: event.event_type === 'view' ? false : (event.is_conversion ?? true),
  };
  switch (event.event_type) {
    case 'view':
    case 'add_to_cart':
      return { ...row, items: event.items, metadata: jsonOrNull(event.metadata) };
    case 'purchase':
      return {
        ...row,
        items: event.items.map((item) => JSON.stringify(item)),
        revenue: event.items.reduce((sum, item) => sum + item.revenue, 0),
        metadata: jsonOrNull(event.metadata),
      };
    case 'filter_clicked':
      return { ...row, metadata: JSON.stringify(event.items) };
    case 'click': {
      const clicked = event.clicked_items;
      if (!clicked) return { ...row, metadata: jsonOrNull(event.metadata) };
      const chunkId = await requireChunk(services, datasetId, { id: clicked.chunk_id });
      return {
        ...row,
        items: [JSON.stringify({ chunk_id: chunkId, position: clicked.position })],
        clicked_chunk_id: chunkId,
        position: clicked.position,
        metadata: jsonOrNull(event.metadata),
      };
    }
  }
}

function eventBase(datasetId: string, type: string, name: string): NewEventRow {
  return {
    id: randomUUID(),
    dataset_id: datasetId,
    event_type: type,
    event_name: name,
    request_id: null,
    request_type: null,
    items: [],
    clicked_chunk_id: null,
    position: null,
    revenue: null,
    location: null,
    metadata: null,
    user_id: null,
    is_conversion: true,
  };
}

/** 404 unless the dataset has the search, RAG call or recommendation (flushing queued records once if need be). */
async function requireRequest(services: Services, datasetId: string, type: RequestType, id: string): Promise<void> {
  const db = services.store.db;
  if (await hasRequest(db, datasetId, type, id)) return;
  await services.deferred.flush();
  if (!(await hasRequest(db, datasetId, type, id))) throw notFound(`${type} ${id} not found`);
}

async function requireChunk(services: Services, datasetId: string, by: { id: string } | { tracking_id: string }): Promise<string> {
  const id = await chunkIdOf(services.store.db, datasetId, by);
  if (!id) throw notFound(`chunk ${'id' in by ? by.id : `with tracking id ${by.tracking_id}`} not found`);
  return id;
}

const SEARCH_KIND_PREFIX = { search: '', autocomplete: 'autocomplete_', search_over_groups: 'search_over_groups_', rag: 'rag_' } as const;

function searchRow(datasetId: string, event: Extract<T.EventTypes, { event_type: 'search' }>): Record<string, unknown> {
  const params = objectOr(event.request_params, 'request_params');
  const kind = event.search_type ?? 'search';
  const method = typeof params.search_type === 'string' ? params.search_type : undefined;
  if (event.metadata != null && params.metadata === undefined) params.metadata = event.metadata;
  return {
    id: randomUUID(),
    dataset_id: datasetId,
    search_type: method ? `${SEARCH_KIND_PREFIX[kind]}${method}` : kind,
    query: event.query,
    request_params: JSON.stringify(params),
    latency_ms: event.latency ?? 0,
    top_score: event.top_score ?? 0,
    results: (event.results ?? []).map((result, i) => resultId(result, `results[${i}]`)),
    user_id: event.user_id ?? null,
    ...ratingColumns(event.query_rating),
  };
}

function ratingColumns(rating: T.EventQueryRating | null | undefined): Record<string, unknown> {
  if (!rating) return {};
  return { query_rating: rating.rating, query_rating_note: rating.note ?? null, query_rating_metadata: jsonOrNull(rating.metadata) };
}

function ragRow(datasetId: string, event: Extract<T.EventTypes, { event_type: 'rag' }>): Record<string, unknown> {
  return {
    ...ragQueryRow({
      id: randomUUID(),
      datasetId,
      ragType: event.rag_type ?? 'chosen_chunks',
      searchId: event.search_id ?? undefined,
      topicId: event.topic_id ?? undefined,
      userId: event.user_id,
      userMessage: event.user_message,
      llmResponse: event.llm_response ?? '',
      results: event.results ?? [],
      topScore: 0,
      hallucinationScore: event.hallucination_score ?? 0,
      detectedHallucinations: event.detected_hallucinations ?? [],
      metadata: event.metadata,
    }),
    ...ratingColumns(event.query_rating),
  };
}

function recommendationRow(datasetId: string, event: Extract<T.EventTypes, { event_type: 'recommendation' }>): Record<string, unknown> {
  const params = objectOr(event.request_params, 'request_params');
  if (event.metadata != null && params.metadata === undefined) params.metadata = event.metadata;
  return {
    id: randomUUID(),
    dataset_id: datasetId,
    recommendation_type: event.recommendation_type ?? 'Chunk',
    positive_ids: event.positive_ids ?? [],
    negative_ids: event.negative_ids ?? [],
    positive_tracking_ids: event.positive_tracking_ids ?? [],
    negative_tracking_ids: event.negative_tracking_ids ?? [],
    request_params: JSON.stringify(params),
    results: JSON.stringify(event.results ?? []),
    top_score: event.top_score ?? 0,
    latency_ms: 0,
    user_id: event.user_id ?? null,
    metadata: jsonOrNull(event.metadata),
  };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A search result as the id of its chunk: an id, or an object with an `id` (or a `chunk` with one). */
function resultId(result: unknown, field: string): string {
  const candidate =
    typeof result === 'string'
      ? result
      : (idOf(result) ?? idOf((result as { chunk?: unknown } | null)?.chunk) ?? idOf((result as { metadata?: unknown[] } | null)?.metadata?.[0]));
  if (typeof candidate !== 'string' || !UUID.test(candidate)) throw badRequest(`${field}: a chunk id, or a result with the chunk's id`);
  return candidate;
}

function idOf(value: unknown): unknown {
  return typeof value === 'object' && value !== null ? (value as { id?: unknown }).id : undefined;
}

function objectOr(value: unknown, field: string): Record<string, unknown> {
  if (value == null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw badRequest(`${field}: an object (the request as it was sent)`);
  return { ...(value as Record<string, unknown>) };
}

function jsonOrNull(value: unknown): string | null {
  return value === undefined || value === null ? null : JSON.stringify(value);
}
