// What a chunk needs beyond its record: the inputs its vector and index entry are derived from (so
// an update can derive them again), and its dense vector. Each dataset gets its own partial HNSW
// index over `chunk_vectors` (see server/store/vectors.ts), sized and typed by its configuration.
import type { Knex } from 'knex';

export async function up(db: Knex): Promise<void> {
  await db.schema.alterTable('chunks', (t) => {
    t.boolean('convert_html_to_text').notNullable().defaultTo(true);
    t.text('semantic_content');
    t.text('fulltext_content');
    t.jsonb('fulltext_boost');
    t.jsonb('semantic_boost');
    t.boolean('split_avg').notNullable().defaultTo(false);
  });
  await db.schema.createTable('chunk_vectors', (t) => {
    t.uuid('chunk_id').primary().references('chunks.id').onDelete('CASCADE');
    t.uuid('dataset_id').notNullable();
    t.specificType('embedding', 'vector').notNullable();
  });
  await db.raw('create index chunks_dataset_id_id on chunks (dataset_id, id)');
}

export async function down(db: Knex): Promise<void> {
  await db.raw('drop index if exists chunks_dataset_id_id');
  await db.schema.dropTableIfExists('chunk_vectors');
  await db.schema.alterTable('chunks', (t) => {
    for (const column of ['convert_html_to_text', 'semantic_content', 'fulltext_content', 'fulltext_boost', 'semantic_boost', 'split_avg'])
      t.dropColumn(column);
  });
}
