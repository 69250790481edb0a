// The organization's datasets ranked by use (POST /api/analytics/top): searches, RAG calls or
// recommendations counted per dataset in a date range, the ten most used first. Only the
// organization's own datasets (not those being deleted) are read. Searches are counted from the
// daily roll-ups (migration 029) for the whole days of the range, from the searches themselves for
// the part days at its ends, so a year costs a few hundred rows per dataset.
import type { Knex } from 'knex';
import type * as T from '../../sdk/src/generated/types.gen.js';
import { type Bound, dateBounds } from './dateRange.js';
import { splitAtUnits } from './searchAnalytics/rollupSplit.js';

/** Datasets listed at most. */
const TOP = 10;

type Range = { from?: Bound<Date>; to?: Bound<Date> };

const RECORDS: Record<T.TopDatasetsRequestTypes, string> = { search: 'search_queries', rag: 'rag_queries', recommendation: 'recommendation_queries' };

export async function topDatasets(db: Knex, organizationId: string, request: T.GetTopDatasetsRequestBody): Promise<T.TopDatasetsResponse[]> {
  const range = dateBounds(request.date_range, 'date_range');
  const datasets = db('datasets').where({ organization_id: organizationId, deleted: 0 }).select('id');
  const parts = request.type === 'search' ? searchParts(db, datasets, range) : [recordCounts(db, RECORDS[request.type], datasets, range)];
  const [first, ...rest] = parts;
  const counts = db
    .from((rest.length ? first.unionAll(rest, true) : first).as('parts'))
    .select('dataset_id', db.raw('sum(records)::float8 as total'))
    .groupBy('dataset_id');
  const rows: { id: string; tracking_id: string | null; total: number }[] = await db
    .from(counts.as('c'))
    .join('datasets as d', 'd.id', 'c.dataset_id')
    .select('d.id', 'd.tracking_id', 'c.total')
    .orderBy([{ column: 'c.total', order: 'desc' }, 'd.id'])
    .limit(TOP);
  return rows.map((r) => ({ dataset_id: r.id, dataset_tracking_id: r.tracking_id, total_queries: Number(r.total) }));
}

/** Rows of (dataset_id, records = 1) of a table of records, one per record of the datasets in the range. */
function recordCounts(db: Knex, table: string, datasets: Knex.QueryBuilder, range: Range): Knex.QueryBuilder {
  // Parts are not grouped: knex would put the first part's group by after the union.
  const query = db(table).whereIn('dataset_id', datasets.clone()).select('dataset_id', db.raw('1 as records'));
  if (range.from) query.where('created_at', range.from.inclusive ? '>=' : '>', range.from.value);
  if (range.to) query.where('created_at', range.to.inclusive ? '<=' : '<', range.to.value);
  return query;
}

/** The datasets' searches in the range: whole days from the roll-ups, the rest from the searches. */
function searchParts(db: Knex, datasets: Knex.QueryBuilder, range: Range): Knex.QueryBuilder[] {
  const split = splitAtUnits(range, 'day');
  const parts = split.edges.map((edge) => recordCounts(db, 'search_queries', datasets, edge));
  if (split.whole) {
    const days = db('search_rollup_days').whereIn('dataset_id', datasets.clone()).select('dataset_id', 'searches as records');
    if (split.whole.start) days.where('bucket', '>=', split.whole.start);
    if (split.whole.end) days.where('bucket', '<', split.whole.end);
    parts.push(days);
  }
  return parts;
}
