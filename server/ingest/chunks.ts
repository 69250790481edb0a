// Creating a file's chunks from its staged pieces, through the same path as POST /api/chunk (vectors,
// lexical index, BM25 terms, plan quota), under ids derived from (file, position): a piece whose
// chunk already exists is skipped, so a retried or replayed range creates nothing twice. Each batch
// locks the file's row as it writes, so none lands after the file's deletion has begun.
import type { Knex } from 'knex';
import type * as T from '../../sdk/src/generated/types.gen.js';
import { BATCH_LIMIT, createChunks } from '../domain/chunks/create.js';
import { deleteChunks } from '../domain/chunks/delete.js';
import type { ChunkWriteServices } from '../domain/chunks/write.js';
import type { DatasetRow } from '../domain/datasets.js';
import { lockLiveFile } from './file.js';
import { fileChunkId } from './ids.js';
import type { StagedPiece } from './staging.js';
import { yieldToEventLoop } from './yield.js';

export interface PieceChunksResult {
  /** Chunks this call created. */
  created: number;
  /** Pieces whose chunk was already there (an earlier attempt made it, or its tracking id was taken). */
  skipped: number;
}

export async function createPieceChunks(
  services: ChunkWriteServices,
  dataset: DatasetRow,
  file: { id: string; groupId: string },
  pieces: StagedPiece[],
  progress: () => void = () => {},
): Promise<PieceChunksResult> {
  const ids = pieces.map((p) => fileChunkId(file.id, p.position));
  const existing = new Set<string>(ids.length ? await services.store.db('chunks').whereIn('id', ids).pluck('id') : []);
  const todo = pieces.map((piece, i) => ({ piece, id: ids[i] })).filter(({ id }) => !existing.has(id));
  let created = 0;
  for (const batch of batches(todo)) {
    const payloads: T.ChunkReqPayload[] = batch.map(({ piece }) => ({ ...piece.payload, group_ids: [file.groupId] }));
    const stored = await createChunks(services, dataset, payloads, true, {
      ids: batch.map((b) => b.id),
      guard: (trx) => lockLiveFile(trx, dataset.id, file.id),
    });
    const wanted = new Set(batch.map((b) => b.id));
    created += stored.filter((row) => wanted.has(row.id)).length;
    progress();
    await yieldToEventLoop();
  }
  return { created, skipped: pieces.length - created };
}

/**
 * Batches of at most BATCH_LIMIT, cut before a tracking id that the batch already has (a CSV may
 * repeat one: the rows then apply in file order, as separate requests would).
 */
function* batches<E extends { piece: StagedPiece }>(entries: E[]): Generator<E[]> {
  let batch: E[] = [];
  let trackingIds = new Set<string>();
  for (const entry of entries) {
    const trackingId = entry.piece.payload.tracking_id;
    if (batch.length >= BATCH_LIMIT || (trackingId && trackingIds.has(trackingId))) {
      yield batch;
      batch = [];
      trackingIds = new Set();
    }
    batch.push(entry);
    if (trackingId) trackingIds.add(trackingId);
  }
  if (batch.length) yield batch;
}

/** Deletes the chunks this file's ingestion made for positions [from, from + count); returns how many. */
export async function discardPieceChunks(
  services: Pick<ChunkWriteServices, 'store' | 'lexical'>,
  datasetId: string,
  fileId: string,
  from: number,
  count: number,
): Promise<number> {
  const ids = Array.from({ length: count }, (_, i) => fileChunkId(fileId, from + i));
  return deleteChunks(services, datasetId, ids);
}

/** How many of the chunks for positions [0, pieces) exist: the file's chunks, however many runs made them. */
export async function countPieceChunks(db: Knex, datasetId: string, fileId: string, pieces: number): Promise<number> {
  let total = 0;
  for (let from = 0; from < pieces; from += 1000) {
    const ids = Array.from({ length: Math.min(1000, pieces - from) }, (_, i) => fileChunkId(fileId, from + i));
    const [{ count }] = await db('chunks').where('dataset_id', datasetId).whereIn('id', ids).count<{ count: string }[]>('* as count');
    total += Number(count);
  }
  return total;
}
