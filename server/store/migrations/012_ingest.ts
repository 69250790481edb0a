// File ingestion's staging: the pieces a file was split into (one per chunk to create, in file
// order), written once by the splitting step and read back batch by batch by the chunk-creating
// steps, so large files never travel through workflow history and a retried batch reads the same
// pieces. Rows go when the ingestion ends, or with their file.
import type { Knex } from 'knex';

export async function up(db: Knex): Promise<void> {
  await db.schema.createTable('ingest_pieces', (t) => {
    t.uuid('file_id').notNullable().references('files.id').onDelete('CASCADE');
    t.integer('position').notNullable();
    /** The chunk's request fields (text, tags, metadata, tracking id...), without its group. */
    t.jsonb('payload').notNullable();
    t.primary(['file_id', 'position']);
  });
}

export async function down(db: Knex): Promise<void> {
  await db.schema.dropTableIfExists('ingest_pieces');
}
