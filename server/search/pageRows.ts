// The rows of a search's page, read in one statement with what an answer made in memory is checked
// against: the dataset's version (retrieval/changes.ts) and, when asked, the query's terms as
// PostgreSQL's English analysis makes them. A search answered early from an index held in memory
// keeps its answer when both are the index's (bm25/index.ts), so it needs no statement of its own.
import type { Knex } from 'knex';
import { CHUNK_COLUMNS, type ChunkRow, chunkColumnsOf } from '../domain/chunks/records.js';
import { namedStatement, runNamed } from '../store/namedStatements.js';

export interface PageRows {
  /** The rows by id (unknown ids left out). */
  rows: Map<string, ChunkRow>;
  /** The dataset's version the rows were read at. */
  version: number;
  /** The query's distinct terms, sorted, when a query was given; else null. */
  terms: string[] | null;
}

type Read = ChunkRow & { dataset_version: string | null; query_terms: string[] | null };

/** The rows of `ids`, with the dataset's version and `query`'s terms read in the same snapshot. */
export async function pageRows(db: Knex, datasetId: string, ids: string[], query: string | null): Promise<PageRows> {
  const rows = await runNamed<Read>(db, PAGE_ROWS, [datasetId, query, query, datasetId, ids]);
  const [first] = rows;
  const byId = new Map<string, ChunkRow>();
  for (const { dataset_version: _version, query_terms: _terms, ...row } of rows) if (row.id !== null) byId.set(row.id, row);
  return { rows: byId, version: Number(first?.dataset_version ?? 0), terms: first?.query_terms ? [...first.query_terms].sort() : null };
}

// One row of the version and terms, joined to each chunk row (or to none: then the row's columns are null).
const PAGE_ROWS = namedStatement(
  'search_page_rows',
  `
  select s.dataset_version, s.query_terms, ${chunkColumnsOf('c').join(', ')}
    from (select (select t.version from bm25_dataset_totals t where t.dataset_id = ?) as dataset_version,
                 case when ?::text is null then null
                      else array(select lexeme from unnest(to_tsvector('english', ?::text))) end as query_terms) as s
    left join lateral (select ${CHUNK_COLUMNS.join(', ')} from chunks where dataset_id = ? and id = any(?::uuid[])) as c on true`,
);
