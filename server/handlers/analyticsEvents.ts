// Handlers of the analytics event and click-through operations; the rules are in
// domain/analyticsEvents/. Reports first wait for the events queued for writing, so a report
// includes every event recorded before it was asked for.
import type {
  GetAllEventsHandler,
  GetComponentAnalyticsHandler,
  GetCtrAnalyticsHandler,
  GetEventByIdHandler,
  SendCtrDataHandler,
  SendEventDataHandler,
} from '../../generated/handlers.js';
import { componentReport } from '../domain/analyticsEvents/components.js';
import { ctrReport } from '../domain/analyticsEvents/ctr.js';
import { getEvent, listEvents } from '../domain/analyticsEvents/events.js';
import { recordClick, recordEvent } from '../domain/analyticsEvents/record.js';
import type { Services } from '../services.js';

async function written(services: Services) {
  await services.deferred.flush();
  return services.store.db;
}

export const send_event_data: SendEventDataHandler = async ({ body, dataset, services }) => {
  await recordEvent(services, dataset, body);
  return { status: 204, body: undefined };
};

export const send_ctr_data: SendCtrDataHandler = async ({ body, dataset, services }) => {
  await recordClick(services, dataset, body);
  return { status: 204, body: undefined };
};

export const get_all_events: GetAllEventsHandler = async ({ body, dataset, services }) => ({
  status: 200,
  body: await listEvents(await written(services), dataset.id, body),
});

export const get_event_by_id: GetEventByIdHandler = async ({ path, dataset, services }) => ({
  status: 200,
  body: await getEvent(await written(services), dataset.id, path.event_id),
});

export const get_ctr_analytics: GetCtrAnalyticsHandler = async ({ body, dataset, services }) => ({
  status: 200,
  body: await ctrReport(await written(services), dataset.id, body),
});

export const get_component_analytics: GetComponentAnalyticsHandler = async ({ body, dataset, services }) => ({
  status: 200,
  body: await componentReport(await written(services), dataset.id, body),
});
