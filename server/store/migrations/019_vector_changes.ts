// Vector writes join the dataset's change log, so the vectors held in memory for search
// (search/retrieval/vectors/) catch up as the BM25 postings do: by re-reading only the chunks
// changed since the version they reflect.
//
// A statement that inserts, replaces or deletes vectors (deletes cascade from `chunks`) takes the
// next version of the dataset in `bm25_dataset_totals` (a row with no chunks when BM25 never wrote
// one) and logs its chunks in `bm25_changes`, as migration 014's trigger does for terms. Both take
// the same row's lock, held to commit, so versions become visible in order whichever table a
// transaction writes first, and two triggers of one transaction cannot wait on each other.
import type { Knex } from 'knex';

/** As migration 014: versions whose changed chunks are kept per dataset. */
const CHANGES_KEPT = 1000;

export async function up(db: Knex): Promise<void> {
  await db.raw(`
    create function chunk_vector_changed() returns trigger language plpgsql as $$
    declare
      ids uuid[];
      ds uuid[];
    begin
      if tg_op = 'DELETE' then
        select array_agg(o.chunk_id), array_agg(o.dataset_id) into ids, ds from old_rows o;
      elsif tg_op = 'INSERT' then
        select array_agg(n.chunk_id), array_agg(n.dataset_id) into ids, ds from new_rows n;
      else
        -- Only vectors that changed (an upsert rewrites equal ones too).
        select array_agg(n.chunk_id), array_agg(n.dataset_id) into ids, ds
          from old_rows o join new_rows n on n.chunk_id = o.chunk_id
         where n.embedding is distinct from o.embedding or n.dataset_id <> o.dataset_id;
      end if;
      if ids is null then
        return null;
      end if;
      with versions as (
        insert into bm25_dataset_totals as t (dataset_id, chunks, length_sum, version)
        select distinct d, 0, 0, 1 from unnest(ds) as d order by 1
        on conflict (dataset_id) do update set version = t.version + 1
        returning t.dataset_id, t.version)
      insert into bm25_changes (dataset_id, version, chunk_id)
      select distinct v.dataset_id, v.version, x.id
        from versions v join unnest(ids, ds) as x(id, ds) on x.ds = v.dataset_id;
      delete from bm25_changes c
       using bm25_dataset_totals t
       where t.dataset_id in (select unnest(ds)) and c.dataset_id = t.dataset_id and c.version <= t.version - ${CHANGES_KEPT};
      return null;
    end $$`);
  await db.raw(
    'create trigger chunk_vector_inserted after insert on chunk_vectors referencing new table as new_rows for each statement execute function chunk_vector_changed()',
  );
  await db.raw(
    'create trigger chunk_vector_updated after update on chunk_vectors referencing old table as old_rows new table as new_rows for each statement execute function chunk_vector_changed()',
  );
  await db.raw(
    'create trigger chunk_vector_deleted after delete on chunk_vectors referencing old table as old_rows for each statement execute function chunk_vector_changed()',
  );
}

export async function down(db: Knex): Promise<void> {
  for (const event of ['inserted', 'updated', 'deleted']) await db.raw(`drop trigger if exists chunk_vector_${event} on chunk_vectors`);
  await db.raw('drop function if exists chunk_vector_changed()');
}
