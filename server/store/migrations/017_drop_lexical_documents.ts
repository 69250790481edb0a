// The chunks' own stemmed terms (chunks.bm25_terms, with a GIN index) serve full-text search in
// PostgreSQL: full-text ranks by BM25 over them, as on Typesense. The separate copy of each chunk's
// text that Postgres full-text used to read goes, and with it a second index write per chunk.
import type { Knex } from 'knex';
import { up as createLexicalDocuments } from './003_lexical.js';

export async function up(db: Knex): Promise<void> {
  await db.schema.dropTableIfExists('lexical_documents');
}

/** The table comes back empty: the chunks it copied are still there to fill it again. */
export async function down(db: Knex): Promise<void> {
  await createLexicalDocuments(db);
}
