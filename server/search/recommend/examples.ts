// The example chunks of a recommendation: named directly (by id or tracking id), or as the chunks of
// example groups. Every name must be a chunk (or group) of the dataset: an unknown one is 404.
import type { Knex } from 'knex';
import type * as T from '../../../sdk/src/generated/types.gen.js';
import { notFound } from '../../errors.js';

export interface Examples {
  /** Chunk ids, each once. */
  positive: string[];
  negative: string[];
}

/** How the request named its examples, for the record. */
export interface ExampleNames {
  positiveIds: string[];
  negativeIds: string[];
  positiveTrackingIds: string[];
  negativeTrackingIds: string[];
}

const unique = (values: string[]) => [...new Set(values)];

function listed(values: string[]): string {
  const shown = values.slice(0, 5).join(', ');
  return values.length > 5 ? `${shown} and ${values.length - 5} more` : shown;
}

/** The ids of the rows of `table` in the dataset named by `ids` and `trackingIds`; 404 naming the unknown ones. */
async function resolve(
  db: Knex,
  table: 'chunks' | 'chunk_groups',
  datasetId: string,
  names: { ids: string[]; trackingIds: string[] },
  fields: { ids: string; trackingIds: string },
): Promise<string[]> {
  const kind = table === 'chunks' ? 'chunk' : 'group';
  const ids = unique(names.ids.map((id) => id.toLowerCase()));
  const found: string[] = ids.length ? await db(table).where({ dataset_id: datasetId }).whereRaw('id = any(?::uuid[])', [ids]).pluck('id') : [];
  const missing = ids.filter((id) => !found.includes(id));
  if (missing.length) throw notFound(`${fields.ids}: ${listed(missing)} ${missing.length === 1 ? `is not a ${kind}` : `are not ${kind}s`} of this dataset`);

  const trackingIds = unique(names.trackingIds);
  const rows: { id: string; tracking_id: string }[] = trackingIds.length
    ? await db(table).where({ dataset_id: datasetId }).whereRaw('tracking_id = any(?::text[])', [trackingIds]).select('id', 'tracking_id')
    : [];
  const known = new Set(rows.map((r) => r.tracking_id));
  const unknown = trackingIds.filter((t) => !known.has(t));
  if (unknown.length) throw notFound(`${fields.trackingIds}: no ${kind} of this dataset has the tracking id ${listed(unknown)}`);
  return unique([...found, ...rows.map((r) => r.id)]);
}

export async function chunkExamples(db: Knex, datasetId: string, body: T.RecommendChunksRequest): Promise<{ examples: Examples; names: ExampleNames }> {
  const names: ExampleNames = {
    positiveIds: body.positive_chunk_ids ?? [],
    negativeIds: body.negative_chunk_ids ?? [],
    positiveTrackingIds: body.positive_tracking_ids ?? [],
    negativeTrackingIds: body.negative_tracking_ids ?? [],
  };
  const positive = await resolve(
    db,
    'chunks',
    datasetId,
    { ids: names.positiveIds, trackingIds: names.positiveTrackingIds },
    { ids: 'positive_chunk_ids', trackingIds: 'positive_tracking_ids' },
  );
  const negative = await resolve(
    db,
    'chunks',
    datasetId,
    { ids: names.negativeIds, trackingIds: names.negativeTrackingIds },
    { ids: 'negative_chunk_ids', trackingIds: 'negative_tracking_ids' },
  );
  return { examples: { positive, negative }, names };
}

/** The chunks of the example groups (a chunk of both a positive and a negative group counts as both). */
export async function groupExamples(
  db: Knex,
  datasetId: string,
  body: T.RecommendGroupsReqPayload,
): Promise<{ examples: Examples; names: ExampleNames; positiveGroups: string[] }> {
  const names: ExampleNames = {
    positiveIds: body.positive_group_ids ?? [],
    negativeIds: body.negative_group_ids ?? [],
    positiveTrackingIds: body.positive_group_tracking_ids ?? [],
    negativeTrackingIds: body.negative_group_tracking_ids ?? [],
  };
  const positiveGroups = await resolve(
    db,
    'chunk_groups',
    datasetId,
    { ids: names.positiveIds, trackingIds: names.positiveTrackingIds },
    { ids: 'positive_group_ids', trackingIds: 'positive_group_tracking_ids' },
  );
  const negativeGroups = await resolve(
    db,
    'chunk_groups',
    datasetId,
    { ids: names.negativeIds, trackingIds: names.negativeTrackingIds },
    { ids: 'negative_group_ids', trackingIds: 'negative_group_tracking_ids' },
  );
  const chunksOf = async (groupIds: string[]): Promise<string[]> =>
    groupIds.length
      ? unique(
          await db('chunk_group_bookmarks as b')
            .join('chunks as c', 'c.id', 'b.chunk_id')
            .where('c.dataset_id', datasetId)
            .whereRaw('b.group_id = any(?::uuid[])', [groupIds])
            .orderBy([{ column: 'b.created_at' }, { column: 'c.id' }])
            .pluck('c.id'),
        )
      : [];
  return { examples: { positive: await chunksOf(positiveGroups), negative: await chunksOf(negativeGroups) }, names, positiveGroups };
}
