// Updating a chunk: given fields replace stored ones; when its content changes it is embedded and
// indexed again, index first, then the row and vector in one transaction.
import type * as T from '../../../sdk/src/generated/types.gen.js';
import { badRequest, notFound } from '../../errors.js';
import type { Services } from '../../services.js';
import type { DatasetRow } from '../datasets.js';
import { finite, parseTimeStamp } from './input.js';
import {
  assertGroupsExist,
  bookmark,
  contentRow,
  dbColumns,
  derive,
  indexChunks,
  resolveGroups,
  restoreIndex,
  storeVectors,
  type ChunkColumns,
  type StoredChunk,
} from './write.js';

type Changes = Omit<T.UpdateChunkReqPayload, 'chunk_id' | 'tracking_id'>;

const CONTENT_FIELDS = ['chunk_html', 'convert_html_to_text', 'fulltext_boost', 'semantic_boost'] as const;

export async function updateChunk(
  services: Services,
  dataset: DatasetRow,
  target: { chunk_id?: string | null; tracking_id?: string | null },
  changes: Changes,
): Promise<void> {
  const db = services.store.db;
  if ((target.chunk_id == null) === (target.tracking_id == null)) throw badRequest('give exactly one of chunk_id and tracking_id');
  const current = await db<StoredChunk>('chunks')
    .where({ dataset_id: dataset.id, ...(target.chunk_id ? { id: target.chunk_id } : { tracking_id: target.tracking_id }) })
    .first();
  if (!current) throw notFound(`chunk ${target.chunk_id ?? `with tracking_id ${target.tracking_id}`} not found in this dataset`);
  await assertGroupsExist(db, dataset.id, changes.group_ids ?? []);

  const next: ChunkColumns = { ...columnsOf(current), ...given(changes) };
  const contentChanged = CONTENT_FIELDS.some((field) => changes[field] !== undefined);
  const derived = contentChanged ? await derive(services, dataset, [next]) : [];
  await indexChunks(services, dataset, derived);
  try {
    await db.transaction(async (trx) => {
      await trx('chunks')
        .where({ id: current.id })
        .update({ ...(contentChanged ? contentRow(trx, next) : dbColumns(next)), updated_at: trx.fn.now() });
      await storeVectors(trx, dataset, derived);
      if (changes.group_ids != null || changes.group_tracking_ids != null) {
        await trx('chunk_group_bookmarks').where({ chunk_id: current.id }).del();
        await bookmark(trx, [{ chunkId: current.id, groupIds: await resolveGroups(trx, dataset.id, changes.group_ids, changes.group_tracking_ids) }]);
      }
    });
  } catch (error) {
    if (contentChanged) await restoreIndex(services, dataset.id, [], [current]);
    throw error;
  }
}

/** The fields a request gives; null clears a field, absent leaves it. */
function given(changes: Changes): Partial<ChunkColumns> {
  const out: Partial<ChunkColumns> = {};
  if (changes.chunk_html !== undefined) {
    if (changes.chunk_html === null) throw badRequest('chunk_html: a chunk needs content; send the new content or leave the field out');
    out.chunk_html = changes.chunk_html;
  }
  if (changes.convert_html_to_text != null) out.convert_html_to_text = changes.convert_html_to_text;
  if (changes.fulltext_boost !== undefined) out.fulltext_boost = changes.fulltext_boost ?? null;
  if (changes.semantic_boost !== undefined) out.semantic_boost = changes.semantic_boost ?? null;
  if (changes.link !== undefined) out.link = changes.link ?? null;
  if (changes.metadata !== undefined) out.metadata = changes.metadata ?? null;
  if (changes.tag_set !== undefined) out.tag_set = changes.tag_set ?? null;
  if (changes.image_urls !== undefined) out.image_urls = changes.image_urls ?? null;
  if (changes.time_stamp !== undefined) out.time_stamp = parseTimeStamp(changes.time_stamp, '');
  if (changes.weight !== undefined) out.weight = finite(changes.weight, 'weight') ?? 1;
  if (changes.num_value !== undefined) out.num_value = finite(changes.num_value, 'num_value');
  if (changes.location !== undefined) {
    out.location_lat = changes.location?.lat ?? null;
    out.location_lon = changes.location?.lon ?? null;
  }
  return out;
}

function columnsOf(row: StoredChunk): ChunkColumns {
  return {
    id: row.id,
    dataset_id: row.dataset_id,
    tracking_id: row.tracking_id,
    chunk_html: row.chunk_html,
    convert_html_to_text: row.convert_html_to_text,
    semantic_content: row.semantic_content,
    fulltext_content: row.fulltext_content,
    fulltext_boost: row.fulltext_boost,
    semantic_boost: row.semantic_boost,
    split_avg: row.split_avg,
    link: row.link,
    metadata: row.metadata,
    tag_set: row.tag_set,
    time_stamp: row.time_stamp,
    weight: row.weight,
    num_value: row.num_value,
    image_urls: row.image_urls,
    location_lat: row.location_lat,
    location_lon: row.location_lon,
  };
}
