// Chunks written straight into the engines by their bulk paths: the rows, vectors and lexical
// entries the service's write path stores for the same payloads. The ingest suite times it against
// the API (the same work); the search suite loads corpora too large for the API's pace with it.
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { Client as TypesenseClient } from 'typesense';
import type { ChunkReqPayload } from '../sdk/src/generated/types.gen.js';
import type { Config } from '../server/config.js';
import { innerText } from '../server/domain/chunks/content.js';
import { termColumns } from '../server/domain/chunks/write.js';
import { type Embedder, embedderFor } from '../server/engines/embeddings/index.js';
import { STRICT_OUTBOUND } from '../server/engines/outbound.js';
import { type DistanceMetric, ensureVectorIndex, needsVectorIndex, writeVectors } from '../server/store/vectors.js';

export interface BulkDataset {
  id: string;
  /** EMBEDDING_MODEL_NAME: the raw path embeds with the dataset's own embedder. */
  model: string;
  size: number;
  metric: DistanceMetric;
}

/** Time in each step of a batch, summed over the batches (ms). */
export interface BulkSteps {
  extract: number;
  embed: number;
  chunks: number;
  vectors: number;
  lexical: number;
}

/** The lexical engine's own bulk write, and what a verification reads back. */
export interface RawLexical {
  write(datasetId: string, ids: string[], texts: string[]): Promise<void>;
  count(datasetId: string): Promise<number>;
  text(datasetId: string, id: string): Promise<string | null>;
}

export function rawLexical(config: Config, db: Knex): RawLexical {
  if (config.lexical.kind === 'postgres') {
    // The chunks' terms are PostgreSQL's full-text index, written with the chunk rows: nothing more to
    // write; a verification reads back the terms.
    return {
      write: async () => {},
      count: async (datasetId) =>
        Number((await db('chunks').where({ dataset_id: datasetId }).whereNotNull('bm25_terms').count<{ n: string }[]>('* as n'))[0].n),
      text: async (datasetId, id) => (await db('chunks').where({ dataset_id: datasetId, id }).first(db.raw('bm25_terms::text as terms')))?.terms ?? null,
    };
  }
  const { url, apiKey, collection } = config.lexical;
  const client = new TypesenseClient({ nodes: [{ url: url.replace(/\/+$/, '') }], apiKey, connectionTimeoutSeconds: 60, logLevel: 'error' });
  const documents = () => client.collections<{ id: string; dataset_id: string; text: string }>(collection).documents();
  return {
    // The documents import endpoint (JSON lines), one call per batch, as upserts like the service's.
    write: async (datasetId, ids, texts) => {
      const results = await documents().import(
        ids.map((id, i) => ({ id, dataset_id: datasetId, text: texts[i] })),
        { action: 'upsert', throwOnFail: false },
      );
      const failed = results.filter((r) => !r.success);
      if (failed.length) throw new Error(`Typesense import rejected ${failed.length} documents: ${failed[0].error}`);
    },
    count: async (datasetId) => (await documents().search({ q: '*', query_by: 'text', filter_by: `dataset_id:=\`${datasetId}\``, per_page: 1 })).found,
    text: async (_datasetId, id) => {
      try {
        return (await client.collections<{ id: string; dataset_id: string; text: string }>(collection).documents(id).retrieve()).text ?? null;
      } catch {
        return null;
      }
    },
  };
}

/** The row the service stores for a payload (create.ts `columnsOf` + write.ts `dbColumns`). */
function chunkRow(p: ChunkReqPayload, id: string, datasetId: string): Record<string, unknown> {
  return {
    id,
    dataset_id: datasetId,
    tracking_id: p.tracking_id ?? null,
    chunk_html: p.chunk_html,
    convert_html_to_text: p.convert_html_to_text ?? true,
    semantic_content: p.semantic_content ?? null,
    fulltext_content: p.fulltext_content ?? null,
    fulltext_boost: p.fulltext_boost ? JSON.stringify(p.fulltext_boost) : null,
    semantic_boost: p.semantic_boost ? JSON.stringify(p.semantic_boost) : null,
    split_avg: p.split_avg ?? false,
    link: p.link ?? null,
    metadata: p.metadata == null ? null : JSON.stringify(p.metadata),
    tag_set: p.tag_set ?? null,
    time_stamp: p.time_stamp ? p.time_stamp.replace('T', ' ') : null,
    weight: p.weight ?? 1,
    num_value: p.num_value ?? null,
    image_urls: p.image_urls ?? null,
    location_lat: p.location?.lat ?? null,
    location_lon: p.location?.lon ?? null,
  };
}

/** Writes batches of plain HTML chunks into a dataset, straight into the engines. */
export class BulkWriter {
  readonly steps: BulkSteps = { extract: 0, embed: 0, chunks: 0, vectors: 0, lexical: 0 };
  private readonly embedder: Embedder;

  constructor(
    private readonly db: Knex,
    private readonly lexical: RawLexical,
    private readonly dataset: BulkDataset,
  ) {
    this.embedder = embedderFor({ EMBEDDING_MODEL_NAME: dataset.model, EMBEDDING_SIZE: dataset.size }, STRICT_OUTBOUND);
  }

  async write(slice: ChunkReqPayload[]): Promise<void> {
    // The bulk path handles the corpus's shape only: HTML converted to text, no boosts or split averaging.
    if (
      slice.some((p) => p.semantic_content || p.fulltext_content || p.fulltext_boost || p.semantic_boost || p.split_avg || p.convert_html_to_text === false)
    ) {
      throw new Error('the bulk path expects plain HTML chunks');
    }
    let t = performance.now();
    const lap = (step: keyof BulkSteps) => {
      const now = performance.now();
      this.steps[step] += now - t;
      t = now;
    };
    const { db, dataset } = this;
    const ids = slice.map(() => randomUUID());
    // The same extraction as the service; the inner text is both the embedded and the indexed text.
    const texts = slice.map((p) => innerText(p.chunk_html ?? ''));
    // With the terms, length and words the write path derives (and the triggers that index them fire).
    const rows = slice.map((p, k) => ({ ...chunkRow(p, ids[k], dataset.id), ...termColumns(db, texts[k]) }));
    lap('extract');
    const vectors = await this.embedder.embed(texts, 'document');
    lap('embed');
    await db('chunks').insert(rows);
    lap('chunks');
    await writeVectors(
      db,
      dataset.id,
      ids.map((chunkId, k) => ({ chunkId, vector: vectors[k] })),
    );
    lap('vectors');
    await this.lexical.write(dataset.id, ids, texts);
    lap('lexical');
  }
}

/**
 * The dataset's HNSW index, when the service keeps one for it (store/vectors.ts), built over vectors
 * already written (a bulk load writes them first: one build is far quicker than a graph insert per
 * vector), with memory to hold the graph while it is built, as PostgreSQL's documentation advises
 * for index builds. Whether one was built.
 */
export async function buildVectorIndex(db: Knex, dataset: BulkDataset, maintenanceMemory: string): Promise<boolean> {
  if (!needsVectorIndex(dataset.metric)) return false;
  await db.transaction(async (trx) => {
    await trx.raw(`set local maintenance_work_mem = '${maintenanceMemory}'`);
    await ensureVectorIndex(trx, dataset.id, dataset.size, dataset.metric);
  });
  return true;
}
