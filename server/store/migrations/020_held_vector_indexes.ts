// Datasets whose vectors are held in memory for search (store/vectors.ts, HELD_METRICS) keep no HNSW
// index in pgvector: every chunk write paid its insert, and no search walks it any more. The
// indexes of existing datasets are dropped; a manhattan dataset keeps its own.
import type { Knex } from 'knex';

export async function up(db: Knex): Promise<void> {
  const { rows } = await db.raw<{ rows: { id: string }[] }>(
    `select id from datasets where coalesce(server_configuration->>'DISTANCE_METRIC', 'cosine') <> 'manhattan'`,
  );
  for (const { id } of rows) await db.raw(`drop index if exists chunk_vectors_hnsw_${id.replace(/-/g, '')}`);
}

/** The indexes come back as chunks are written (store/vectors.ts, ensureVectorIndex) once the code wants them. */
export async function down(): Promise<void> {}
