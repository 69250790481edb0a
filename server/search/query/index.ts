// The query text(s) a search runs, and their retrieval.
//
// Preparing: each text of `query` (one, or several weighted ones: multi.ts) is corrected for typos
// when asked (typos/), then split into the text the engines search and the conditions its quotes
// and minus signs set (parse.ts, conditions.ts). The conditions of all the texts hold for every
// result. `corrected_query` is the corrected text (several: the texts joined by " | "), or null when
// no word changed.
//
// Retrieving: one text goes to retrieval as it is. Several weighted texts: semantic search looks
// near the weighted sum of their vectors (vector.ts); full-text, BM25 and hybrid search fuse each
// text's ranked list by weighted reciprocal rank (fusion.ts). `scoring_options.semantic_boost` moves
// the query vector (semantic, and hybrid's semantic half); `scoring_options.fulltext_boost` weighs
// the phrase's terms more in keyword scoring (boost.ts: full-text, BM25, hybrid's keyword half).
import type * as T from '../../../sdk/src/generated/types.gen.js';
import type { DatasetRow } from '../../domain/datasets.js';
import { badRequest } from '../../errors.js';
import type { Services } from '../../services.js';
import type { SearchPayload } from '../request.js';
import { hybridWindow } from '../retrieval/hybrid.js';
import { countMatches, retrieve } from '../retrieval/index.js';
import type { RetrievalRequest, RetrievalResult, SearchType } from '../types.js';
import { checkedFulltextBoost, termBoost } from './boost.js';
import { compileTermConditions, type TermConditions } from './conditions.js';
import { fuseWeightedLists } from './fusion.js';
import { weightedTexts } from './multi.js';
import { parseQuery } from './parse.js';
import { correctTypos } from './typos/index.js';
import { queryVector } from './vector.js';

export interface WeightedQuery {
  /** What the engines search: cleaned as the request asks, typos corrected. */
  text: string;
  weight: number;
}

export interface PreparedQueries {
  queries: WeightedQuery[];
  /** The query as corrected for typos, when a correction was made (else null). */
  correctedQuery: string | null;
  /** What every result must (not) contain, from the queries' own text. */
  conditions: TermConditions;
  semanticBoost: T.SemanticBoost | null;
  fulltextBoost: T.FullTextBoost | null;
}

/** The request fields that say how the query reads. */
export type QueryFields = Pick<T.SearchChunksReqPayload, 'query' | 'use_quote_negated_terms' | 'remove_stop_words' | 'typo_options' | 'scoring_options'>;

/** The queries to run, cleaned and corrected as the payload asks. */
export async function prepareQueries(services: Services, dataset: DatasetRow, payload: SearchPayload | QueryFields): Promise<PreparedQueries> {
  const quoteNegated = !!payload.use_quote_negated_terms;
  const typos = payload.typo_options;
  const required: string[] = [];
  const excluded: string[] = [];
  const correctedTexts: string[] = [];
  let corrected = false;
  const queries: WeightedQuery[] = [];
  for (const { text, weight } of weightedTexts(payload.query)) {
    const correction = typos?.correct_typos ? await correctTypos(services.store.db, dataset.id, text, typos, quoteNegated) : null;
    corrected ||= !!correction?.corrected;
    correctedTexts.push(correction?.text ?? text);
    const parsed = parseQuery(correction?.text ?? text, { quoteNegated, removeStopWords: !!payload.remove_stop_words });
    required.push(...parsed.required, ...(correction?.required ?? []));
    excluded.push(...parsed.excluded);
    // A text of -words only narrows the search without adding anything to look for.
    if (parsed.text !== '') queries.push({ text: parsed.text, weight });
  }
  if (!queries.some((q) => q.weight > 0)) throw badRequest('query: nothing to search for once the -negated words are set aside');
  return {
    queries,
    correctedQuery: corrected ? correctedTexts.join(' | ') : null,
    conditions: await compileTermConditions(services.store.db, { required: [...new Set(required)], excluded: [...new Set(excluded)] }),
    semanticBoost: checkedSemanticBoost(payload.scoring_options?.semantic_boost),
    fulltextBoost: checkedFulltextBoost(payload.scoring_options?.fulltext_boost),
  };
}

function checkedSemanticBoost(boost: T.SemanticBoost | null | undefined): T.SemanticBoost | null {
  if (!boost) return null;
  if (!Number.isFinite(boost.distance_factor)) throw badRequest('scoring_options.semantic_boost.distance_factor: must be a finite number');
  if (boost.phrase.trim() === '') throw badRequest('scoring_options.semantic_boost.phrase: must not be empty');
  return boost;
}

/** Retrieval for the queries: one query as is; several combined by their weights. */
export async function retrieveQueries(
  services: Services,
  type: SearchType,
  prepared: PreparedQueries,
  request: Omit<RetrievalRequest, 'query'>,
): Promise<RetrievalResult> {
  const { queries } = prepared;
  const base = { ...request, conditions: prepared.conditions };
  if (queries.length === 1 || type === 'semantic') {
    const query = joined(queries);
    return retrieve(services, type, { ...base, query, ...(await boostsFor(services, type, prepared, queries, request.dataset)) });
  }
  // Each query's best `window` chunks, fused; `total` is the size of the fused list.
  const window = hybridWindow(request.offset + request.limit);
  const hits = await fusedHits(services, type, prepared, { ...base, limit: window, offset: 0, countTotal: false });
  return { hits: hits.slice(request.offset, request.offset + request.limit), total: hits.length };
}

/** How many chunks the queries match (count_chunks), as `retrieveQueries` would find them. */
export async function countQueries(services: Services, dataset: DatasetRow, body: T.CountChunksReqPayload): Promise<number> {
  const prepared = await prepareQueries(services, dataset, { query: body.query, use_quote_negated_terms: body.use_quote_negated_terms });
  const { queries } = prepared;
  const type = body.search_type;
  const request = { dataset, filter: body.filters, limit: body.limit ?? 0, offset: 0, scoreThreshold: body.score_threshold, conditions: prepared.conditions };
  if (queries.length === 1 || type === 'semantic') {
    return countMatches(services, type, { ...request, query: joined(queries), ...(await boostsFor(services, type, prepared, queries, dataset)) });
  }
  // Several lexical queries: the fused list, each query's best matches up to the fusion window.
  return (await fusedHits(services, type, prepared, { ...request, limit: hybridWindow(body.limit ?? Infinity), countTotal: false })).length;
}

async function fusedHits(services: Services, type: SearchType, prepared: PreparedQueries, whole: Omit<RetrievalRequest, 'query'>) {
  // No one query's hits are the page's.
  const { readAhead: _, ...request } = whole;
  const lists = await Promise.all(
    prepared.queries.map(async (query) => ({
      weight: query.weight,
      hits: (await retrieve(services, type, { ...request, query: query.text, ...(await boostsFor(services, type, prepared, [query], request.dataset)) })).hits,
    })),
  );
  return fuseWeightedLists(lists);
}

/**
 * What retrieval needs beyond the text: the query vector when it is not the plain embedding of one
 * text (else retrieval embeds the text), and the fulltext boost's weighted terms.
 */
async function boostsFor(
  services: Services,
  type: SearchType,
  prepared: PreparedQueries,
  queries: WeightedQuery[],
  dataset: DatasetRow,
): Promise<Pick<RetrievalRequest, 'vector' | 'termBoost'>> {
  const semantic = type === 'semantic' || type === 'hybrid';
  const [vector, boost] = await Promise.all([
    semantic && (queries.length > 1 || prepared.semanticBoost != null) ? queryVector(services, dataset, queries, prepared.semanticBoost) : undefined,
    type !== 'semantic' && queries.length === 1 ? termBoost(services.store.db, queries[0].text, prepared.fulltextBoost) : undefined,
  ]);
  return { vector, termBoost: boost };
}

function joined(queries: WeightedQuery[]): string {
  return queries.map((q) => q.text).join(' ');
}
