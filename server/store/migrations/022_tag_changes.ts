// Tag changes join the dataset's change log, so the tags held with a dataset's BM25 postings
// (search/retrieval/bm25/memory.ts), which answer tag filters in memory, catch up with them.
//
// Inserts and deletes are logged already (migration 014: a chunk's terms arrive and leave), and so
// is an update that changes the terms. This logs the updates that change a chunk's tags and leave
// its terms as they were (a tag edit), under the next version of the dataset.
//
// Logging changed chunks under a new version, which migration 019 wrote out for vectors, becomes one
// function, `log_chunk_changes`, that both triggers call.
import type { Knex } from 'knex';
import { up as logVectorChanges } from './019_vector_changes.js';

/** As migration 014: versions whose changed chunks are kept per dataset. */
const CHANGES_KEPT = 1000;

/**
 * Each dataset of `ds` takes its next version (the totals row's lock, held to commit, orders the
 * versions), its chunks among `ids` are logged under it, and versions too old to keep are dropped.
 */
export const LOG_CHUNK_CHANGES = `
    create function log_chunk_changes(ids uuid[], ds uuid[]) returns void language plpgsql as $$
    begin
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
    end $$`;

export async function up(db: Knex): Promise<void> {
  await db.raw(LOG_CHUNK_CHANGES);
  await db.raw(`
    create or replace function chunk_vector_changed() returns trigger language plpgsql as $$
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
      if ids is not null then
        perform log_chunk_changes(ids, ds);
      end if;
      return null;
    end $$`);
  await db.raw(`
    create function chunk_tags_changed() returns trigger language plpgsql as $$
    declare
      ids uuid[];
      ds uuid[];
    begin
      select array_agg(n.id), array_agg(n.dataset_id) into ids, ds
        from old_rows o join new_rows n on n.id = o.id
       where n.tag_set is distinct from o.tag_set
         and n.bm25_terms is not null
         and n.bm25_terms is not distinct from o.bm25_terms
         and n.bm25_length is not distinct from o.bm25_length
         and n.dataset_id = o.dataset_id;
      if ids is not null then
        perform log_chunk_changes(ids, ds);
      end if;
      return null;
    end $$`);
  await db.raw(
    'create trigger chunk_tags_updated after update on chunks referencing old table as old_rows new table as new_rows for each statement execute function chunk_tags_changed()',
  );
}

export async function down(db: Knex): Promise<void> {
  await db.raw('drop trigger if exists chunk_tags_updated on chunks');
  await db.raw('drop function if exists chunk_tags_changed()');
  // The vector trigger's function as migration 019 wrote it, before log_chunk_changes goes.
  await db.raw('drop function if exists chunk_vector_changed() cascade');
  await logVectorChanges(db);
  await db.raw('drop function if exists log_chunk_changes(uuid[], uuid[])');
}
