// `sort_by: {rerank_type: semantic | fulltext | bm25}`: the candidates rescored by another search
// type for `rerank_query` (the search's query unless given), and reordered by that score. A
// candidate the type does not match (no query word, for fulltext and bm25) scores 0; equal scores
// keep the retrieval order.
//
// The scores are the ones a search of that type gives. Semantic: the query's vector against the
// candidates' vectors, by primary key (exact, no graph walk). Fulltext and bm25: retrieval restricted
// to the candidates' ids (a filter condition). Without `rerank_query`, the query is the search's
// (several weighted queries: their texts joined).
import type { DatasetRow } from '../../domain/datasets.js';
import type { Services } from '../../services.js';
import { retrieve } from '../retrieval/index.js';
import { semanticQuery } from '../retrieval/semantic.js';
import type { Hit } from '../types.js';
import { byScore } from './order.js';
import type { RescoreType } from './plan.js';

export async function rerankBySearchType(services: Services, dataset: DatasetRow, hits: Hit[], type: RescoreType, query: string): Promise<Hit[]> {
  if (hits.length === 0) return hits;
  const scores = await scoresOf(
    services,
    dataset,
    type,
    query,
    hits.map((h) => h.id),
  );
  return byScore(hits.map((hit) => ({ id: hit.id, score: scores.get(hit.id) ?? 0 })));
}

async function scoresOf(services: Services, dataset: DatasetRow, type: RescoreType, query: string, ids: string[]): Promise<Map<string, number>> {
  if (type === 'semantic') return semanticScores(services, dataset, query, ids);
  const { hits } = await retrieve(services, type, { dataset, query, filter: { must: [{ ids }] }, limit: ids.length, offset: 0 });
  return new Map(hits.map((h) => [h.id, h.score]));
}

async function semanticScores(services: Services, dataset: DatasetRow, query: string, ids: string[]): Promise<Map<string, number>> {
  const db = services.store.db;
  const semantic = await semanticQuery(services, { dataset, query, limit: ids.length, offset: 0 });
  const rows: { id: string; score: number }[] = await db('chunk_vectors')
    .select('chunk_vectors.chunk_id as id', db.raw(`${semantic.score} as score`, [semantic.vector]))
    .where('chunk_vectors.dataset_id', dataset.id)
    .whereRaw('chunk_vectors.chunk_id = any(?::uuid[])', [ids]);
  return new Map(rows.map((r) => [r.id, Number(r.score)]));
}
