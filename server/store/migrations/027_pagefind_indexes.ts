// Builds of datasets' static Pagefind indexes. A build's id names the folder of its files in the
// file storage and in the URL they are served under; the newest `ready` build of a dataset is its index.
import type { Knex } from 'knex';

export async function up(db: Knex): Promise<void> {
  await db.schema.createTable('pagefind_indexes', (t) => {
    t.uuid('id').primary();
    t.uuid('dataset_id').notNullable().references('datasets.id').onDelete('CASCADE');
    /** building, ready, failed, or replaced (a newer build is ready; its files are removed). */
    t.text('status').notNullable();
    t.integer('records');
    t.integer('files');
    t.text('failure_reason');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
    t.timestamp('finished_at', { useTz: true });
    t.index(['dataset_id', 'created_at']);
  });
}

export async function down(db: Knex): Promise<void> {
  await db.schema.dropTableIfExists('pagefind_indexes');
}
