// What the ranking stage will do for a request: `sort_options` (and, for hybrid search on a dataset
// with a reranker, the implicit cross-encoder pass) validated and made concrete, and how many
// candidates it needs. Pure: no I/O, so the window is known before retrieval starts.
import type * as T from '../../../sdk/src/generated/types.gen.js';
import { datasetConfig, defaultConfiguration, type DatasetConfiguration } from '../../domain/datasetConfig.js';
import type { DatasetRow } from '../../domain/datasets.js';
import { badRequest } from '../../errors.js';
import type { SearchPayload } from '../request.js';

export type SortField = T.SortByField['field'];
export type RescoreType = 'semantic' | 'fulltext' | 'bm25';

/** The first stage: what orders the candidates before the score adjustments. */
export type Order =
  | { kind: 'retrieval' }
  | { kind: 'field'; field: SortField; direction: 'asc' | 'desc' }
  | { kind: 'search_type'; type: RescoreType; query: string | null }
  /** `implicit`: hybrid search on a dataset with a reranker, not asked for by `sort_by`. */
  | { kind: 'cross_encoder'; query: string | null; implicit: boolean };

export interface RankingPlan {
  order: Order;
  /** `sort_by.prefetch_amount`, when given. */
  prefetch: number | null;
  /** Multiply by the chunk's weight (a weight of 0, the default, counts as 1). */
  useWeights: boolean;
  tagWeights: Map<string, number> | null;
  /** 0: no recency bias. */
  recencyBias: number;
  location: { lat: number; lon: number; bias: number } | null;
  /** MMR's diversity weight in (0, 1]; null: no MMR. */
  mmrLambda: number | null;
}

/** Candidates sorted by a field or rescored by a search type, unless `prefetch_amount` says (the reference's default). */
export const DEFAULT_SORT_PREFETCH = 1000;
/** Candidates reranked by the cross-encoder, or adjusted by biases, weights and MMR alone. */
export const DEFAULT_RERANK_WINDOW = 100;

const FIELDS: readonly SortField[] = ['num_value', 'time_stamp', 'created_at', 'weight'];
const RERANK_TYPES = ['semantic', 'fulltext', 'bm25', 'cross_encoder'] as const;

/**
 * The ranking the payload asks for, or null when the retrieval order stands. `dataset` decides the
 * implicit cross-encoder pass of hybrid search and caps `prefetch_amount` at its MAX_LIMIT (without
 * it: no implicit pass, and the default MAX_LIMIT). Throws 400 naming the field for a bad value,
 * and both fields for a conflict.
 */
export function planRanking(payload: SearchPayload, dataset?: DatasetRow): RankingPlan | null {
  const sort = payload.sort_options;
  const config = dataset ? datasetConfig(dataset) : null;
  const implicitCrossEncoder = payload.search_type === 'hybrid' && !!config?.RERANKER_BASE_URL;
  if (sort == null) return implicitCrossEncoder ? { ...NOTHING, order: { kind: 'cross_encoder', query: null, implicit: true } } : null;
  if (typeof sort !== 'object' || Array.isArray(sort)) throw badRequest('sort_options: must be an object');

  const { order, prefetch } = readSortBy(sort.sort_by, implicitCrossEncoder);
  const maxLimit = config?.MAX_LIMIT ?? defaultConfiguration.MAX_LIMIT;
  const plan: RankingPlan = {
    order,
    prefetch: prefetch == null ? null : Math.min(prefetch, maxLimit),
    // The reference weighs by the chunks' weights whenever sort_options is given, unless told not to.
    useWeights: sort.use_weights !== false,
    tagWeights: readTagWeights(sort.tag_weights),
    recencyBias: readBias(sort.recency_bias, 'sort_options.recency_bias'),
    location: readLocation(sort.location_bias),
    mmrLambda: readMmr(sort.mmr),
  };
  if (order.kind === 'field') refuseWithFieldOrder(plan, sort, order.field);
  if (order.kind === 'cross_encoder' && !config?.RERANKER_BASE_URL && dataset) {
    throw badRequest(
      'sort_options.sort_by.rerank_type: cross_encoder needs a reranker, and this dataset configures none (set RERANKER_BASE_URL in its server_configuration)',
    );
  }
  if (order.kind === 'search_type' && config) refuseDisabled(config, order.type);
  const changesNothing =
    order.kind === 'retrieval' && !plan.useWeights && !plan.tagWeights && plan.recencyBias === 0 && !plan.location && plan.mmrLambda == null;
  return changesNothing ? null : plan;
}

/**
 * How many candidates, from the best retrieval hit, the ranking stage ranks to serve hits up to
 * `wanted` (offset + page size): `prefetch_amount` when given, else the default of the first stage;
 * never fewer than `wanted`, so a page is never cut short by the window.
 */
export function windowOf(plan: RankingPlan, wanted: number): number {
  const { order } = plan;
  const base = order.kind === 'field' || order.kind === 'search_type' ? DEFAULT_SORT_PREFETCH : DEFAULT_RERANK_WINDOW;
  return Math.max(plan.prefetch ?? base, wanted);
}

const NOTHING: Omit<RankingPlan, 'order'> = { prefetch: null, useWeights: false, tagWeights: null, recencyBias: 0, location: null, mmrLambda: null };

function readSortBy(sortBy: T.QdrantSortBy | null | undefined, implicitCrossEncoder: boolean): { order: Order; prefetch: number | null } {
  const fallback: Order = implicitCrossEncoder ? { kind: 'cross_encoder', query: null, implicit: true } : { kind: 'retrieval' };
  if (sortBy == null) return { order: fallback, prefetch: null };
  const path = 'sort_options.sort_by';
  if (typeof sortBy !== 'object' || Array.isArray(sortBy)) throw badRequest(`${path}: must be an object with field or rerank_type`);
  const given = sortBy as Partial<T.SortByField & T.SortBySearchType>;
  const prefetch = readPrefetch(given.prefetch_amount, `${path}.prefetch_amount`);
  if (given.field != null && given.rerank_type != null)
    throw badRequest(`${path}: give field (to sort by a field) or rerank_type (to rerank by a search type), not both`);
  if (given.field != null) {
    if (!FIELDS.includes(given.field)) throw badRequest(`${path}.field: must be one of ${FIELDS.join(', ')}, got ${JSON.stringify(given.field)}`);
    if (given.direction != null && given.direction !== 'asc' && given.direction !== 'desc')
      throw badRequest(`${path}.direction: must be asc or desc, got ${JSON.stringify(given.direction)}`);
    if (given.rerank_query != null) throw badRequest(`${path}.rerank_query: only applies with rerank_type, not with field`);
    return { order: { kind: 'field', field: given.field, direction: given.direction ?? 'desc' }, prefetch };
  }
  if (given.rerank_type == null) throw badRequest(`${path}: give field (to sort by a field) or rerank_type (to rerank by a search type)`);
  if (!RERANK_TYPES.includes(given.rerank_type))
    throw badRequest(`${path}.rerank_type: must be one of ${RERANK_TYPES.join(', ')}, got ${JSON.stringify(given.rerank_type)}`);
  let query: string | null = null;
  if (given.rerank_query != null) {
    if (typeof given.rerank_query !== 'string' || given.rerank_query.trim() === '')
      throw badRequest(`${path}.rerank_query: must be a non-empty text (leave it out to rerank with the query)`);
    query = given.rerank_query.trim();
  }
  const order: Order =
    given.rerank_type === 'cross_encoder' ? { kind: 'cross_encoder', query, implicit: false } : { kind: 'search_type', type: given.rerank_type, query };
  return { order, prefetch };
}

function readPrefetch(value: unknown, path: string): number | null {
  if (value == null) return null;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0)
    throw badRequest(`${path}: must be a whole number, 0 or more, got ${JSON.stringify(value)}`);
  return value;
}

function readBias(value: unknown, path: string): number {
  if (value == null) return 0;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0)
    throw badRequest(`${path}: must be a number, 0 or more (0 is no bias), got ${JSON.stringify(value)}`);
  return value;
}

function readTagWeights(value: unknown): Map<string, number> | null {
  if (value == null) return null;
  if (typeof value !== 'object' || Array.isArray(value)) throw badRequest('sort_options.tag_weights: must be an object of tag: weight');
  const weights = new Map<string, number>();
  for (const [tag, weight] of Object.entries(value)) {
    if (typeof weight !== 'number' || !Number.isFinite(weight) || weight < 0)
      throw badRequest(`sort_options.tag_weights.${tag}: must be a number, 0 or more, got ${JSON.stringify(weight)}`);
    weights.set(tag, weight);
  }
  return weights.size ? weights : null;
}

function readLocation(value: T.GeoInfoWithBias | null | undefined): RankingPlan['location'] {
  if (value == null) return null;
  const path = 'sort_options.location_bias';
  if (typeof value !== 'object' || Array.isArray(value)) throw badRequest(`${path}: must be an object with location and bias`);
  const bias = readBias(value.bias, `${path}.bias`);
  const location = value.location as Partial<T.GeoInfo> | undefined;
  const lat = location?.lat;
  const lon = location?.lon;
  if (typeof lat !== 'number' || !Number.isFinite(lat) || lat < -90 || lat > 90)
    throw badRequest(`${path}.location.lat: must be a latitude between -90 and 90, got ${JSON.stringify(lat)}`);
  if (typeof lon !== 'number' || !Number.isFinite(lon) || lon < -180 || lon > 180)
    throw badRequest(`${path}.location.lon: must be a longitude between -180 and 180, got ${JSON.stringify(lon)}`);
  return bias === 0 ? null : { lat, lon, bias };
}

function readMmr(value: T.MmrOptions | null | undefined): number | null {
  if (value == null) return null;
  const path = 'sort_options.mmr';
  if (typeof value !== 'object' || Array.isArray(value)) throw badRequest(`${path}: must be an object with use_mmr`);
  if (typeof value.use_mmr !== 'boolean') throw badRequest(`${path}.use_mmr: must be true or false`);
  const lambda = value.mmr_lambda ?? 0.5;
  if (typeof lambda !== 'number' || !Number.isFinite(lambda) || lambda < 0 || lambda > 1)
    throw badRequest(`${path}.mmr_lambda: must be between 0 and 1, got ${JSON.stringify(value.mmr_lambda)}`);
  // λ 0 weighs relevance alone: the order stays.
  return value.use_mmr && lambda > 0 ? lambda : null;
}

function refuseDisabled(config: DatasetConfiguration, type: RescoreType): void {
  const flag = ({ semantic: 'SEMANTIC_ENABLED', fulltext: 'FULLTEXT_ENABLED', bm25: 'BM25_ENABLED' } as const)[type];
  if (!config[flag]) throw badRequest(`sort_options.sort_by.rerank_type: ${type} search is disabled for this dataset (${flag})`);
}

/** Sorting by a field fixes the order; an option that would change it cannot hold at the same time. */
function refuseWithFieldOrder(plan: RankingPlan, sort: T.SortOptions, field: SortField): void {
  const conflicts: [boolean, string][] = [
    [plan.recencyBias > 0, 'sort_options.recency_bias'],
    [plan.location != null, 'sort_options.location_bias'],
    [plan.tagWeights != null, 'sort_options.tag_weights'],
    [sort.use_weights === true, 'sort_options.use_weights'],
    [plan.mmrLambda != null, 'sort_options.mmr'],
  ];
  const conflict = conflicts.find(([active]) => active);
  if (conflict) {
    throw badRequest(`sort_options.sort_by (field ${field}) and ${conflict[1]} cannot both apply: the field decides the order alone; drop one of them`);
  }
}
