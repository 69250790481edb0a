import type * as T from '../../../sdk/src/generated/types.gen.js';
import type { Hit } from '../types.js';

/** A recommendation made ready: the best `n` chunks passing the filter, best first. */
export type Recommender = (filter: T.ChunkFilter, n: number) => Promise<Hit[]>;

export type RecommendStrategy = 'average_vector' | 'best_score';
export type RecommendKind = 'semantic' | 'fulltext' | 'bm25';
