// Dataset events (what background work reports to the dataset's owners) and file processing state.
// events.dataset_id has no foreign key: a purge deletes a dataset's events itself, and a failed purge
// keeps its `dataset_delete_failed` event.
import type { Knex } from 'knex';

export async function up(db: Knex): Promise<void> {
  await db.schema.createTable('events', (t) => {
    t.uuid('id').primary().defaultTo(db.raw('gen_random_uuid()'));
    t.uuid('dataset_id').notNullable();
    t.uuid('organization_id');
    t.text('event_type').notNullable();
    t.jsonb('event_data').notNullable().defaultTo('{}');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
    t.index(['dataset_id', 'created_at']);
    // Listing by kind, and the distinct kinds of a dataset.
    t.index(['dataset_id', 'event_type', 'created_at']);
    t.index(['organization_id']);
  });
  await db.schema.alterTable('files', (t) => {
    /** pending -> processing -> completed | failed; pending and processing make the file queue. */
    t.text('status').notNullable().defaultTo('completed');
  });
}

export async function down(db: Knex): Promise<void> {
  await db.schema.alterTable('files', (t) => t.dropColumn('status'));
  await db.schema.dropTableIfExists('events');
}
