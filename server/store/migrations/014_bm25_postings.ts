// An inverted index for BM25, so a search reads the few postings that can reach its top k instead
// of scoring every chunk that holds a query term (search/retrieval/bm25/).
//
//   bm25_postings        one row per (chunk, term): the term's frequency in the chunk and the chunk's
//                        length, ordered per term by frequency (highest first), then length (shortest
//                        first). A term's impact tf·(k+1) / (tf + k·(1 − b + b·len/avg)) grows with tf
//                        and falls with len, so for any k, b and average length the postings whose
//                        impact reaches a bound are, per tf, a range of lengths: index range scans.
//   bm25_term_counts     how many chunks of the dataset hold each term (idf's document frequency)
//   bm25_dataset_totals  how many chunks the dataset has and their summed length (idf's N, and the
//                        average length when the dataset does not set BM25_AVG_LEN), and a version
//                        counting the statements that changed its terms
//   bm25_changes         which chunks each of the last CHANGES_KEPT versions changed, so an index held
//                        in memory (search/retrieval/bm25/memory.ts) catches up by re-reading only
//                        those. A version is taken under the totals row's lock, held to commit: a
//                        dataset's versions become visible in order, none later than a higher one.
//
// All three derive from `chunks.bm25_terms` and `chunks.bm25_length`: statement-level triggers turn
// each statement's changes to those columns into postings removed and added and counts moved, in
// the same transaction, so every path that writes chunks keeps the index exact without knowing it
// (as the vocabulary of migration 009 is kept). Counts are upserted in key order, so concurrent
// writes lock their rows in the same order and cannot deadlock.
import type { Knex } from 'knex';

/** Versions whose changed chunks are kept per dataset; an index further behind is built again. */
const CHANGES_KEPT = 1000;

export async function up(db: Knex): Promise<void> {
  // No foreign keys (a check per posting would cost more than the row, and a dataset's rows are
  // still counted down while it is deleted): rows go with their chunks, counts when they reach 0.
  await db.raw(`
    create table bm25_postings (
      dataset_id uuid not null,
      term text not null,
      tf smallint not null,
      len integer not null,
      chunk_id uuid not null
    )`);
  await db.raw(`
    create table bm25_term_counts (
      dataset_id uuid not null,
      term text not null,
      chunks integer not null,
      primary key (dataset_id, term)
    )`);
  await db.raw(`
    create table bm25_dataset_totals (
      dataset_id uuid primary key,
      chunks bigint not null,
      length_sum bigint not null,
      version bigint not null default 0
    )`);
  await db.raw('create table bm25_changes (dataset_id uuid not null, version bigint not null, chunk_id uuid not null)');
  await db.raw('create index bm25_changes_by_version on bm25_changes (dataset_id, version)');
  await backfill(db);
  await db.raw('create unique index bm25_postings_by_impact on bm25_postings (dataset_id, term, tf desc, len, chunk_id)');
  await db.raw(TRIGGER_FUNCTION);
  // Transition tables cannot go with a column list or several events: one trigger per event.
  await db.raw(
    'create trigger chunk_bm25_inserted after insert on chunks referencing new table as new_rows for each statement execute function chunk_bm25_changed()',
  );
  await db.raw(
    'create trigger chunk_bm25_updated after update on chunks referencing old table as old_rows new table as new_rows for each statement execute function chunk_bm25_changed()',
  );
  await db.raw(
    'create trigger chunk_bm25_deleted after delete on chunks referencing old table as old_rows for each statement execute function chunk_bm25_changed()',
  );
}

/** The postings and counts of the chunks stored before this migration. */
async function backfill(db: Knex): Promise<void> {
  await db.raw(`
    insert into bm25_postings (dataset_id, term, tf, len, chunk_id)
    select c.dataset_id, u.lexeme, coalesce(array_length(u.positions, 1), 1), coalesce(c.bm25_length, 0), c.id
      from chunks c, unnest(c.bm25_terms) u
     where c.bm25_terms is not null`);
  await db.raw(`
    insert into bm25_term_counts (dataset_id, term, chunks)
    select dataset_id, term, count(*) from bm25_postings group by 1, 2`);
  await db.raw(`
    insert into bm25_dataset_totals (dataset_id, chunks, length_sum)
    select dataset_id, count(*), coalesce(sum(bm25_length), 0) from chunks where bm25_terms is not null group by 1`);
}

// gone: the rows whose postings leave (deleted, or updated to other terms); come: the rows whose
// postings arrive. A row without terms (written, its terms not yet) is no document.
export const TRIGGER_FUNCTION = `
  create function chunk_bm25_changed() returns trigger language plpgsql as $$
  declare
    gone_ids uuid[];
    gone_ds uuid[];
    gone_terms tsvector[];
    gone_lens integer[];
    come_ids uuid[];
    come_ds uuid[];
    come_terms tsvector[];
    come_lens integer[];
    hashjoin text;
    mergejoin text;
  begin
    if tg_op = 'DELETE' then
      select array_agg(o.id), array_agg(o.dataset_id), array_agg(o.bm25_terms), array_agg(coalesce(o.bm25_length, 0))
        into gone_ids, gone_ds, gone_terms, gone_lens
        from old_rows o where o.bm25_terms is not null;
    elsif tg_op = 'INSERT' then
      select array_agg(n.id), array_agg(n.dataset_id), array_agg(n.bm25_terms), array_agg(coalesce(n.bm25_length, 0))
        into come_ids, come_ds, come_terms, come_lens
        from new_rows n where n.bm25_terms is not null;
    else
      -- Only rows whose terms changed; most updates (metadata, tags) leave them alone.
      select array_agg(o.id), array_agg(o.dataset_id), array_agg(o.bm25_terms), array_agg(coalesce(o.bm25_length, 0))
        into gone_ids, gone_ds, gone_terms, gone_lens
        from old_rows o join new_rows n on n.id = o.id
       where o.bm25_terms is not null
         and (n.bm25_terms is distinct from o.bm25_terms or n.bm25_length is distinct from o.bm25_length or n.dataset_id <> o.dataset_id);
      select array_agg(n.id), array_agg(n.dataset_id), array_agg(n.bm25_terms), array_agg(coalesce(n.bm25_length, 0))
        into come_ids, come_ds, come_terms, come_lens
        from old_rows o join new_rows n on n.id = o.id
       where n.bm25_terms is not null
         and (n.bm25_terms is distinct from o.bm25_terms or n.bm25_length is distinct from o.bm25_length or n.dataset_id <> o.dataset_id);
    end if;
    if gone_ids is null and come_ids is null then
      return null;
    end if;

    if gone_ids is not null then
      -- Postings and counts by their whole keys: index probes. The planner cannot see how few rows
      -- the arrays hold and might hash a whole table instead.
      hashjoin := current_setting('enable_hashjoin');
      mergejoin := current_setting('enable_mergejoin');
      perform set_config('enable_hashjoin', 'off', true), set_config('enable_mergejoin', 'off', true);
      delete from bm25_postings p
        using (select g.ds, u.lexeme, coalesce(array_length(u.positions, 1), 1)::smallint as tf, g.len, g.id
                 from unnest(gone_ids, gone_ds, gone_terms, gone_lens) as g(id, ds, terms, len), unnest(g.terms) u) d
       where p.dataset_id = d.ds and p.term = d.lexeme and p.tf = d.tf and p.len = d.len and p.chunk_id = d.id;
    end if;
    if come_ids is not null then
      insert into bm25_postings (dataset_id, term, tf, len, chunk_id)
      select c.ds, u.lexeme, coalesce(array_length(u.positions, 1), 1), c.len, c.id
        from unnest(come_ids, come_ds, come_terms, come_lens) as c(id, ds, terms, len), unnest(c.terms) u;
    end if;

    insert into bm25_term_counts as t (dataset_id, term, chunks)
    select ds, lexeme, sum(k)::int
      from (select g.ds, u.lexeme, -1 as k from unnest(gone_ds, gone_terms) as g(ds, terms), unnest(g.terms) u
            union all
            select c.ds, u.lexeme, 1 from unnest(come_ds, come_terms) as c(ds, terms), unnest(c.terms) u) d
     group by 1, 2 having sum(k) <> 0
     order by 1, 2
    on conflict (dataset_id, term) do update set chunks = t.chunks + excluded.chunks;
    if gone_ids is not null then
      -- Terms no chunk holds any more go.
      delete from bm25_term_counts t
        using (select distinct g.ds, u.lexeme from unnest(gone_ds, gone_terms) as g(ds, terms), unnest(g.terms) u) d
       where t.dataset_id = d.ds and t.term = d.lexeme and t.chunks <= 0;
      perform set_config('enable_hashjoin', hashjoin, true), set_config('enable_mergejoin', mergejoin, true);
    end if;

    -- The totals row stays when its chunks reach 0: its version must never go back.
    with versions as (
      insert into bm25_dataset_totals as t (dataset_id, chunks, length_sum, version)
      select ds, sum(k), sum(len), 1
        from (select ds, -1 as k, -len as len from unnest(gone_ds, gone_lens) as g(ds, len)
              union all
              select ds, 1, len from unnest(come_ds, come_lens) as c(ds, len)) d
       group by 1
       order by 1
      on conflict (dataset_id) do update
        set chunks = t.chunks + excluded.chunks, length_sum = t.length_sum + excluded.length_sum, version = t.version + 1
      returning t.dataset_id, t.version)
    insert into bm25_changes (dataset_id, version, chunk_id)
    select distinct v.dataset_id, v.version, x.id
      from versions v
      join (select * from unnest(gone_ids, gone_ds) union all select * from unnest(come_ids, come_ds)) as x(id, ds) on x.ds = v.dataset_id;
    delete from bm25_changes c
     using bm25_dataset_totals t
     where t.dataset_id in (select unnest(gone_ds) union select unnest(come_ds))
       and c.dataset_id = t.dataset_id and c.version <= t.version - ${CHANGES_KEPT};
    return null;
  end $$`;

export async function down(db: Knex): Promise<void> {
  for (const event of ['inserted', 'updated', 'deleted']) await db.raw(`drop trigger if exists chunk_bm25_${event} on chunks`);
  await db.raw('drop function if exists chunk_bm25_changed()');
  for (const table of ['bm25_postings', 'bm25_term_counts', 'bm25_dataset_totals', 'bm25_changes']) await db.schema.dropTableIfExists(table);
}
