// The per-call options the methods give the generated functions: which client sends the request,
// the abort signal, and the scoping headers taken from the ChunkSearch instance.
import type { ChunkSearch } from './chunk-search.js';

/** Sent as given; retried on 429/503 only for an idempotent method. */
export function sending(sdk: ChunkSearch, signal?: AbortSignal) {
  return { client: sdk.client, signal };
}

/** A POST that only reads (a search, a lookup): retried on 429/503 like a GET. */
export function reading(sdk: ChunkSearch, signal?: AbortSignal) {
  return { client: sdk.readingClient, signal };
}

export function datasetHeaders(sdk: ChunkSearch, datasetId = sdk.datasetId): { 'SVC-Dataset': string } {
  if (!datasetId) throw new TypeError('datasetId is required: give it to new ChunkSearch({ datasetId }) or set chunkSearch.datasetId');
  return { 'SVC-Dataset': datasetId };
}

export function organizationHeaders(sdk: ChunkSearch, organizationId = sdk.organizationId): { 'SVC-Organization': string } {
  if (!organizationId) {
    throw new TypeError('organizationId is required: give it to new ChunkSearch({ organizationId }) or set chunkSearch.organizationId');
  }
  return { 'SVC-Organization': organizationId };
}

/** The record shape the reference client asks for where it asks for one. */
export const V2 = { 'X-API-Version': 'V2' } as const;
