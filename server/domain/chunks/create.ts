// Creating chunks, one or a batch: each is embedded, indexed and stored before the answer, so a
// search sent after it finds them. With `upsert_by_tracking_id` a chunk whose tracking id exists is
// updated; without it, that chunk is left as it is and returned as stored.
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type * as T from '../../../sdk/src/generated/types.gen.js';
import { badRequest, planLimitReached } from '../../errors.js';
import type { DatasetRow } from '../datasets.js';
import { planOf, reservePlanCapacity } from '../quotas.js';
import { finite, parseTimeStamp } from './input.js';
import {
  assertGroupsExist,
  bookmark,
  contentRow,
  derive,
  indexChunks,
  insertChunks,
  resolveGroups,
  restoreIndex,
  storeVectors,
  type ChunkColumns,
  type ChunkWriteServices,
  type StoredChunk,
} from './write.js';

export const BATCH_LIMIT = 120;

export interface CreateChunksOptions {
  /** The ids of chunks that are inserted (one per payload): ingestion derives them so a retry writes no copy. */
  ids?: string[];
  /**
   * Runs first in the write's transaction, to lock what the write depends on and to refuse it by
   * throwing (ingestion locks its file row, so a file deleted meanwhile gets no chunk).
   */
  guard?: (trx: Knex.Transaction) => Promise<void>;
}

export async function createChunks(
  services: ChunkWriteServices,
  dataset: DatasetRow,
  payloads: T.ChunkReqPayload[],
  batch: boolean,
  options: CreateChunksOptions = {},
): Promise<StoredChunk[]> {
  const { ids, guard } = options;
  const db = services.store.db;
  const where = (i: number) => (batch ? `[${i}].` : '');
  if (payloads.length > BATCH_LIMIT) throw badRequest(`a batch holds at most ${BATCH_LIMIT} chunks, got ${payloads.length}`);
  const columns = payloads.map((payload, i) => columnsOf(payload, dataset.id, where(i), ids?.[i]));
  assertUniqueTrackingIds(columns, where);
  if (payloads.some((p) => p.high_priority) && !(await planOf(db, dataset.organization_id)).high_priority) {
    throw planLimitReached("high_priority: the organization's plan has no priority ingestion");
  }
  await assertGroupsExist(
    db,
    dataset.id,
    payloads.flatMap((p) => p.group_ids ?? []),
  );

  // An empty tracking id is a tracking id like any other (the unique index holds it): not a missing one.
  const trackingIds = columns.flatMap((c) => (c.tracking_id != null ? [c.tracking_id] : []));
  const existing = new Map<string, StoredChunk>(
    trackingIds.length
      ? (await db<StoredChunk>('chunks').where({ dataset_id: dataset.id }).whereIn('tracking_id', trackingIds)).map((row) => [row.tracking_id!, row])
      : [],
  );
  const plans = payloads.map((payload, i) => {
    const found = columns[i].tracking_id != null ? existing.get(columns[i].tracking_id!) : undefined;
    if (!found) return { action: 'insert' as const, chunk: columns[i], payload };
    if (!payload.upsert_by_tracking_id) return { action: 'keep' as const, chunk: { ...columns[i], id: found.id }, payload };
    return { action: 'update' as const, chunk: { ...columns[i], id: found.id }, payload, previous: found };
  });
  const writes = plans.filter((p) => p.action !== 'keep');
  const derived = await derive(
    services,
    dataset,
    writes.map((p) => p.chunk),
  );
  await indexChunks(services, dataset, derived);

  const inserts = plans.filter((p) => p.action === 'insert');
  const updates = plans.filter((p) => p.action === 'update');
  let raced: string[] = [];
  try {
    raced = await db.transaction(async (trx) => {
      await guard?.(trx);
      const derivedOf = new Map(derived.map((d) => [d.chunk.id, d]));
      const inserted = await insertChunks(
        trx,
        dataset,
        inserts.map((p) => derivedOf.get(p.chunk.id)!),
      );
      for (const { chunk } of updates) {
        await trx('chunks')
          .where({ id: chunk.id })
          .update({ ...contentRow(trx, chunk), updated_at: trx.fn.now() });
        await trx('chunk_group_bookmarks').where({ chunk_id: chunk.id }).del();
      }
      await storeVectors(
        trx,
        dataset,
        updates.map((u) => derivedOf.get(u.chunk.id)!),
      );
      const stored = new Set([...inserted, ...updates.map((u) => u.chunk.id)]);
      const memberships = [];
      for (const plan of writes) {
        if (!stored.has(plan.chunk.id)) continue;
        const groupIds = await resolveGroups(trx, dataset.id, plan.payload.group_ids, plan.payload.group_tracking_ids);
        memberships.push({ chunkId: plan.chunk.id, groupIds });
      }
      await bookmark(trx, memberships);
      await reservePlanCapacity(trx, dataset.organization_id, { chunks: inserted.length }, { written: true });
      // A chunk with the same tracking id committed by a concurrent request won: keep that one.
      return inserts.map((p) => p.chunk.id).filter((id) => !stored.has(id));
    });
  } catch (error) {
    await restoreIndex(
      services,
      dataset.id,
      inserts.map((p) => p.chunk.id),
      updates.map((u) => u.previous!),
    );
    throw error;
  }
  if (raced.length) await services.lexical.remove(dataset.id, raced).catch(() => {});

  const byId = new Map<string, StoredChunk>(
    (
      await db<StoredChunk>('chunks').whereIn(
        'id',
        plans.map((p) => p.chunk.id),
      )
    ).map((row) => [row.id, row]),
  );
  const byTrackingId = new Map([...byId.values()].filter((r) => r.tracking_id != null).map((r) => [r.tracking_id!, r]));
  return plans.map((p) => byId.get(p.chunk.id) ?? byTrackingId.get(p.chunk.tracking_id!)!);
}

function columnsOf(payload: T.ChunkReqPayload, datasetId: string, where: string, id: string = randomUUID()): ChunkColumns {
  if (payload.chunk_html == null) throw badRequest(`${where}chunk_html: required to create a chunk`);
  return {
    id,
    dataset_id: datasetId,
    tracking_id: payload.tracking_id ?? null,
    chunk_html: payload.chunk_html,
    convert_html_to_text: payload.convert_html_to_text ?? true,
    semantic_content: payload.semantic_content ?? null,
    fulltext_content: payload.fulltext_content ?? null,
    fulltext_boost: payload.fulltext_boost ?? null,
    semantic_boost: payload.semantic_boost ?? null,
    split_avg: payload.split_avg ?? false,
    link: payload.link ?? null,
    metadata: payload.metadata ?? null,
    tag_set: payload.tag_set ?? null,
    time_stamp: parseTimeStamp(payload.time_stamp, where),
    weight: finite(payload.weight, `${where}weight`) ?? 1,
    num_value: finite(payload.num_value, `${where}num_value`),
    image_urls: payload.image_urls ?? null,
    location_lat: payload.location?.lat ?? null,
    location_lon: payload.location?.lon ?? null,
  };
}

function assertUniqueTrackingIds(columns: ChunkColumns[], where: (i: number) => string): void {
  const seen = new Map<string, number>();
  columns.forEach((c, i) => {
    if (c.tracking_id == null) return;
    if (seen.has(c.tracking_id)) throw badRequest(`${where(i)}tracking_id: ${c.tracking_id} is also given to chunk ${seen.get(c.tracking_id)} of the batch`);
    seen.set(c.tracking_id, i);
  });
}
