// The dense vector a semantic search looks near, when it is more than one text's embedding:
//
// - several weighted queries: Σ weightᵢ · vectorᵢ, the weighted sum of the queries' embeddings (as the
//   reference does). With a dot-product metric a chunk's score is then the weighted sum of its scores
//   against each query; with cosine, the direction of that sum.
// - `scoring_options.semantic_boost`: the vector then moves along the straight line towards the
//   phrase's vector by `distance_factor` times their distance (away from it when negative), as a
//   chunk's semantic boost moves the chunk's vector.
// All texts go to the embedder in one batch.
import type * as T from '../../../sdk/src/generated/types.gen.js';
import { moveTowards } from '../../domain/chunks/vectors.js';
import { datasetConfig } from '../../domain/datasetConfig.js';
import type { DatasetRow } from '../../domain/datasets.js';
import { embedderFor, EmbeddingError } from '../../engines/embeddings/index.js';
import { badRequest } from '../../errors.js';
import type { Services } from '../../services.js';
import type { WeightedText } from './multi.js';

export async function queryVector(
  services: Services,
  dataset: DatasetRow,
  queries: WeightedText[],
  boost: T.SemanticBoost | null | undefined,
): Promise<number[]> {
  const texts = queries.map((q) => q.text);
  if (boost) texts.push(boost.phrase);
  let vectors: number[][];
  try {
    vectors = await embedderFor(datasetConfig(dataset), services.config.outbound).embed(texts, 'query');
  } catch (error) {
    if (error instanceof EmbeddingError) throw badRequest(`the query could not be embedded: ${error.message}`);
    throw error;
  }
  const combined =
    queries.length === 1
      ? vectors[0]
      : weightedSum(
          vectors.slice(0, queries.length),
          queries.map((q) => q.weight),
        );
  return boost ? moveTowards(combined, vectors[queries.length], boost.distance_factor) : combined;
}

export function weightedSum(vectors: number[][], weights: number[]): number[] {
  const sum = new Array<number>(vectors[0].length).fill(0);
  vectors.forEach((vector, i) => {
    for (let d = 0; d < vector.length; d++) sum[d] += weights[i] * vector[d];
  });
  return sum;
}
