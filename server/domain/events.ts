// Dataset events: what background work (file ingestion, crawls, deletions, clears...) reports to
// a dataset's owners, read back through POST /api/dataset/events.
import type { Knex } from 'knex';
import type * as T from '../../sdk/src/generated/types.gen.js';
import { timestamp } from '../format.js';
import { datasetEvents } from '../metrics.js';

/** Every kind of event; the contract's EventTypeRequest lists the same. */
export const eventTypes = [
  'file_uploaded',
  'file_upload_failed',
  'chunks_uploaded',
  'chunk_action_failed',
  'chunk_updated',
  'bulk_chunks_deleted',
  'chunk_update_failed',
  'dataset_delete_failed',
  'qdrant_upload_failed',
  'bulk_chunk_upload_failed',
  'group_chunks_updated',
  'group_chunks_action_failed',
  'crawl_completed',
  'crawl_failed',
  'crawl_started',
  'csv_jsonl_processing_failed',
  'csv_jsonl_processing_checkpoint',
  'csv_jsonl_processing_completed',
  'video_uploaded',
  'pagefind_indexing_started',
  'pagefind_indexing_finished',
  'etl_started',
  'etl_completed',
  'etl_failed',
] as const;

export type EventType = (typeof eventTypes)[number];

export interface NewEvent {
  datasetId: string;
  /** The dataset's organization; when undefined it is read from the dataset row. */
  organizationId?: string | null;
  type: EventType;
  data: Record<string, unknown>;
}

interface EventRow {
  id: string;
  dataset_id: string;
  organization_id: string | null;
  event_type: string;
  event_data: unknown;
  created_at: Date;
}

/**
 * Records an event of a dataset. Without an organization id the event takes the dataset row's,
 * and is not recorded at all when that row is gone (a dataset purged meanwhile has no reader).
 * Returns whether it was recorded.
 */
export async function emitEvent(db: Knex, event: NewEvent): Promise<boolean> {
  const data = JSON.stringify(event.data ?? {});
  if (event.organizationId !== undefined) {
    await db('events').insert({ dataset_id: event.datasetId, organization_id: event.organizationId, event_type: event.type, event_data: data });
  } else {
    const { rows } = await db.raw<{ rows: unknown[] }>(
      `insert into events (dataset_id, organization_id, event_type, event_data)
       select id, organization_id, ?, ?::jsonb from datasets where id = ?
       returning id`,
      [event.type, data, event.datasetId],
    );
    if (rows.length === 0) return false;
  }
  datasetEvents.inc({ event_type: event.type });
  return true;
}

export interface EventPage {
  page: number;
  pageSize: number;
  types?: EventType[] | null;
}

/** A page of the dataset's events, newest first, with the distinct types the dataset has events of. */
export async function listEvents(db: Knex, datasetId: string, request: EventPage): Promise<T.EventReturn> {
  const filtered = db<EventRow>('events').where({ dataset_id: datasetId });
  if (request.types && request.types.length > 0) filtered.whereIn('event_type', request.types);
  const [{ count }] = await filtered.clone().count<{ count: string }[]>('* as count');
  const rows = await filtered
    .clone()
    .orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])
    .limit(request.pageSize)
    .offset((request.page - 1) * request.pageSize);
  const types = await db('events').where({ dataset_id: datasetId }).distinct('event_type').orderBy('event_type').pluck('event_type');
  return {
    events: rows.map(eventRecord),
    event_types: types,
    page_count: Math.ceil(Number(count) / request.pageSize),
  };
}

function eventRecord(row: EventRow): T.WorkerEvent {
  return {
    id: row.id,
    dataset_id: row.dataset_id,
    organization_id: row.organization_id,
    event_type: row.event_type,
    event_data: JSON.stringify(row.event_data ?? {}),
    created_at: timestamp(row.created_at),
  };
}
