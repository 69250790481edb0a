// Chunks: create, read, update and delete them, search, autocomplete, recommend, count, scroll,
// and answer from chosen chunks (`POST /api/chunk/generate`).
import type { ChunkSearch } from '../chunk-search.js';
import { type HeadersCallback, unwrap, unwrapResponse } from '../errors.js';
import * as api from '../generated/sdk.gen.js';
import type * as T from '../generated/types.gen.js';
import { datasetHeaders, reading, sending, V2 } from '../scope.js';
import { readerOf, readerWithQueryId, TextStream } from '../streaming.js';

/**
 * Search the dataset's chunks by meaning, by words, or both (`search_type`): `POST /api/chunk/search`.
 *
 * ```ts
 * const { chunks } = await chunkSearch.search({ query: 'glacier length', search_type: 'hybrid', page_size: 10 });
 * ```
 */
export function search(this: ChunkSearch, props: T.SearchChunksReqPayload, signal?: AbortSignal, parseHeaders?: HeadersCallback) {
  return unwrap(
    api.searchChunks({ ...reading(this, signal), headers: { ...datasetHeaders(this), ...V2 }, body: props }),
    parseHeaders,
  ) as Promise<T.SearchResponseBody>;
}

/** Search for chunks that complete a query, its last word as a prefix: `POST /api/chunk/autocomplete`. */
export function autocomplete(this: ChunkSearch, props: T.AutocompleteReqPayload, signal?: AbortSignal, parseHeaders?: HeadersCallback) {
  return unwrap(
    api.autocomplete({ ...reading(this, signal), headers: { ...datasetHeaders(this), ...V2 }, body: props }),
    parseHeaders,
  ) as Promise<T.SearchResponseBody>;
}

/** Chunks like the positive examples and unlike the negative ones: `POST /api/chunk/recommend`. */
export function getRecommendedChunks(this: ChunkSearch, props: T.RecommendChunksRequest, signal?: AbortSignal) {
  return unwrap(
    api.getRecommendedChunks({ ...reading(this, signal), headers: { ...datasetHeaders(this), ...V2 }, body: props }),
  ) as Promise<T.RecommendChunksResponseBody>;
}

/** How many chunks a search finds: `POST /api/chunk/count`. */
export function countChunksAboveThreshold(this: ChunkSearch, props: T.CountChunksReqPayload, signal?: AbortSignal) {
  return unwrap(api.countChunks({ ...reading(this, signal), headers: datasetHeaders(this), body: props }));
}

/** The dataset's chunks page by page, filtered and sorted: `POST /api/chunks/scroll`. */
export function scroll(this: ChunkSearch, props: T.ScrollChunksReqPayload, signal?: AbortSignal) {
  return unwrap(api.scrollDatasetChunks({ ...reading(this, signal), headers: datasetHeaders(this), body: props }));
}

/** Queries a user might ask next, written by the LLM from the dataset: `POST /api/chunk/suggestions`. */
export function suggestedQueries(this: ChunkSearch, props: T.SuggestedQueriesReqPayload, signal?: AbortSignal) {
  return unwrap(api.getSuggestedQueries({ ...reading(this, signal), headers: datasetHeaders(this), body: props }));
}

/**
 * Create a chunk, or up to 120 in one call: `POST /api/chunk`.
 *
 * ```ts
 * await chunkSearch.createChunk({ chunk_html: '<p>Some text</p>', tracking_id: 'doc-1', tag_set: ['guide'] });
 * ```
 */
export function createChunk(this: ChunkSearch, props: T.CreateChunkReqPayloadEnum, signal?: AbortSignal) {
  return unwrap(api.createChunk({ ...sending(this, signal), headers: datasetHeaders(this), body: props }));
}

/** Update a chunk named by `chunk_id` or `tracking_id`: `PUT /api/chunk`. */
export function updateChunk(this: ChunkSearch, props: T.UpdateChunkReqPayload, signal?: AbortSignal): Promise<void> {
  return unwrap(api.updateChunk({ ...sending(this, signal), headers: datasetHeaders(this), body: props }));
}

/** Update the chunk with this `tracking_id`: `PUT /api/chunk/tracking_id/update`. */
export function updateChunkByTrackingId(this: ChunkSearch, props: T.UpdateChunkByTrackingIdReqPayload, signal?: AbortSignal): Promise<void> {
  return unwrap(api.updateChunkByTrackingId({ ...sending(this, signal), headers: datasetHeaders(this), body: props }));
}

/** A chunk by its tracking id: `GET /api/chunk/tracking_id/{tracking_id}` (V2 records unless `xApiVersion` says otherwise). */
export function getChunkByTrackingId(this: ChunkSearch, props: { trackingId: string; xApiVersion?: T.ApiVersion }, signal?: AbortSignal) {
  return unwrap(
    api.getChunkByTrackingId({
      ...sending(this, signal),
      headers: { ...datasetHeaders(this), 'X-API-Version': props.xApiVersion ?? 'V2' },
      path: { tracking_id: props.trackingId },
    }),
  );
}

/** Delete the chunk with this tracking id: `DELETE /api/chunk/tracking_id/{tracking_id}`. */
export function deleteChunkByTrackingId(this: ChunkSearch, props: { trackingId: string }, signal?: AbortSignal): Promise<void> {
  return unwrap(api.deleteChunkByTrackingId({ ...sending(this, signal), headers: datasetHeaders(this), path: { tracking_id: props.trackingId } }));
}

/** A chunk by its id: `GET /api/chunk/{chunk_id}` (V2 records unless `xApiVersion` says otherwise). */
export function getChunkById(this: ChunkSearch, props: { chunkId: string; xApiVersion?: T.ApiVersion }, signal?: AbortSignal) {
  return unwrap(
    api.getChunkById({
      ...sending(this, signal),
      headers: { ...datasetHeaders(this), 'X-API-Version': props.xApiVersion ?? 'V2' },
      path: { chunk_id: props.chunkId },
    }),
  );
}

/** Delete a chunk by its id: `DELETE /api/chunk/{chunk_id}`. */
export function deleteChunkById(this: ChunkSearch, props: { chunkId: string }, signal?: AbortSignal): Promise<void> {
  return unwrap(api.deleteChunk({ ...sending(this, signal), headers: datasetHeaders(this), path: { chunk_id: props.chunkId } }));
}

/** Delete every chunk a filter matches: `DELETE /api/chunk`. */
export function bulkDeleteChunks(this: ChunkSearch, props: T.BulkDeleteChunkPayload, signal?: AbortSignal): Promise<void> {
  return unwrap(api.bulkDeleteChunk({ ...sending(this, signal), headers: datasetHeaders(this), body: props }));
}

/** Chunks by their ids: `POST /api/chunks`. */
export function getChunksByIds(this: ChunkSearch, props: T.GetChunksData, signal?: AbortSignal) {
  return unwrap(api.getChunksByIds({ ...reading(this, signal), headers: datasetHeaders(this), body: props }));
}

/** Chunks by their tracking ids: `POST /api/chunks/tracking`. */
export function getChunksByTrackingIds(this: ChunkSearch, props: T.GetTrackingChunksData, signal?: AbortSignal) {
  return unwrap(api.getChunksByTrackingIds({ ...reading(this, signal), headers: datasetHeaders(this), body: props }));
}

/** Split HTML into chunks at its headings: `POST /api/chunk/split`. */
export function splitChunkHtml(this: ChunkSearch, props: T.ChunkHtmlContentReqPayload, signal?: AbortSignal) {
  return unwrap(api.splitHtmlContent({ ...reading(this, signal), body: props }));
}

/**
 * An LLM's answer from the chunks named in `chunk_ids`, whole: `POST /api/chunk/generate`.
 * See {@link ragOnChunkStream} to read it as it is written.
 */
export function ragOnChunk(this: ChunkSearch, props: T.GenerateOffChunksReqPayload, signal?: AbortSignal): Promise<string> {
  return unwrap(api.generateOffChunks({ ...sending(this, signal), headers: datasetHeaders(this), body: props }));
}

function generateReply(sdk: ChunkSearch, props: T.GenerateOffChunksReqPayload, signal?: AbortSignal, parseHeaders?: HeadersCallback) {
  return unwrapResponse(api.generateOffChunks({ ...sending(sdk, signal), headers: datasetHeaders(sdk), body: props, parseAs: 'stream' }), parseHeaders);
}

/**
 * An LLM's answer from the chunks named in `chunk_ids`, as text read as it is written:
 * `POST /api/chunk/generate`.
 *
 * ```ts
 * const answer = await chunkSearch.ragOnChunkStream({ chunk_ids, prev_messages: [{ role: 'user', content: 'How long is it?' }] });
 * for await (const text of answer) process.stdout.write(text);
 * ```
 */
export async function ragOnChunkStream(this: ChunkSearch, props: T.GenerateOffChunksReqPayload, signal?: AbortSignal): Promise<TextStream> {
  return new TextStream(await generateReply(this, props, signal));
}

/** {@link ragOnChunkStream}'s answer as the reader of its bytes. */
export async function ragOnChunkReader(this: ChunkSearch, props: T.GenerateOffChunksReqPayload, signal?: AbortSignal) {
  return readerOf(await generateReply(this, props, signal));
}

/** {@link ragOnChunkStream}'s answer as the reader of its bytes, with the id of the RAG query recorded with it. */
export async function ragOnChunkReaderWithQueryId(
  this: ChunkSearch,
  props: T.GenerateOffChunksReqPayload,
  signal?: AbortSignal,
  parseHeaders?: HeadersCallback,
) {
  return readerWithQueryId(await generateReply(this, props, signal, parseHeaders));
}
