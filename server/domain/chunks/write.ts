// Shared steps of every chunk write: the row's columns, the vectors and index entries derived from
// them, group memberships, and undoing index entries when the database refuses the write.
import type { Knex } from 'knex';
import { embedderFor, EmbeddingError } from '../../engines/embeddings/index.js';
import { badRequest, HttpError } from '../../errors.js';
import type { Services } from '../../services.js';
import { surfaceWords } from '../../search/query/words.js';
import { ensureVectorIndex, insertWithVectors, needsVectorIndex, writeVectors } from '../../store/vectors.js';
import { datasetConfig } from '../datasetConfig.js';
import type { DatasetRow } from '../datasets.js';
import { lexicalText } from './content.js';
import type { ChunkRow } from './records.js';
import { chunkVectors, type VectorFields } from './vectors.js';

/** The columns a chunk write stores (everything but timestamps). */
export interface ChunkColumns extends VectorFields {
  id: string;
  dataset_id: string;
  tracking_id: string | null;
  link: string | null;
  metadata: unknown;
  tag_set: string[] | null;
  time_stamp: string | null;
  weight: number;
  num_value: number | null;
  image_urls: string[] | null;
  location_lat: number | null;
  location_lon: number | null;
}

export type StoredChunk = ChunkRow & VectorFields;

/** What a chunk write uses of the services (the workflow activities have these too). */
export type ChunkWriteServices = Pick<Services, 'store' | 'lexical'> & { config: Pick<Services['config'], 'outbound'> };

/** Column values as the driver wants them: JSON columns serialised. */
export function dbColumns(chunk: ChunkColumns): Record<string, unknown> {
  return {
    ...chunk,
    metadata: chunk.metadata === undefined || chunk.metadata === null ? null : JSON.stringify(chunk.metadata),
    fulltext_boost: chunk.fulltext_boost ? JSON.stringify(chunk.fulltext_boost) : null,
    semantic_boost: chunk.semantic_boost ? JSON.stringify(chunk.semantic_boost) : null,
  };
}

export interface Derived {
  chunk: ChunkColumns;
  vector: number[];
}

/** Embeds the chunks (one batch for all of them); a failing endpoint refuses the write. */
export async function derive(services: ChunkWriteServices, dataset: DatasetRow, chunks: ChunkColumns[]): Promise<Derived[]> {
  if (chunks.length === 0) return [];
  const config = datasetConfig(dataset);
  const embedder = embedderFor(config, services.config.outbound);
  let vectors: number[][];
  try {
    vectors = await chunkVectors(embedder, chunks);
  } catch (error) {
    if (error instanceof EmbeddingError) throw new ChunkEmbeddingError(`the chunks could not be embedded: ${error.message}`, error.transient);
    throw error;
  }
  return chunks.map((chunk, i) => ({ chunk, vector: vectors[i] }));
}

/**
 * The chunks could not be embedded: 400 to an API caller, as the reference answers. `transient`
 * (the endpoint failed rather than refused the input) tells durable work that a retry may succeed.
 */
export class ChunkEmbeddingError extends HttpError {
  constructor(
    message: string,
    readonly transient: boolean,
  ) {
    super(400, message);
    this.name = 'ChunkEmbeddingError';
  }
}

/** Writes the index entries first: if the index fails, nothing reaches the database. */
export async function indexChunks(services: ChunkWriteServices, dataset: DatasetRow, derived: Derived[]): Promise<void> {
  if (derived.length === 0) return;
  await prepareVectorIndex(services, dataset);
  try {
    await services.lexical.upsert(derived.map(({ chunk }) => ({ id: chunk.id, datasetId: chunk.dataset_id, text: lexicalText(chunk) })));
  } catch (error) {
    await services.lexical
      .remove(
        derived[0].chunk.dataset_id,
        derived.map((d) => d.chunk.id),
      )
      .catch(() => {});
    throw badRequest(`the ${services.lexical.kind} index refused the chunks: ${(error as Error).message}`);
  }
}

/**
 * Puts index entries back as the database has them, after a write the database refused: entries
 * of chunks that were never stored go, entries of chunks that were being updated get their old text.
 */
export async function restoreIndex(services: ChunkWriteServices, datasetId: string, newIds: string[], previous: StoredChunk[]): Promise<void> {
  await services.lexical.remove(datasetId, newIds).catch(() => {});
  if (previous.length) {
    await services.lexical.upsert(previous.map((row) => ({ id: row.id, datasetId, text: lexicalText(row) }))).catch(() => {});
  }
}

/** Makes sure the dataset's vector index exists when it needs one; before the write's transaction, not inside it. */
export async function prepareVectorIndex(services: ChunkWriteServices, dataset: DatasetRow): Promise<void> {
  const config = datasetConfig(dataset);
  if (needsVectorIndex(config.DISTANCE_METRIC)) await ensureVectorIndex(services.store.db, dataset.id, config.EMBEDDING_SIZE, config.DISTANCE_METRIC);
}

/**
 * Inserts new chunks with their vectors, in one statement (the write's locks are held from it to
 * commit: a round trip less while they are). A chunk whose tracking id a concurrent write stored
 * first is not stored. Answers the ids of the chunks stored.
 */
export async function insertChunks(trx: Knex.Transaction, dataset: DatasetRow, derived: Derived[]): Promise<string[]> {
  if (derived.length === 0) return [];
  const rows = trx('chunks')
    .insert(derived.map(({ chunk }) => contentRow(trx, chunk)))
    .onConflict(['dataset_id', 'tracking_id'])
    .ignore()
    .returning('id');
  return insertWithVectors(
    trx,
    rows,
    dataset.id,
    derived.map(({ chunk, vector }) => ({ chunkId: chunk.id, vector })),
  );
}

/** Writes the vectors of stored chunks, in the chunks' transaction. */
export async function storeVectors(trx: Knex.Transaction, dataset: DatasetRow, derived: Derived[]): Promise<void> {
  if (derived.length === 0) return;
  await writeVectors(
    trx,
    dataset.id,
    derived.map(({ chunk, vector }) => ({ chunkId: chunk.id, vector })),
  );
}

/**
 * The row of a chunk whose content is written: its columns with the BM25 terms and surface words of
 * its lexical text, computed by the statement that stores the row. Triggers derive the BM25 length
 * (migration 037), postings and counts (014_bm25_postings) and the vocabulary (009_vocabulary) from
 * them. Written with the row rather than by an update after it, a chunk gets one version and one
 * entry in each index, and the triggers run once.
 */
export function contentRow(db: Knex, chunk: ChunkColumns): Record<string, unknown> {
  return { ...dbColumns(chunk), ...termColumns(db, lexicalText(chunk)) };
}

/** Postgres text cannot hold NUL, which may occur in extracted text. */
const storableText = (text: string) => text.replace(/\u0000/g, '');

/**
 * A row's BM25 terms (stemmed by PostgreSQL's English analyzer, stop words dropped, with positions)
 * and surface words, of its lexical text; a trigger derives the BM25 length from the terms
 * (migration 037_bm25_length_from_terms). For the write path and for bulk inserts doing its work.
 */
export function termColumns(db: Knex, text: string): { bm25_terms: Knex.Raw; words: string[] } {
  return {
    bm25_terms: db.raw("to_tsvector('english', ?::text)", [storableText(text)]),
    words: surfaceWords(text),
  };
}

/** Group ids for the given ids (which must exist) and tracking ids (created when missing). */
export async function resolveGroups(
  trx: Knex.Transaction,
  datasetId: string,
  groupIds: string[] | null | undefined,
  groupTrackingIds: string[] | null | undefined,
): Promise<string[]> {
  const ids = new Set(groupIds ?? []);
  const trackingIds = [...new Set(groupTrackingIds ?? [])];
  if (trackingIds.length) {
    await trx('chunk_groups')
      .insert(trackingIds.map((tracking_id) => ({ dataset_id: datasetId, tracking_id, name: tracking_id })))
      .onConflict(['dataset_id', 'tracking_id'])
      .ignore();
    const found: string[] = await trx('chunk_groups').where({ dataset_id: datasetId }).whereIn('tracking_id', trackingIds).pluck('id');
    for (const id of found) ids.add(id);
  }
  return [...ids];
}

/** Refuses group ids that name no group of the dataset (before anything is written). */
export async function assertGroupsExist(db: Knex, datasetId: string, groupIds: string[]): Promise<void> {
  const wanted = [...new Set(groupIds)];
  if (wanted.length === 0) return;
  const found: string[] = await db('chunk_groups').where({ dataset_id: datasetId }).whereIn('id', wanted).pluck('id');
  const missing = wanted.filter((id) => !found.includes(id));
  if (missing.length) throw badRequest(`group_ids: ${missing.join(', ')} name no group of this dataset`);
}

export async function bookmark(trx: Knex.Transaction, memberships: { chunkId: string; groupIds: string[] }[]): Promise<void> {
  const rows = memberships.flatMap(({ chunkId, groupIds }) => groupIds.map((group_id) => ({ group_id, chunk_id: chunkId })));
  if (rows.length) await trx('chunk_group_bookmarks').insert(rows).onConflict(['group_id', 'chunk_id']).ignore();
}
