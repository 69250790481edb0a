// Reading recorded events: one by id, or a filtered page (get_event_by_id, get_all_events).
import type { Knex } from 'knex';
import type * as T from '../../../sdk/src/generated/types.gen.js';
import { notFound } from '../../errors.js';
import { timestamp } from '../../format.js';
import { dateBounds } from '../dateRange.js';
import { metadataMatch, offsetOf } from './filters.js';
import { type EventRow, type EventScope, eventById, eventsPage } from './store.js';

export async function getEvent(db: Knex, datasetId: string, eventId: string): Promise<T.EventData> {
  const row = await eventById(db, datasetId, eventId);
  if (!row) throw notFound(`event ${eventId} not found`);
  return eventRecord(row);
}

export async function listEvents(db: Knex, datasetId: string, request: T.GetEventsRequestBody): Promise<T.GetEventsResponseBody> {
  const rows = await eventsPage(db, datasetId, eventScopeOf(request.filter), offsetOf(request.page));
  return { events: rows.map(eventRecord) };
}

/** The events an event filter keeps; 400 when its date range or metadata filter is malformed. */
export function eventScopeOf(filter: T.EventAnalyticsFilter | null | undefined): EventScope {
  const scope: EventScope = dateBounds(filter?.date_range, 'filter.date_range');
  if (filter?.event_type != null) scope.eventType = filter.event_type;
  if (filter?.is_conversion != null) scope.isConversion = filter.is_conversion;
  if (filter?.user_id != null) scope.userId = filter.user_id;
  if (filter?.metadata_filter != null) scope.metadata = metadataMatch(filter.metadata_filter, 'filter.metadata_filter');
  return scope;
}

export function eventRecord(row: EventRow): T.EventData {
  return {
    id: row.id,
    dataset_id: row.dataset_id,
    event_type: row.event_type,
    event_name: row.event_name,
    items: row.items,
    is_conversion: row.is_conversion,
    metadata: row.metadata ?? null,
    request_id: row.request_id,
    request_type: row.request_type,
    user_id: row.user_id,
    location: row.location,
    created_at: timestamp(row.created_at),
    updated_at: timestamp(row.updated_at),
  };
}
