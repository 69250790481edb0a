// What the ranking options read of each candidate chunk, in one statement: its sortable fields (dates
// as seconds since 1970, so they compare as numbers), tags, location, and the HTML when the
// cross-encoder needs its text.
import type { Services } from '../../services.js';

export interface Candidate {
  id: string;
  num_value: number | null;
  weight: number;
  /** Seconds since 1970 (the zone-less time stamp read as UTC). */
  time_stamp: number | null;
  created_at: number;
  tag_set: string[];
  lat: number | null;
  lon: number | null;
  chunk_html: string | null;
}

/** The candidates by id; chunks deleted since retrieval are absent. */
export async function loadCandidates(services: Services, datasetId: string, ids: string[], withHtml: boolean): Promise<Map<string, Candidate>> {
  if (ids.length === 0) return new Map();
  const db = services.store.db;
  const rows: Record<string, unknown>[] = await db('chunks')
    .select(
      'id',
      'num_value',
      'weight',
      'tag_set',
      'location_lat',
      'location_lon',
      db.raw(`extract(epoch from time_stamp)::float8 as time_stamp`),
      db.raw(`extract(epoch from created_at)::float8 as created_at`),
      ...(withHtml ? ['chunk_html'] : []),
    )
    .where({ dataset_id: datasetId })
    .whereRaw('id = any(?::uuid[])', [ids]);
  const number = (value: unknown) => (value == null ? null : Number(value));
  return new Map(
    rows.map((row) => [
      row.id as string,
      {
        id: row.id as string,
        num_value: number(row.num_value),
        weight: Number(row.weight),
        time_stamp: number(row.time_stamp),
        created_at: Number(row.created_at),
        tag_set: (row.tag_set as string[] | null) ?? [],
        lat: number(row.location_lat),
        lon: number(row.location_lon),
        chunk_html: (row.chunk_html as string | null | undefined) ?? null,
      },
    ]),
  );
}

/** The candidates' dense vectors by chunk id, scaled to unit length (so a dot product is the cosine). */
export async function loadUnitVectors(services: Services, datasetId: string, ids: string[]): Promise<Map<string, Float64Array>> {
  if (ids.length === 0) return new Map();
  const rows: { chunk_id: string; embedding: string }[] = await services.store
    .db('chunk_vectors')
    .select('chunk_id', services.store.db.raw('embedding::text as embedding'))
    .where({ dataset_id: datasetId })
    .whereRaw('chunk_id = any(?::uuid[])', [ids]);
  return new Map(rows.map((row) => [row.chunk_id, unit(JSON.parse(row.embedding) as number[])]));
}

function unit(vector: number[]): Float64Array {
  const norm = Math.sqrt(vector.reduce((sum, v) => sum + v * v, 0));
  return Float64Array.from(vector, (v) => (norm === 0 ? 0 : v / norm));
}
