// Semantic recommendations: the examples' dense vectors in pgvector, scored as semantic search scores
// (higher is better: cosine 1 − d, dot the inner product, euclidean and manhattan 1 / (1 + d)).
//
//   average_vector  one query vector, 2·mean(positives) − mean(negatives) (the positives' mean alone
//                   without negatives; with cosine, each vector is normalised first), searched like a
//                   query through the dataset's HNSW index.
//   best_score      candidates are the nearest chunks of each positive (through the index); each is
//                   scored exactly against every example: its best positive similarity when that beats
//                   its best negative one, else −(best negative)². With negatives only, every chunk
//                   passing the filter is a candidate (an exact scan of the dataset).
import type { Knex } from 'knex';
import type * as T from '../../../sdk/src/generated/types.gen.js';
import { datasetConfig } from '../../domain/datasetConfig.js';
import type { DatasetRow } from '../../domain/datasets.js';
import type { Services } from '../../services.js';
import { distanceOperators, vectorLiteral, type DistanceMetric } from '../../store/vectors.js';
import { applyChunkFilter } from '../filters.js';
import { nearest, scoreSql, vectorSearch } from '../retrieval/semantic.js';
import type { Hit } from '../types.js';
import type { Examples } from './examples.js';
import type { Recommender } from './types.js';

interface Space {
  dataset: DatasetRow;
  dimension: number;
  metric: DistanceMetric;
}

function spaceOf(dataset: DatasetRow): Space {
  const config = datasetConfig(dataset);
  return { dataset, dimension: config.EMBEDDING_SIZE, metric: config.DISTANCE_METRIC };
}

/** The `n` chunks nearest the vector that pass the filter, through the dataset's index. */
function nearestTo(services: Services, space: Space, vector: string, filter: T.ChunkFilter, n: number): Promise<Hit[]> {
  // The query text is not used by the vector search; it names what is searched for in logs.
  return nearest(services, vectorSearch(space.dataset, vector), { dataset: space.dataset, query: 'recommendation', filter, limit: n, offset: 0 }, n);
}

/** The mean of the chunks' vectors (each normalised with cosine), or null when none has a vector. */
async function meanVector(db: Knex, space: Space, chunkIds: string[]): Promise<number[] | null> {
  if (chunkIds.length === 0) return null;
  const vector = `embedding::vector(${space.dimension})`;
  const [row] = await db('chunk_vectors')
    .where({ dataset_id: space.dataset.id })
    .whereRaw('chunk_id = any(?::uuid[])', [chunkIds])
    .select(db.raw(`avg(${space.metric === 'cosine' ? `l2_normalize(${vector})` : vector})::text as mean`));
  return row?.mean ? (JSON.parse(row.mean) as number[]) : null;
}

async function averageVector(services: Services, space: Space, examples: Examples): Promise<Recommender> {
  const db = services.store.db;
  const positive = await meanVector(db, space, examples.positive);
  if (!positive) return async () => [];
  const negative = await meanVector(db, space, examples.negative);
  const query = vectorLiteral(negative ? positive.map((p, i) => 2 * p - negative[i]) : positive);
  return (filter, n) => (n > 0 ? nearestTo(services, space, query, filter, n) : Promise.resolve([]));
}

function bestScore(services: Services, space: Space, examples: Examples): Recommender {
  const db = services.store.db;
  const vector = `embedding::vector(${space.dimension})`;
  return async (filter, n) => {
    if (n <= 0) return [];
    let candidates: string[] | null = null;
    if (examples.positive.length > 0) {
      const positives: { v: string }[] = await db('chunk_vectors')
        .where({ dataset_id: space.dataset.id })
        .whereRaw('chunk_id = any(?::uuid[])', [examples.positive])
        .select(db.raw(`${vector}::text as v`));
      const found = new Set<string>();
      // One after the other: PGlite is one connection, and each search is a transaction.
      for (const { v } of positives) for (const hit of await nearestTo(services, space, v, filter, n)) found.add(hit.id);
      candidates = [...found];
      if (candidates.length === 0) return [];
    }
    return scoreBest(db, space, examples, filter, candidates, n);
  };
}

/** The best `n` candidates (or chunks passing the filter, without candidates) by the best_score rule. */
async function scoreBest(db: Knex, space: Space, examples: Examples, filter: T.ChunkFilter, candidates: string[] | null, n: number): Promise<Hit[]> {
  const operator = distanceOperators[space.metric];
  const sim = scoreSql[space.metric](`(chunk_vectors.embedding::vector(${space.dimension}) ${operator} e.vec)`);
  const ids = [...examples.positive, ...examples.negative];
  const flags = [...examples.positive.map(() => true), ...examples.negative.map(() => false)];
  const perChunk = db
    .from('chunk_vectors')
    .join('chunks', 'chunks.id', 'chunk_vectors.chunk_id')
    .joinRaw(
      `cross join (select cv.embedding::vector(${space.dimension}) as vec, x.positive
                     from chunk_vectors cv join unnest(?::uuid[], ?::boolean[]) as x(id, positive) on x.id = cv.chunk_id
                    where cv.dataset_id = ?) as e`,
      [ids, flags, space.dataset.id],
    )
    .where('chunk_vectors.dataset_id', space.dataset.id)
    .groupBy('chunks.id')
    .select('chunks.id', db.raw(`max(${sim}) filter (where e.positive) as pos`), db.raw(`max(${sim}) filter (where not e.positive) as neg`));
  if (candidates) perChunk.whereRaw('chunk_vectors.chunk_id = any(?::uuid[])', [candidates]);
  applyChunkFilter(perChunk, filter, 'chunks', 'filters');
  const rows: { id: string; score: number }[] = await db
    .from(perChunk.as('s'))
    .select('id', db.raw('case when neg is null then pos when pos is not null and pos > neg then pos else -(neg * neg) end as score'))
    .orderBy([{ column: 'score', order: 'desc' }, { column: 'id' }])
    .limit(n);
  return rows.map((r) => ({ id: r.id, score: Number(r.score) }));
}

export async function denseRecommender(
  services: Services,
  dataset: DatasetRow,
  examples: Examples,
  strategy: 'average_vector' | 'best_score',
): Promise<Recommender> {
  const space = spaceOf(dataset);
  return strategy === 'average_vector' ? averageVector(services, space, examples) : bestScore(services, space, examples);
}
