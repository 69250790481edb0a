// How many chunks each dataset holds, kept by statement-level triggers in the writes' own
// transactions, so the plan check of every chunk write reads a few counters instead of counting the
// organization's chunks: at 100,000 chunks that count was a scan on every write, made under the
// organization's subscription lock, which serializes its writers. A chunk never moves to another
// dataset (writes insert, update in place, or delete), so inserts and deletes are all that count.
import type { Knex } from 'knex';

export async function up(db: Knex): Promise<void> {
  await db.raw(`
    create table dataset_chunk_counts (
      dataset_id uuid primary key references datasets(id) on delete cascade,
      chunks bigint not null
    )`);
  await db.raw('insert into dataset_chunk_counts (dataset_id, chunks) select dataset_id, count(*) from chunks group by 1');
  await db.raw(`
    create function chunk_count_changed() returns trigger language plpgsql as $$
    begin
      if tg_op = 'INSERT' then
        insert into dataset_chunk_counts as c (dataset_id, chunks)
        select dataset_id, count(*) from new_rows group by 1 order by 1
        on conflict (dataset_id) do update set chunks = c.chunks + excluded.chunks;
      else
        update dataset_chunk_counts c set chunks = c.chunks - d.n
          from (select dataset_id, count(*) as n from old_rows group by 1) d
         where c.dataset_id = d.dataset_id;
      end if;
      return null;
    end $$`);
  await db.raw(
    'create trigger chunk_count_inserted after insert on chunks referencing new table as new_rows for each statement execute function chunk_count_changed()',
  );
  await db.raw(
    'create trigger chunk_count_deleted after delete on chunks referencing old table as old_rows for each statement execute function chunk_count_changed()',
  );
}

export async function down(db: Knex): Promise<void> {
  for (const event of ['inserted', 'deleted']) await db.raw(`drop trigger if exists chunk_count_${event} on chunks`);
  await db.raw('drop function if exists chunk_count_changed()');
  await db.schema.dropTableIfExists('dataset_chunk_counts');
}
