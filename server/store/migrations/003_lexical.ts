// Postgres full-text index of chunk text: the lexical engine when Typesense is not configured.
// Derived data written alongside each chunk, so no foreign key to chunks; rows go with their dataset.
import type { Knex } from 'knex';

export async function up(db: Knex): Promise<void> {
  // STORED is explicit: since PostgreSQL 18 a bare generated column is virtual, and virtual
  // columns cannot be indexed. to_tsvector with a regconfig (not text) argument is immutable.
  await db.raw(`
    create table lexical_documents (
      dataset_id uuid not null references datasets(id) on delete cascade,
      id uuid not null,
      body text not null,
      tsv tsvector generated always as (to_tsvector('english'::regconfig, body)) stored,
      primary key (dataset_id, id)
    )`);
  await db.raw('create index lexical_documents_tsv_idx on lexical_documents using gin (tsv)');
  // For typo-tolerant (similarity) matching later.
  await db.raw('create index lexical_documents_body_trgm_idx on lexical_documents using gin (body gin_trgm_ops)');
}

export async function down(db: Knex): Promise<void> {
  await db.schema.dropTableIfExists('lexical_documents');
}
