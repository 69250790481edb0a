// A chunk's dense vector: its semantic text embedded (averaged over pieces with split_avg), then
// moved towards or away from the semantic boost phrase. All texts of a batch go to the embedder at once.
import type { Embedder } from '../../engines/embeddings/index.js';
import { semanticText, splitForAveraging, type ContentFields } from './content.js';

export interface VectorFields extends ContentFields {
  split_avg: boolean;
  semantic_boost: { phrase: string; distance_factor: number } | null;
}

export async function chunkVectors(embedder: Embedder, chunks: VectorFields[]): Promise<number[][]> {
  const texts: string[] = [];
  const plans = chunks.map((chunk) => {
    const text = semanticText(chunk);
    const pieces = chunk.split_avg ? splitForAveraging(text) : [text];
    const first = texts.length;
    texts.push(...pieces);
    const boost = chunk.semantic_boost ? texts.push(chunk.semantic_boost.phrase) - 1 : -1;
    return { first, count: pieces.length, boost, factor: chunk.semantic_boost?.distance_factor ?? 0 };
  });
  const embedded = texts.length ? await embedder.embed(texts, 'document') : [];
  return plans.map(({ first, count, boost, factor }) => {
    const vector = average(embedded.slice(first, first + count));
    return boost >= 0 ? moveTowards(vector, embedded[boost], factor) : vector;
  });
}

function average(vectors: number[][]): number[] {
  if (vectors.length === 1) return vectors[0];
  const sum = new Array<number>(vectors[0].length).fill(0);
  for (const v of vectors) for (let i = 0; i < v.length; i++) sum[i] += v[i] / vectors.length;
  return sum;
}

/** The point `factor` of the way along the straight line from `from` to `to` (negative: away from it). */
export function moveTowards(from: number[], to: number[], factor: number): number[] {
  return from.map((v, i) => v + factor * (to[i] - v));
}
