// The SQL of the vectors held in memory: a dataset's vectors page by page, and those of changed
// chunks. Vectors are read in pgvector's binary form (`vector_send`: a 16-bit dimension, 16 bits
// unused, then big-endian float4s), which costs neither printing nor parsing decimal text.
import type { Knex } from 'knex';
import { datasetConfig, type DatasetConfiguration } from '../../../domain/datasetConfig.js';

/** Chunks' vectors: ids, and their vectors one after another. */
export interface VectorPage {
  ids: string[];
  vectors: Float32Array;
}

type Row = { id: string; bytes: Buffer };

/** The rows' vectors of `dimension` (a vector of another size, not the dataset's, is left out). */
function decoded(rows: Row[], dimension: number): VectorPage {
  const ids: string[] = [];
  const vectors = new Float32Array(rows.length * dimension);
  for (const { id, bytes } of rows) {
    if (bytes.readUInt16BE(0) !== dimension) continue;
    const at = ids.length * dimension;
    for (let i = 0; i < dimension; i++) vectors[at + i] = bytes.readFloatBE(4 + 4 * i);
    ids.push(id);
  }
  return { ids, vectors: vectors.subarray(0, ids.length * dimension) };
}

/** Up to `limit` of the dataset's vectors after the chunk id `after`, in id order. */
export async function vectorsPage(
  db: Knex,
  datasetId: string,
  dimension: number,
  after: string | null,
  limit: number,
): Promise<{ page: VectorPage; last: string | null; read: number }> {
  const { rows } = await db.raw<{ rows: Row[] }>(
    `select c.id, vector_send(v.embedding) as bytes
       from chunks c join chunk_vectors v on v.chunk_id = c.id
      where c.dataset_id = ? and c.id > coalesce(?::uuid, '00000000-0000-0000-0000-000000000000')
      order by c.id limit ?`,
    [datasetId, after, limit],
  );
  return { page: decoded(rows, dimension), last: rows.at(-1)?.id ?? null, read: rows.length };
}

/** The vectors of the dataset's chunks among `ids`, as they are now. */
export async function vectorsOf(db: Knex, datasetId: string, dimension: number, ids: string[]): Promise<VectorPage> {
  const { rows } = await db.raw<{ rows: Row[] }>(
    'select chunk_id as id, vector_send(embedding) as bytes from chunk_vectors where chunk_id = any(?::uuid[]) and dataset_id = ?',
    [ids, datasetId],
  );
  return decoded(rows, dimension);
}

/** The dataset's configuration as stored now (null: no such dataset). */
export async function storedConfiguration(db: Knex, datasetId: string): Promise<DatasetConfiguration | null> {
  const row = await db('datasets').where({ id: datasetId }).first('server_configuration');
  return row ? datasetConfig(row) : null;
}
