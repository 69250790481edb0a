// The dataset's change log (migrations 014 and 019): a version taken by every statement that changes
// a chunk's BM25 terms or its vector, and the chunks each of the last versions changed. The indexes
// held in memory (mirrors.ts) read it to catch up.
import type { Knex } from 'knex';
import { namedStatement, runNamed } from '../../store/namedStatements.js';

/** The dataset's version now. */
export async function datasetVersion(db: Knex, datasetId: string): Promise<number> {
  const row = await db('bm25_dataset_totals').where({ dataset_id: datasetId }).first('version');
  return Number(row?.version ?? 0);
}

export interface Changes {
  /** The dataset's version now. */
  version: number;
  /** The lowest version after `since` whose changes are still kept (null: none kept). */
  firstKept: number | null;
  /** The chunks changed after `since`. */
  changed: string[];
}

/**
 * What changed in the dataset after version `since`, read in one snapshot. Every semantic search
 * asks, so it is a named statement, parsed and planned once per connection.
 */
export async function changesSince(db: Knex, datasetId: string, since: number): Promise<Changes> {
  const rows = await runNamed<{ version: string | null; first_kept: string | null; changed: string[] }>(db, CHANGES_SINCE, [
    datasetId,
    since,
    datasetId,
    since,
    datasetId,
  ]);
  const [row] = rows;
  return { version: Number(row.version ?? 0), firstKept: row.first_kept == null ? null : Number(row.first_kept), changed: row.changed };
}

const CHANGES_SINCE = namedStatement(
  'dataset_changes_since',
  `select t.version,
          (select min(version) from bm25_changes where dataset_id = ? and version > ?) as first_kept,
          array(select distinct chunk_id from bm25_changes where dataset_id = ? and version > ?) as changed
     from (select 1) as one left join bm25_dataset_totals t on t.dataset_id = ?`,
);
