// `sort_by: {rerank_type: cross_encoder}`, and hybrid search on a dataset with a reranker: the
// candidates rescored by the dataset's reranker (RERANKER_BASE_URL), which reads the query and each
// chunk's text together. The score is the reranker's. A reranker that fails, or answers for only
// some candidates, fails the search with a 400 naming its endpoint: never a silently different order.
import { innerText } from '../../domain/chunks/content.js';
import { datasetConfig } from '../../domain/datasetConfig.js';
import type { DatasetRow } from '../../domain/datasets.js';
import { rerankerFor, RerankerError } from '../../engines/reranker/index.js';
import { badRequest } from '../../errors.js';
import type { Services } from '../../services.js';
import type { Hit } from '../types.js';
import type { Candidate } from './candidates.js';
import { byScore } from './order.js';

export async function rerankWithCrossEncoder(
  services: Services,
  dataset: DatasetRow,
  hits: Hit[],
  candidates: Map<string, Candidate>,
  query: string,
  implicit: boolean,
): Promise<Hit[]> {
  const why = implicit ? "search_type hybrid (reranked by the dataset's reranker)" : 'sort_options.sort_by.rerank_type cross_encoder';
  const reranker = rerankerFor(datasetConfig(dataset), services.config.outbound);
  if (!reranker) throw badRequest(`${why}: this dataset configures no reranker (set RERANKER_BASE_URL in its server_configuration)`);
  if (hits.length === 0) return hits;
  const texts = hits.map((hit) => innerText(candidates.get(hit.id)?.chunk_html ?? ''));
  let scores: number[];
  try {
    scores = await reranker.rerank(query, texts);
  } catch (error) {
    if (error instanceof RerankerError) throw badRequest(`${why}: ${error.message}`);
    throw error;
  }
  return byScore(hits.map((hit, i) => ({ id: hit.id, score: scores[i] })));
}
