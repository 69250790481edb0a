// BM25 terms live on the chunk row: written in the chunk's own transaction, so keyword scoring means
// the same whatever the lexical engine, and copies of a chunk carry them. Chunks stored before this
// migration get terms from their HTML with the tags stripped.
import type { Knex } from 'knex';

export async function up(db: Knex): Promise<void> {
  await db.schema.alterTable('chunks', (t) => {
    t.specificType('bm25_terms', 'tsvector');
    t.integer('bm25_length');
  });
  await db.raw(`
    update chunks set bm25_terms = to_tsvector('english', regexp_replace(coalesce(fulltext_content, chunk_html, ''), '<[^>]*>', ' ', 'g'))`);
  await db.raw(`
    update chunks set bm25_length = (select coalesce(sum(coalesce(array_length(u.positions, 1), 1)), 0) from unnest(bm25_terms) u)`);
  await db.raw('create index chunks_bm25_terms on chunks using gin (bm25_terms)');
}

export async function down(db: Knex): Promise<void> {
  await db.raw('drop index if exists chunks_bm25_terms');
  await db.schema.alterTable('chunks', (t) => {
    t.dropColumn('bm25_terms');
    t.dropColumn('bm25_length');
  });
}
