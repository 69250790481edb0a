// Retrieval: the ids and scores of the chunks a search returns, and how many match in all, for each
// search type. Filters are evaluated in PostgreSQL for every type and engine (server/search/filters.ts),
// except that a filter on tags alone is answered from the tags BM25's held postings keep
// (filters/held.ts) for the semantic, hybrid and bm25 types, with the same meaning.
//
//   semantic  nearest neighbours of the query's vector (the vectors held in memory, else pgvector)
//   fulltext  the lexical engine's matches (Postgres full-text or Typesense)
//   hybrid    semantic and BM25 (or the lexical engine, without BM25), fused by reciprocal rank
//   bm25      BM25 over the terms stored on each chunk row, computed in PostgreSQL
//
// Scores are higher-is-better within a type: semantic turns the metric's distance into a similarity
// (cosine 1 − d, dot the inner product, euclidean and manhattan 1 / (1 + d)); fulltext gives the
// idf-weighted rank of its matches (retrieval/fulltext.ts); hybrid the fused reciprocal-rank score.
// `scoreThreshold` applies to those scores. Ties are ordered by id.
import { datasetConfig } from '../../domain/datasetConfig.js';
import { badRequest } from '../../errors.js';
import type { Services } from '../../services.js';
import { validateChunkFilter } from '../filters.js';
import type { RetrievalRequest, RetrievalResult, SearchType } from '../types.js';
import { FilterReads } from '../filters/passing.js';
import { tagFilterOf } from '../filters/held.js';
import { bm25Search, countBm25, heldTags } from './bm25/index.js';
import { countFulltext, fulltextSearch } from './fulltext.js';
import { hybridSearch } from './hybrid.js';
import { countSemantic, semanticQuery, semanticSearch } from './semantic.js';

export { reciprocalRankFusion, RRF_K } from './hybrid.js';

/** Searches being retrieved in this process now. */
let inFlight = 0;

export async function retrieve(services: Services, type: SearchType, request: RetrievalRequest): Promise<RetrievalResult> {
  validate(type, request);
  // Only a search alone shares its work with helper threads: with others in flight, the machine's
  // other core has theirs.
  const alone = inFlight === 0 ? request : { ...request, oneThread: true };
  inFlight++;
  try {
    return await searchOf(services, type, alone);
  } finally {
    inFlight--;
  }
}

function searchOf(services: Services, type: SearchType, request: RetrievalRequest): Promise<RetrievalResult> {
  switch (type) {
    case 'semantic':
      return semanticSearch(services, withHeldTagFilter(services, request));
    case 'fulltext':
      return fulltextSearch(services, request);
    case 'hybrid':
      return hybridSearch(services, request);
    case 'bm25':
      return bm25Search(services, request);
  }
}

/**
 * How many chunks the search matches in all (the filter, and the threshold when given), without
 * fetching a page: semantic, every chunk passing them; fulltext, every match (with Typesense,
 * capped at the candidate window, as in `retrieve`). `limit` and `offset` are not used.
 */
export async function countMatches(services: Services, type: 'semantic' | 'fulltext' | 'bm25', request: RetrievalRequest): Promise<number> {
  validate(type, request);
  switch (type) {
    case 'semantic':
      return countSemantic(services, request.scoreThreshold == null ? null : await semanticQuery(services, request), request);
    case 'fulltext':
      return countFulltext(services, request);
    case 'bm25':
      return countBm25(services, request);
  }
}

/**
 * The request with its tag filter answered from BM25's held postings, as hybrid answers its two
 * lists' (null: in SQL), and the dataset's version their look at the change log found: held
 * vectors that reached it need no look of their own.
 */
function withHeldTagFilter(services: Services, request: RetrievalRequest): RetrievalRequest {
  if (!tagFilterOf(request.filter, request.conditions)) return request;
  const reads = new FilterReads(request.filter, request.conditions);
  const held = heldTags(services, request);
  reads.held = held.then((tags) => tags?.passing ?? null);
  return { ...request, filterReads: reads, seenVersion: request.seenVersion ?? held.then((tags) => tags?.version) };
}

function validate(type: SearchType, request: RetrievalRequest): void {
  if (!['semantic', 'fulltext', 'hybrid', 'bm25'].includes(type))
    throw badRequest(`search_type: must be one of semantic, fulltext, hybrid, bm25, got ${JSON.stringify(type)}`);
  if (!Number.isInteger(request.limit) || request.limit < 0) throw badRequest(`limit: must be a whole number at least 0, got ${request.limit}`);
  if (!Number.isInteger(request.offset) || request.offset < 0) throw badRequest(`offset: must be a whole number at least 0, got ${request.offset}`);
  if (typeof request.query !== 'string' || request.query.trim() === '') throw badRequest('query: must not be empty');
  if (request.scoreThreshold != null && !Number.isFinite(request.scoreThreshold)) throw badRequest('score_threshold: must be a number');
  const config = datasetConfig(request.dataset);
  if ((type === 'semantic' || type === 'hybrid') && !config.SEMANTIC_ENABLED)
    throw badRequest(`search_type ${type}: semantic search is disabled for this dataset (SEMANTIC_ENABLED)`);
  if (type === 'fulltext' && !config.FULLTEXT_ENABLED)
    throw badRequest('search_type fulltext: full-text search is disabled for this dataset (FULLTEXT_ENABLED)');
  if (type === 'hybrid' && !config.FULLTEXT_ENABLED && !config.BM25_ENABLED) throw badRequest('search_type hybrid: needs FULLTEXT_ENABLED or BM25_ENABLED');
  if (type === 'bm25' && !config.BM25_ENABLED) throw badRequest('search_type bm25: BM25 is disabled for this dataset (BM25_ENABLED)');
  // Refused before any engine is asked, with the request's field name.
  validateChunkFilter(request.filter, 'filters');
}
