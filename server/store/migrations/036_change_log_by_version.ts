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

/** `text` with `from`, which must occur in it exactly once, replaced: an earlier migration's SQL, amended. */
function amend(text: string, from: string, to: string): string {
  if (text.split(from).length !== 2)
    throw new Error(`036: an earlier migration's function is not the one this migration amends (${from.trim().slice(0, 40)}…)`);
  return text.replace(from, to);
}

/** An earlier migration's `create function`, as a replacement of the function. */
const orReplace = (sql: string) => amend(sql, 'create function', 'create or replace function');

/** Migration 014's BM25 trigger with its totals and log moved into log_chunk_changes, which it calls before any term's count. */
const BM25_TRIGGER = (() => {
  const totalsAndLog = BM25_TRIGGER_014.slice(
    BM25_TRIGGER_014.indexOf('    -- The totals row stays when its chunks reach 0'),
    BM25_TRIGGER_014.indexOf('    return null;\n  end $$'),
  );
  const termCounts = '    insert into bm25_term_counts as t (dataset_id, term, chunks)\n';
  let text = orReplace(BM25_TRIGGER_014);
  text = amend(text, totalsAndLog, '');
  return amend(
    text,
    termCounts,
    `    -- The dataset's totals row first: its lock orders the dataset's writers before any of them locks
    -- a term's count (or, in the vocabulary's trigger, a word's), so two writers that change several
    -- statements' worth of terms cannot wait on each other.
    perform log_chunk_changes(
      array_cat(gone_ids, come_ids),
      array_cat(gone_ds, come_ds),
      array_cat(array_fill(-1, array[coalesce(cardinality(gone_ids), 0)]), array_fill(1, array[coalesce(cardinality(come_ids), 0)])),
      array_cat((select array_agg(-g.len::bigint order by g.n) from unnest(gone_lens) with ordinality as g(len, n)), come_lens::bigint[]));

${termCounts}`,
  );
})();

/**
 * Migration 009's vocabulary trigger, locking the datasets' totals rows before their words' counts,
 * as the BM25 trigger does before its terms' (a statement that changes a chunk's words changes its
 * terms too, and holds those locks already, unless the new text stems to the same terms).
 */
const WORDS_FUNCTION = (() => {
  const unchanged = '      if ds is null then\n        return null;\n      end if;\n';
  return amend(
    orReplace(WORDS_FUNCTION_009),
    unchanged,
    `${unchanged}      perform 1 from bm25_dataset_totals t where t.dataset_id in (select unnest(ds)) order by t.dataset_id for update;\n`,
  );
})();

export async function down(db: Knex): Promise<void> {
  await db.raw(orReplace(WORDS_FUNCTION_009));
  await db.raw('drop function log_chunk_changes(uuid[], uuid[], integer[], bigint[])');
  await db.raw(LOG_CHUNK_CHANGES_022);
  await db.raw(orReplace(BM25_TRIGGER_014));
}
