// Dense vectors in pgvector. One table for every dataset, and one partial HNSW index per dataset over
// its rows, cast to the dataset's dimension and built for its distance metric, so each dataset's
// nearest-neighbour search walks a graph of its own vectors only.
import type { Knex } from 'knex';

export type DistanceMetric = 'cosine' | 'euclidean' | 'dot' | 'manhattan';

const operatorClasses: Record<DistanceMetric, string> = {
  cosine: 'vector_cosine_ops',
  euclidean: 'vector_l2_ops',
  dot: 'vector_ip_ops',
  manhattan: 'vector_l1_ops',
};

/** pgvector's distance operator of each metric (smaller is closer; `<#>` is the negated inner product). */
export const distanceOperators: Record<DistanceMetric, string> = { cosine: '<=>', euclidean: '<->', dot: '<#>', manhattan: '<+>' };

/** pgvector's limit on hnsw.ef_search. */
export const MAX_EF_SEARCH = 1000;
/**
 * The smallest hnsw.ef_search used (pgvector's default is 40). The candidate list grows in steps of
 * this size with the rows wanted, so that the first pages of a search walk the graph alike.
 */
export const EF_SEARCH_STEP = 100;
/** How many index tuples an iterative scan may visit (pgvector's default is 20 000). */
const MAX_SCAN_TUPLES = 200_000;
/** Memory of an iterative scan, as a multiple of work_mem (pgvector's default is 1). */
const SCAN_MEM_MULTIPLIER = 4;

/**
 * The HNSW settings of every connection, set once when it opens: a candidate list of EF_SEARCH_STEP,
 * and an iterative scan that goes on walking the graph while too few rows pass a filter. A search
 * for more rows raises ef_search in a transaction of its own (`hnswSettings`).
 */
export function hnswSessionSql(): string {
  return Object.entries(hnswSettings(EF_SEARCH_STEP))
    .map(([name, value]) => `set ${name} = '${value}'`)
    .join('; ');
}

/**
 * The metrics whose searches the vectors held in memory answer (search/retrieval/vectors/; manhattan
 * has no graph metric with the same order): their datasets keep no HNSW index here, whose inserts took half of a chunk write's database time.
 * Searches that find a dataset's vectors not held (still being read, over the memory budget)
 * compute its distances exactly instead.
 */
export const HELD_METRICS: ReadonlySet<DistanceMetric> = new Set(['cosine', 'dot', 'euclidean']);

/** Whether a dataset of this metric keeps an HNSW index (only when its vectors are not held in memory). */
export function needsVectorIndex(metric: DistanceMetric): boolean {
  return !HELD_METRICS.has(metric);
}

/** The HNSW settings a scan for `efSearch` candidates needs. */
export function hnswSettings(efSearch: number): Record<string, string> {
  return {
    'hnsw.iterative_scan': 'relaxed_order',
    'hnsw.max_scan_tuples': String(MAX_SCAN_TUPLES),
    'hnsw.scan_mem_multiplier': String(SCAN_MEM_MULTIPLIER),
    'hnsw.ef_search': String(efSearch),
  };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const ensured = new Set<string>();

export function vectorIndexName(datasetId: string): string {
  return `chunk_vectors_hnsw_${datasetId.replace(/-/g, '')}`;
}

/**
 * Creates the dataset's index if it is missing; call it outside a transaction, so the index is
 * committed at once. The dataset id is written into the predicate (a partial index is only used when
 * the query's literal matches it); it is a validated uuid.
 */
export async function ensureVectorIndex(db: Knex, datasetId: string, dimension: number, metric: DistanceMetric): Promise<void> {
  const key = `${datasetId}:${dimension}:${metric}`;
  if (ensured.has(key)) return;
  if (!UUID.test(datasetId) || !Number.isInteger(dimension)) throw new Error(`bad vector index parameters ${datasetId} ${dimension}`);
  try {
    await db.raw(
      `create index if not exists ${vectorIndexName(datasetId)} on chunk_vectors
         using hnsw ((embedding::vector(${dimension})) ${operatorClasses[metric]}) where dataset_id = '${datasetId}'`,
    );
  } catch (error) {
    // Two first writes at once: both saw no index, one created it; the other's catalog insert collides.
    const code = (error as { code?: string }).code;
    if (code !== '23505' && code !== '42P07') throw error;
  }
  ensured.add(key);
}

export async function dropVectorIndex(db: Knex, datasetId: string): Promise<void> {
  if (!UUID.test(datasetId)) return;
  await db.raw(`drop index if exists ${vectorIndexName(datasetId)}`);
  for (const key of ensured) if (key.startsWith(datasetId)) ensured.delete(key);
}

/** Inserts or replaces the vectors of chunks, in one statement. */
export async function writeVectors(db: Knex, datasetId: string, vectors: { chunkId: string; vector: number[] }[]): Promise<void> {
  if (vectors.length === 0) return;
  await db.raw(`${VECTORS_INSERT} ${VECTORS_REPLACE}`, vectorBindings(datasetId, vectors));
}

/** Runs `rows`, an insert of chunk rows returning their `id`, and inserts the vectors of the rows it stored, in one statement; answers those rows' ids. */
export async function insertWithVectors(
  db: Knex,
  rows: Knex.QueryBuilder,
  datasetId: string,
  vectors: { chunkId: string; vector: number[] }[],
): Promise<string[]> {
  const { rows: stored } = await db.raw<{ rows: { id: string }[] }>(
    `with stored as (?) ${VECTORS_INSERT} join stored on stored.id = v.id returning chunk_id as id`,
    [rows, ...vectorBindings(datasetId, vectors)],
  );
  return stored.map((r) => r.id);
}

const VECTORS_INSERT = `insert into chunk_vectors (chunk_id, dataset_id, embedding)
  select v.id, ?::uuid, v.embedding::vector from unnest(?::uuid[], ?::text[]) as v(id, embedding)`;
const VECTORS_REPLACE = 'on conflict (chunk_id) do update set embedding = excluded.embedding';

function vectorBindings(datasetId: string, vectors: { chunkId: string; vector: number[] }[]): [string, string[], string[]] {
  return [datasetId, vectors.map((v) => v.chunkId), vectors.map((v) => vectorLiteral(v.vector))];
}

/**
 * pgvector stores float4: eight significant digits say all of it, in half the text of a double.
 * toPrecision's own text goes as it is (pgvector reads its trailing zeros and exponents): turned
 * back into a number and printed again, it cost twice the time, 6 % of the service's CPU under a
 * load of chunk writes.
 */
export function vectorLiteral(vector: number[]): string {
  return `[${vector.map((v) => v.toPrecision(8)).join(',')}]`;
}

/**
 * A write and a nearest-neighbour read of three vectors through an HNSW index, in a transaction of
 * its own (the table goes at commit): what chunk writes and searches ask of pgvector. A vector
 * extension that cannot run on this CPU (e.g. built with AVX-512 for its build machine) fails here,
 * by name, rather than on a user's first chunk. `create extension vector` must have run.
 */
export const VECTOR_ROUND_TRIP_SQL = `begin;
create temporary table vector_round_trip (v vector(3)) on commit drop;
create index on vector_round_trip using hnsw (v vector_cosine_ops);
insert into vector_round_trip values (array[1, 0, 0]::real[]::vector), ('[0,1,0]'), ('[0.1,1,0]');
select v::text as nearest, vector_norm(v) as norm from vector_round_trip order by v <=> '[0,1,0.05]' limit 1;
commit;`;

/** What VECTOR_ROUND_TRIP_SQL's select answers when pgvector works. */
export const VECTOR_ROUND_TRIP_ANSWER = { nearest: '[0,1,0]', norm: 1 };

export class VectorEngineError extends Error {
  constructor(cause: string) {
    super(`pgvector failed a vector round trip (write and nearest-neighbour read of three vectors): ${cause}`);
    this.name = 'VectorEngineError';
  }
}

/** Runs VECTOR_ROUND_TRIP_SQL; throws VectorEngineError when pgvector does not answer right. */
export async function checkVectorRoundTrip(db: Knex): Promise<void> {
  let answer: unknown;
  try {
    const results = (await db.raw(VECTOR_ROUND_TRIP_SQL)) as unknown;
    answer = selectedRow(results);
  } catch (error) {
    throw new VectorEngineError(error instanceof Error ? error.message : String(error));
  }
  const row = answer as { nearest?: string; norm?: number } | undefined;
  if (row?.nearest !== VECTOR_ROUND_TRIP_ANSWER.nearest || Number(row?.norm) !== VECTOR_ROUND_TRIP_ANSWER.norm) {
    throw new VectorEngineError(`the nearest vector came back as ${JSON.stringify(answer)}`);
  }
}

/** The select's row from a multi-statement result (pg gives one result per statement, PGlite likewise). */
function selectedRow(results: unknown): unknown {
  const list = Array.isArray(results) ? results : [results];
  return list.map((r) => (r as { rows?: unknown[] })?.rows?.[0]).find((row) => row && typeof row === 'object' && 'nearest' in row);
}
