// Analytics events (table `analytics_events`; `events` holds a dataset's worker events): what users
// did (view, click, add_to_cart, purchase, filter_clicked), each possibly about a search, RAG call or
// recommendation by its id (request_id, request_type). A click names the clicked chunk and its
// position in typed columns, so that the CTR reports join and average without parsing `items`; the
// component an event came from (metadata.component_props.componentName) is a generated column.
// Indexes serve each report on a large dataset: listing by time (and by type), clicks by request,
// components and pages by name. user_id is kept as sent: experiments split events by joining
// experiment_user_assignments on it.
// A click on a RAG call marks that call clicked (rag_queries.has_clicks), by a trigger, so the RAG
// reports' has_clicks filter holds however the click was recorded.
import type { Knex } from 'knex';

export async function up(db: Knex): Promise<void> {
  await db.schema.createTable('analytics_events', (t) => {
    t.uuid('id').primary();
    t.uuid('dataset_id').notNullable().references('datasets.id').onDelete('CASCADE');
    t.text('event_type').notNullable();
    t.text('event_name').notNullable();
    t.uuid('request_id');
    t.text('request_type');
    t.specificType('items', 'text[]').notNullable();
    t.uuid('clicked_chunk_id');
    t.integer('position');
    t.double('revenue');
    t.text('location');
    t.jsonb('metadata');
    t.text('user_id');
    t.boolean('is_conversion').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
  });
  await db.raw(`
    alter table analytics_events
      add column component_name text generated always as (metadata #>> '{component_props,componentName}') stored,
      add constraint analytics_events_type check (event_type in ('view', 'click', 'add_to_cart', 'purchase', 'filter_clicked')),
      add constraint analytics_events_request check ((request_id is null) = (request_type is null)
        and (request_type is null or request_type in ('search', 'rag', 'recommendation')))`);
  await db.raw('create index analytics_events_time on analytics_events (dataset_id, created_at)');
  await db.raw('create index analytics_events_type_time on analytics_events (dataset_id, event_type, created_at)');
  await db.raw(`create index analytics_events_clicks on analytics_events (request_id, dataset_id) include (position, created_at)
    where event_type = 'click' and request_id is not null`);
  await db.raw('create index analytics_events_components on analytics_events (dataset_id, component_name, created_at) where component_name is not null');
  await db.raw('create index analytics_events_locations on analytics_events (dataset_id, location) where location is not null');
  await db.raw(`create index analytics_events_sessions on analytics_events (dataset_id, user_id, created_at)
    where event_name in ('component_open', 'component_close')`);

  await db.raw(`
    create function analytics_events_rag_clicks() returns trigger language plpgsql as $$
    begin
      update rag_queries r set has_clicks = true
        from new_rows e
        where e.event_type = 'click' and e.request_type = 'rag' and r.id = e.request_id and r.dataset_id = e.dataset_id
          and not r.has_clicks;
      return null;
    end $$`);
  await db.raw(`
    create trigger analytics_events_rag_clicks after insert on analytics_events
      referencing new table as new_rows for each statement execute function analytics_events_rag_clicks()`);
}

export async function down(db: Knex): Promise<void> {
  await db.raw('drop trigger if exists analytics_events_rag_clicks on analytics_events');
  await db.raw('drop function if exists analytics_events_rag_clicks()');
  await db.schema.dropTableIfExists('analytics_events');
}
