// Recommendations: chunks like the positive examples and unlike the negative ones, or groups whose
// chunks are. The examples are never recommended themselves (they are excluded by the filter the
// candidates must pass); the request's filter applies to the candidates.
//
//   recommend_type semantic  dense vectors (./recommend/dense.ts)
//   recommend_type bm25, fulltext  weighted terms (./recommend/sparse.ts)
//
// Group recommendations gather the recommended chunks by group, as group-oriented search does
// (./groups/gather.ts), from the chunks of the example groups.
import type * as T from '../../sdk/src/generated/types.gen.js';
import { chunkRowsById } from '../domain/chunks/read.js';
import type { ApiVersion, ChunkRow } from '../domain/chunks/records.js';
import { datasetConfig } from '../domain/datasetConfig.js';
import type { DatasetRow } from '../domain/datasets.js';
import { badRequest } from '../errors.js';
import type { Services } from '../services.js';
import { inGroup, narrowFilter, withIds } from './filters/combine.js';
import { DEFAULT_GROUP_SIZE, fillGroups, groupRows, groupsHolding, rankGroups, v1Group, v2Group, type FoundGroup, type GroupHits } from './groups/index.js';
import type { Result } from './index.js';
import { denseRecommender } from './recommend/dense.js';
import { chunkExamples, groupExamples, type Examples } from './recommend/examples.js';
import { recordRecommendation } from './recommend/record.js';
import { recommendShapes, v1ChunkWithScore } from './recommend/shapes.js';
import { sparseRecommender } from './recommend/sparse.js';
import type { Recommender, RecommendKind, RecommendStrategy } from './recommend/types.js';
import type { Hit } from './types.js';

export const DEFAULT_LIMIT = 10;
/** best_score compares every candidate with every example: at most this many example chunks. */
export const MAX_BEST_SCORE_EXAMPLES = 64;

export interface ChunkRecommendation {
  id: string;
  results: Result[];
  slim: boolean;
}

export interface GroupRecommendation {
  id: string;
  groups: FoundGroup[];
  slim: boolean;
}

interface Method {
  kind: RecommendKind;
  strategy: RecommendStrategy;
}

/** The method asked for, refused when the dataset disables it. */
function methodOf(dataset: DatasetRow, body: { recommend_type?: RecommendKind | null; strategy?: RecommendStrategy | null }): Method {
  const kind = body.recommend_type ?? 'semantic';
  const strategy = body.strategy ?? 'average_vector';
  const config = datasetConfig(dataset);
  if (kind === 'semantic' && !config.SEMANTIC_ENABLED)
    throw badRequest('recommend_type semantic: semantic search is disabled for this dataset (SEMANTIC_ENABLED)');
  if (kind === 'fulltext' && !config.FULLTEXT_ENABLED)
    throw badRequest('recommend_type fulltext: full-text search is disabled for this dataset (FULLTEXT_ENABLED)');
  if (kind === 'bm25' && !config.BM25_ENABLED) throw badRequest('recommend_type bm25: BM25 is disabled for this dataset (BM25_ENABLED)');
  return { kind, strategy };
}

function limitOf(dataset: DatasetRow, limit: number | null | undefined, what: string): number {
  const value = limit ?? DEFAULT_LIMIT;
  const max = datasetConfig(dataset).MAX_LIMIT;
  if (value > max) throw badRequest(`limit: ${value} ${what} is over the dataset's MAX_LIMIT of ${max}`);
  return value;
}

/** Refuses examples the strategy cannot use; `fields` names where the examples were given. */
function checkExamples(examples: Examples, strategy: RecommendStrategy, fields: { positive: string; any: string }): void {
  if (strategy === 'average_vector' && examples.positive.length === 0)
    throw badRequest(`${fields.positive}: average_vector needs at least one positive example`);
  if (examples.positive.length === 0 && examples.negative.length === 0) throw badRequest(`${fields.any}: give at least one example`);
  const count = examples.positive.length + examples.negative.length;
  if (strategy === 'best_score' && count > MAX_BEST_SCORE_EXAMPLES) {
    throw badRequest(
      `${fields.any}: best_score compares every candidate with every example, so it takes at most ${MAX_BEST_SCORE_EXAMPLES} example chunks; these are ${count}`,
    );
  }
}

function recommender(services: Services, dataset: DatasetRow, examples: Examples, method: Method): Promise<Recommender> {
  if (method.kind === 'semantic') return denseRecommender(services, dataset, examples, method.strategy);
  return sparseRecommender(services, dataset, examples, method.strategy, method.kind);
}

/** The request's filter, validated, with the examples excluded. */
function candidateFilter(filter: T.ChunkFilter | null | undefined, examples: Examples): T.ChunkFilter {
  const ids = [...new Set([...examples.positive, ...examples.negative])];
  return narrowFilter(filter, { must_not: ids.length ? [withIds(ids)] : [] });
}

/** The hits' chunks in the hits' order (chunks deleted meanwhile left out). */
function resultsOf(hits: Hit[], rows: Map<string, ChunkRow>): Result[] {
  return hits.flatMap((hit) => {
    const row = rows.get(hit.id);
    return row ? [{ row, score: hit.score, highlights: null }] : [];
  });
}

export async function recommendChunks(services: Services, dataset: DatasetRow, body: T.RecommendChunksRequest): Promise<ChunkRecommendation> {
  const started = performance.now();
  const limit = limitOf(dataset, body.limit, 'chunks');
  const method = methodOf(dataset, body);
  const { examples, names } = await chunkExamples(services.store.db, dataset.id, body);
  const both = examples.positive.filter((id) => examples.negative.includes(id));
  if (both.length) throw badRequest(`chunk ${both[0]} is both a positive and a negative example`);
  checkExamples(examples, method.strategy, { positive: 'positive_chunk_ids or positive_tracking_ids', any: 'positive and negative chunk ids or tracking ids' });

  const filter = candidateFilter(body.filters, examples);
  const hits = await (await recommender(services, dataset, examples, method))(filter, limit);
  const results = resultsOf(
    hits,
    await chunkRowsById(
      services.store.db,
      dataset.id,
      hits.map((h) => h.id),
    ),
  );
  const id = recordRecommendation(services, dataset, {
    type: 'Chunk',
    names,
    request: body,
    results: results.map((r) => ({ chunk_id: r.row.id, score: r.score })),
    topScore: results[0]?.score ?? 0,
    started,
  });
  return { id, results, slim: body.slim_chunks ?? false };
}

export async function recommendGroups(services: Services, dataset: DatasetRow, body: T.RecommendGroupsReqPayload): Promise<GroupRecommendation> {
  const started = performance.now();
  const db = services.store.db;
  const limit = limitOf(dataset, body.limit, 'groups');
  const groupSize = body.group_size ?? DEFAULT_GROUP_SIZE;
  const method = methodOf(dataset, body);
  const { examples, names, positiveGroups } = await groupExamples(db, dataset.id, body);
  if (positiveGroups.length === 0) throw badRequest('positive_group_ids or positive_group_tracking_ids: give at least one positive group');
  if (examples.positive.length === 0) throw badRequest('positive_group_ids, positive_group_tracking_ids: the positive groups hold no chunks to recommend from');
  checkExamples(examples, method.strategy, { positive: 'positive_group_ids or positive_group_tracking_ids', any: 'the chunks of the example groups' });

  const filter = candidateFilter(body.filters, examples);
  const recommend = await recommender(services, dataset, examples, method);
  let ranked: GroupHits[] = [];
  let filled: GroupHits[] = [];
  if (limit > 0) {
    const found = await rankGroups(
      (window) => recommend(filter, window),
      (ids) => groupsHolding(db, dataset.id, ids),
      limit,
      groupSize,
    );
    ranked = found.groups.slice(0, limit);
    filled = await fillGroups(ranked, groupSize, found.exhausted, (groupId, n) => recommend(narrowFilter(filter, { must: [inGroup(groupId)] }), n));
  }
  const groups = await loadGroups(services, dataset.id, filled);
  const bestOf = new Map(ranked.map((g) => [g.groupId, g.hits[0]?.score ?? 0]));
  const id = recordRecommendation(services, dataset, {
    type: 'Group',
    names,
    request: body,
    results: groups.map((g) => ({ group_id: g.row.id, score: bestOf.get(g.row.id) ?? 0, chunk_ids: g.results.map((r) => r.row.id) })),
    topScore: ranked[0]?.hits[0]?.score ?? 0,
    started,
  });
  return { id, groups, slim: body.slim_chunks ?? false };
}

async function loadGroups(services: Services, datasetId: string, groups: GroupHits[]): Promise<FoundGroup[]> {
  const rows = await groupRows(
    services.store.db,
    datasetId,
    groups.map((g) => g.groupId),
  );
  const chunks = await chunkRowsById(services.store.db, datasetId, [...new Set(groups.flatMap((g) => g.hits.map((h) => h.id)))]);
  return groups.flatMap((group) => {
    const row = rows.get(group.groupId);
    return row ? [{ row, results: resultsOf(group.hits, chunks) }] : [];
  });
}

export function recommendChunksResponse(recommendation: ChunkRecommendation, version: ApiVersion): T.RecommendResponseTypes {
  if (version === 'V2') return { id: recommendation.id, chunks: recommendShapes(recommendation.slim).v2(recommendation.results) };
  return recommendation.results.map((r) => v1ChunkWithScore(r, recommendation.slim));
}

export function recommendGroupsResponse(recommendation: GroupRecommendation, version: ApiVersion): T.RecommendGroupsResponse {
  const shapes = recommendShapes(recommendation.slim);
  if (version === 'V2') return { id: recommendation.id, results: recommendation.groups.map((g) => v2Group(g, shapes)) };
  return recommendation.groups.map((g) => v1Group(g, shapes));
}
