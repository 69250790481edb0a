// The vocabulary of each dataset, for typo correction: every surface word of its chunks with the
// number of chunks holding it.
//
// Each chunk row carries its distinct words (`chunks.words`, written with its BM25 terms in the
// write's transaction). Statement-level triggers turn each statement's changes to that column into
// one batch of (dataset, word, ±chunks) deltas, upserted in sorted order (so concurrent writes lock
// vocabulary rows in the same order and cannot deadlock), in the same transaction. Every path that
// writes chunks (create, update, delete, bulk delete, dataset purge, clone, which copies the
// column) keeps the vocabulary right without knowing about it. Words no chunk holds any more go.
import type { Knex } from 'knex';
import { lexicalText } from '../../domain/chunks/content.js';
import { surfaceWords } from '../../search/query/words.js';

/** The vocabulary's trigger function: each statement's changes to `chunks.words`, counted in. */
export const WORDS_FUNCTION = `
    create function chunk_words_changed() returns trigger language plpgsql as $$
    declare
      ds uuid[];
      ws text[];
      ks integer[];
    begin
      if tg_op = 'INSERT' then
        select array_agg(d.dataset_id order by d.dataset_id, d.word), array_agg(d.word order by d.dataset_id, d.word), array_agg(d.k order by d.dataset_id, d.word)
          into ds, ws, ks
          from (select n.dataset_id, w.word, count(*)::int as k from new_rows n, unnest(n.words) as w(word) group by 1, 2) d;
      elsif tg_op = 'DELETE' then
        select array_agg(d.dataset_id order by d.dataset_id, d.word), array_agg(d.word order by d.dataset_id, d.word), array_agg(d.k order by d.dataset_id, d.word)
          into ds, ws, ks
          from (select o.dataset_id, w.word, -count(*)::int as k from old_rows o, unnest(o.words) as w(word) group by 1, 2) d;
      else
        -- Only rows whose words changed; most updates (metadata, tags) leave them alone.
        select array_agg(d.dataset_id order by d.dataset_id, d.word), array_agg(d.word order by d.dataset_id, d.word), array_agg(d.k order by d.dataset_id, d.word)
          into ds, ws, ks
          from (select c.dataset_id, c.word, sum(c.k)::int as k
                from (select n.dataset_id, unnest(n.words) as word, 1 as k
                        from new_rows n join old_rows o on o.id = n.id where n.words is distinct from o.words
                      union all
                      select o.dataset_id, unnest(o.words), -1
                        from new_rows n join old_rows o on o.id = n.id where n.words is distinct from o.words) c
                group by 1, 2 having sum(c.k) <> 0) d;
      end if;
      if ds is null then
        return null;
      end if;
      insert into dataset_words as v (dataset_id, word, chunks)
        select * from unnest(ds, ws, ks)
        on conflict (dataset_id, word) do update set chunks = v.chunks + excluded.chunks;
      if exists (select 1 from unnest(ks) k where k < 0) then
        delete from dataset_words v using unnest(ds, ws, ks) as d(dataset_id, word, k)
          where d.k < 0 and v.dataset_id = d.dataset_id and v.word = d.word and v.chunks <= 0;
      end if;
      return null;
    end $$`;

export async function up(db: Knex): Promise<void> {
  await db.raw('alter table chunks add column words text[]');
  await db.raw(`
    create table dataset_words (
      dataset_id uuid not null references datasets(id) on delete cascade,
      word text not null,
      chunks integer not null,
      primary key (dataset_id, word)
    )`);
  // Candidates for a misspelt word are found by trigram similarity.
  await db.raw('create index dataset_words_word_trgm on dataset_words using gin (word gin_trgm_ops)');
  await db.raw(WORDS_FUNCTION);
  // Transition tables cannot go with a column list or several events: one trigger per event.
  await db.raw(
    'create trigger chunk_words_inserted after insert on chunks referencing new table as new_rows for each statement execute function chunk_words_changed()',
  );
  await db.raw(
    'create trigger chunk_words_updated after update on chunks referencing old table as old_rows new table as new_rows for each statement execute function chunk_words_changed()',
  );
  await db.raw(
    'create trigger chunk_words_deleted after delete on chunks referencing old table as old_rows for each statement execute function chunk_words_changed()',
  );
  await backfill(db);
}

/** Words for the chunks stored before this migration, from the text they are indexed with; the triggers count them. */
async function backfill(db: Knex): Promise<void> {
  let after = '00000000-0000-0000-0000-000000000000';
  for (;;) {
    const rows = await db('chunks')
      .where('id', '>', after)
      .orderBy('id')
      .limit(500)
      .select('id', 'chunk_html', 'convert_html_to_text', 'fulltext_content', 'fulltext_boost', 'semantic_content');
    if (rows.length === 0) return;
    await db.raw("update chunks set words = string_to_array(x.words, ' ') from unnest(?::uuid[], ?::text[]) as x(id, words) where chunks.id = x.id", [
      rows.map((r) => r.id),
      rows.map((r) => surfaceWords(lexicalText(r)).join(' ')),
    ]);
    after = rows[rows.length - 1].id;
  }
}

export async function down(db: Knex): Promise<void> {
  for (const event of ['inserted', 'updated', 'deleted']) await db.raw(`drop trigger if exists chunk_words_${event} on chunks`);
  await db.raw('drop function if exists chunk_words_changed()');
  await db.schema.dropTableIfExists('dataset_words');
  await db.raw('alter table chunks drop column if exists words');
}
