// The key of each public dataset's page: a read-only key of the organization limited to the dataset,
// kept here with its secret, which the page publishes (so it is no secret worth hashing). The row
// goes with the key when the key is deleted, and with the dataset.
import type { Knex } from 'knex';

export async function up(db: Knex): Promise<void> {
  await db.schema.createTable('public_page_keys', (t) => {
    t.uuid('dataset_id').primary().references('datasets.id').onDelete('CASCADE');
    t.uuid('api_key_id').notNullable().unique().references('api_keys.id').onDelete('CASCADE');
    t.text('api_key').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
  });
}

export async function down(db: Knex): Promise<void> {
  await db.schema.dropTableIfExists('public_page_keys');
}
