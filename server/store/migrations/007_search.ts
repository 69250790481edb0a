// Search analytics: one row per search, read by the analytics operations.
import type { Knex } from 'knex';

export async function up(db: Knex): Promise<void> {
  await db.schema.createTable('search_queries', (t) => {
    t.uuid('id').primary();
    t.uuid('dataset_id').notNullable().references('datasets.id').onDelete('CASCADE');
    t.text('search_type').notNullable();
    t.text('query').notNullable();
    t.jsonb('request_params').notNullable();
    t.double('latency_ms').notNullable();
    t.double('top_score').notNullable().defaultTo(0);
    t.specificType('results', 'uuid[]').notNullable();
    t.text('user_id');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
    t.index(['dataset_id', 'created_at']);
  });
}

export async function down(db: Knex): Promise<void> {
  await db.schema.dropTableIfExists('search_queries');
}
