// Recommendation analytics: one row per chunk or group recommendation, read by the analytics
// operations. Example ids are chunk ids (type Chunk) or group ids (type Group), as the request named them.
import type { Knex } from 'knex';

export async function up(db: Knex): Promise<void> {
  await db.schema.createTable('recommendation_queries', (t) => {
    t.uuid('id').primary();
    t.uuid('dataset_id').notNullable().references('datasets.id').onDelete('CASCADE');
    t.text('recommendation_type').notNullable();
    t.specificType('positive_ids', 'uuid[]').notNullable();
    t.specificType('negative_ids', 'uuid[]').notNullable();
    t.specificType('positive_tracking_ids', 'text[]').notNullable();
    t.specificType('negative_tracking_ids', 'text[]').notNullable();
    t.jsonb('request_params').notNullable();
    t.jsonb('results').notNullable();
    t.double('top_score').notNullable().defaultTo(0);
    t.double('latency_ms').notNullable();
    t.text('user_id');
    t.jsonb('metadata');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
    t.index(['dataset_id', 'created_at']);
  });
  await db.raw(`alter table recommendation_queries add constraint recommendation_queries_type check (recommendation_type in ('Chunk', 'Group'))`);
}

export async function down(db: Knex): Promise<void> {
  await db.schema.dropTableIfExists('recommendation_queries');
}
