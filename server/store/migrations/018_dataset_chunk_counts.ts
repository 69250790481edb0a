// How many chunks each dataset holds, kept by statement-level triggers in the writes' own
// transactions, so the plan check of every chunk write reads a few counts instead of counting the
// organization's chunks: at 100,000 chunks that count was a scan on every write, made under the
// organization's subscription lock, which serializes its writers.
//
// Each write statement appends its change (+n inserted, −n deleted) as a row of its own: appending
// takes no lock another writer waits for, whereas one counter row per dataset would be locked from
// the chunk insert to the commit, across the vector index insert. The plan check folds a dataset's
// rows into one now and then (server/domain/quotas.ts). A chunk never moves to another dataset, so
// inserts and deletes are all that count.
import type { Knex } from 'knex';

export async function up(db: Knex): Promise<void> {
  await db.raw(`
    create table dataset_chunk_counts (
      dataset_id uuid not null references datasets(id) on delete cascade,
      chunks bigint not null
    )`);
  await db.raw('create index dataset_chunk_counts_by_dataset on dataset_chunk_counts (dataset_id)');
  await db.raw('insert into dataset_chunk_counts (dataset_id, chunks) select dataset_id, count(*) from chunks group by 1');
  await db.raw(`
    create function chunk_count_changed() returns trigger language plpgsql as $$
    begin
      if tg_op = 'INSERT' then
        insert into dataset_chunk_counts (dataset_id, chunks) select dataset_id, count(*) from new_rows group by 1;
      else
        insert into dataset_chunk_counts (dataset_id, chunks) select dataset_id, -count(*) from old_rows group by 1;
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
