// What a crawl's runs need: why the last run failed, its progress, and the pages each run stored
// (their chunks' tracking ids), so that a run can delete the chunks of pages gone since the one before.
import type { Knex } from 'knex';

export async function up(db: Knex): Promise<void> {
  await db.schema.alterTable('crawl_requests', (t) => {
    t.text('failure_reason');
    t.integer('pages_seen').notNullable().defaultTo(0);
    t.integer('pages_stored').notNullable().defaultTo(0);
  });
  await db.schema.createTable('crawl_pages', (t) => {
    t.uuid('crawl_id').notNullable().references('crawl_requests.id').onDelete('CASCADE');
    t.text('url').notNullable();
    /** The run (the crawl's attempt_number) that last stored the page. */
    t.integer('run').notNullable();
    t.specificType('tracking_ids', 'text[]').notNullable();
    t.primary(['crawl_id', 'url']);
  });
}

export async function down(db: Knex): Promise<void> {
  await db.schema.dropTableIfExists('crawl_pages');
  await db.schema.alterTable('crawl_requests', (t) => {
    t.dropColumn('failure_reason');
    t.dropColumn('pages_seen');
    t.dropColumn('pages_stored');
  });
}
