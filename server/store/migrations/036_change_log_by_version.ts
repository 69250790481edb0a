// Logging a change costs one statement, and trimming the log one key probe.
//
// Every statement that changes chunks takes its dataset's next version (migrations 014, 019, 022).
// Each also dropped the versions older than the last CHANGES_KEPT, by a range that starts at the
// dataset's first version: that range walked the index entries of every version dropped since the
// table was last vacuumed, about 0.25 ms a write under steady writes, twice a chunk write. A version
// is taken exactly once, and every taker now drops the one version that falls out of the window, by
// its key.
//
// `log_chunk_changes` also takes the changes to the dataset's BM25 totals (chunks and summed length,
// one delta per changed chunk), so the BM25 trigger logs through it too: one statement versions the
// dataset, moves its totals, logs the chunks and trims the log.
//
// Lock order: a chunk write stores its terms with the row now, so a transaction may change terms in
// several statements (a batch's inserts, then its upserts). Each statement locked its terms' counts
// before the dataset's totals row, and two such transactions could each hold a count the other
// waits for. The BM25 trigger now takes the totals row first, and the vocabulary's trigger locks it
// before its words' counts: a dataset's writers queue at one row, in the order they reach it.
import type { Knex } from 'knex';
import { TRIGGER_FUNCTION as BM25_TRIGGER_014 } from './014_bm25_postings.js';
import { WORDS_FUNCTION as WORDS_FUNCTION_009 } from './009_vocabulary.js';
import { LOG_CHUNK_CHANGES as LOG_CHUNK_CHANGES_022 } from './022_tag_changes.js';

/** As migration 014: versions whose changed chunks are kept per dataset. */
const CHANGES_KEPT = 1000;

export async function up(db: Knex): Promise<void> {
  await db.raw('drop function log_chunk_changes(uuid[], uuid[])');
  // `chunk_deltas` and `length_deltas` go with `chunk_ids`: what each changed chunk adds to its
  // dataset's totals (+1 and its length when its terms arrive, −1 and minus its length when they
  // leave); absent, 0.
  await db.raw(`
    create function log_chunk_changes(chunk_ids uuid[], dataset_ids uuid[], chunk_deltas integer[] default null, length_deltas bigint[] default null)
    returns void language plpgsql as $$
    begin
      with deltas as (
        select x.dataset_id, coalesce(sum(x.k), 0) as chunks, coalesce(sum(x.len), 0) as length_sum
          from unnest(dataset_ids, chunk_deltas, length_deltas) as x(dataset_id, k, len)
         group by 1),
      versions as (
        -- In key order, so concurrent writers lock totals rows in the same order. The row stays when
        -- its chunks reach 0: its version must never go back.
        insert into bm25_dataset_totals as t (dataset_id, chunks, length_sum, version)
        select d.dataset_id, d.chunks, d.length_sum, 1 from deltas d order by 1
        on conflict (dataset_id) do update
          set chunks = t.chunks + excluded.chunks, length_sum = t.length_sum + excluded.length_sum, version = t.version + 1
        returning t.dataset_id, t.version),
      logged as (
        insert into bm25_changes (dataset_id, version, chunk_id)
        select distinct v.dataset_id, v.version, x.chunk_id
          from versions v join unnest(chunk_ids, dataset_ids) as x(chunk_id, dataset_id) on x.dataset_id = v.dataset_id)
      delete from bm25_changes c
       using versions v
       where c.dataset_id = v.dataset_id and c.version = v.version - ${CHANGES_KEPT};
    end $$`);
  await db.raw(BM25_TRIGGER);
  await db.raw(WORDS_FUNCTION);
  // What the range deletes would have dropped by now; from here on the window moves a version at a time.
  await db.raw(`
    delete from bm25_changes c
     using bm25_dataset_totals t
     where c.dataset_id = t.dataset_id and c.version <= t.version - ${CHANGES_KEPT}`);
}

// As migration 014's, with its totals and log moved into log_chunk_changes. gone: the rows whose
// postings leave (deleted, or updated to other terms); come: the rows whose postings arrive. A row
// without terms (written, its terms not yet) is no document.
const BM25_TRIGGER = `
  create or replace function chunk_bm25_changed() returns trigger language plpgsql as $$
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

    -- The dataset's totals row first: its lock orders the dataset's writers before any of them locks
    -- a term's count (or, in the vocabulary's trigger, a word's), so two writers that change several
    -- statements' worth of terms cannot wait on each other.
    perform log_chunk_changes(
      array_cat(gone_ids, come_ids),
      array_cat(gone_ds, come_ds),
      array_cat(array_fill(-1, array[coalesce(cardinality(gone_ids), 0)]), array_fill(1, array[coalesce(cardinality(come_ids), 0)])),
      array_cat((select array_agg(-g.len::bigint order by g.n) from unnest(gone_lens) with ordinality as g(len, n)), come_lens::bigint[]));

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

    return null;
  end $$`;

/**
 * Migration 009's vocabulary trigger, locking the datasets' totals rows before their words' counts,
 * as the BM25 trigger does before its terms' (a statement that changes a chunk's words changes its
 * terms too, and holds those locks already, unless the new text stems to the same terms).
 */
const WORDS_FUNCTION = (() => {
  const unchanged = '      if ds is null then\n        return null;\n      end if;\n';
  if (!WORDS_FUNCTION_009.includes(unchanged)) throw new Error('036: migration 009 vocabulary function is not the one this migration amends');
  return WORDS_FUNCTION_009.replace('create function', 'create or replace function').replace(
    unchanged,
    `${unchanged}      perform 1 from bm25_dataset_totals t where t.dataset_id in (select unnest(ds)) order by t.dataset_id for update;\n`,
  );
})();

export async function down(db: Knex): Promise<void> {
  await db.raw(WORDS_FUNCTION_009.replace('create function', 'create or replace function'));
  await db.raw('drop function log_chunk_changes(uuid[], uuid[], integer[], bigint[])');
  await db.raw(LOG_CHUNK_CHANGES_022);
  await db.raw(BM25_TRIGGER_014.replace('create function', 'create or replace function'));
}
