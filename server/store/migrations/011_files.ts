// Files as uploads: where the bytes are stored, their type and digest, the upload's ingestion
// options, and the expiry of a signed upload URL still waiting for its bytes. Also the secret that
// signs the service's own URLs (file downloads and uploads), shared by every instance on the database.
import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';

export async function up(db: Knex): Promise<void> {
  await db.schema.alterTable('files', (t) => {
    /** The key of the bytes in the file storage; null while a signed upload URL waits for them. */
    t.text('storage_key');
    t.text('mime_type');
    t.text('sha256');
    /** The upload's options, verbatim, for the ingestion (splitting, tags, webhook, CSV/JSONL mapping...). */
    t.jsonb('ingest_options').notNullable().defaultTo('{}');
    /** Until when a file in status `awaiting_upload` accepts its bytes by its signed URL. */
    t.timestamp('upload_expires_at', { useTz: true });
    // The paged listing goes newest first.
    t.index(['dataset_id', 'created_at']);
  });
  // Status is also `awaiting_upload` (a signed upload URL was handed out) and `deleting` (being deleted).
  await db.schema.createTable('service_secrets', (t) => {
    t.text('name').primary();
    t.text('value').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
  });
  await db('service_secrets').insert({ name: 'url_signing', value: randomBytes(32).toString('base64url') });
}

export async function down(db: Knex): Promise<void> {
  await db.schema.dropTableIfExists('service_secrets');
  await db.schema.alterTable('files', (t) => {
    t.dropIndex(['dataset_id', 'created_at']);
    for (const column of ['storage_key', 'mime_type', 'sha256', 'ingest_options', 'upload_expires_at']) t.dropColumn(column);
  });
}
