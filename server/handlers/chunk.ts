import type * as H from '../../generated/handlers.js';
import { createChunks } from '../domain/chunks/create.js';
import { deleteChunks, deleteChunksMatching } from '../domain/chunks/delete.js';
import { getChunk, getChunks, scrollChunks } from '../domain/chunks/read.js';
import { chunkRecord, versionedChunkRecord, type ApiVersion } from '../domain/chunks/records.js';
import { splitHtml } from '../domain/chunks/split.js';
import { updateChunk } from '../domain/chunks/update.js';
import { answerReply } from './answerReply.js';
import { generateOffChunks } from '../domain/rag/generate.js';
import { suggestedQueries } from '../domain/rag/suggestions.js';
import { datasetConfig } from '../domain/datasetConfig.js';
import type { DatasetRow } from '../domain/datasets.js';
import { notFound } from '../errors.js';
import type { Services } from '../services.js';
import { runSearch, searchResponse } from '../search/index.js';
import { recommendChunks, recommendChunksResponse } from '../search/recommend.js';
import { countQueries } from '../search/query/index.js';

/** The in-memory indexes take the dataset's new chunks now rather than at its next search. */
function followWrites(services: Services, dataset: DatasetRow): void {
  const config = datasetConfig(dataset);
  if (config.BM25_ENABLED || config.FULLTEXT_ENABLED) services.bm25.follow(dataset.id);
  services.vectors.followDataset(dataset);
}

const versionOf = (headers: { 'X-API-Version'?: ApiVersion } | undefined): ApiVersion => headers?.['X-API-Version'] ?? 'V1';

export const create_chunk: H.CreateChunkHandler = async ({ body, dataset, services }) => {
  const batch = Array.isArray(body);
  const rows = await createChunks(services, dataset, batch ? body : [body], batch);
  followWrites(services, dataset);
  return { status: 200, body: batch ? { chunk_metadata: rows.map(chunkRecord) } : { chunk_metadata: chunkRecord(rows[0]) } };
};

export const update_chunk: H.UpdateChunkHandler = async ({ body, dataset, services }) => {
  const { chunk_id, tracking_id, ...changes } = body;
  await updateChunk(services, dataset, { chunk_id, tracking_id }, changes);
  followWrites(services, dataset);
  return { status: 204, body: undefined };
};

export const update_chunk_by_tracking_id: H.UpdateChunkByTrackingIdHandler = async ({ body, dataset, services }) => {
  const { tracking_id, ...changes } = body;
  await updateChunk(services, dataset, { tracking_id }, changes);
  followWrites(services, dataset);
  return { status: 204, body: undefined };
};

export const get_chunk_by_id: H.GetChunkByIdHandler = async ({ path, headers, dataset, services }) => ({
  status: 200,
  body: versionedChunkRecord(await getChunk(services.store.db, dataset.id, { id: path.chunk_id }), versionOf(headers)),
});

export const get_chunk_by_tracking_id: H.GetChunkByTrackingIdHandler = async ({ path, headers, dataset, services }) => ({
  status: 200,
  body: versionedChunkRecord(await getChunk(services.store.db, dataset.id, { tracking_id: path.tracking_id }), versionOf(headers)),
});

export const get_chunks_by_ids: H.GetChunksByIdsHandler = async ({ body, headers, dataset, services }) => {
  const rows = await getChunks(services.store.db, dataset.id, 'id', body.ids);
  if (rows.length === 0) throw notFound('none of the ids names a chunk of this dataset');
  return { status: 200, body: rows.map((row) => versionedChunkRecord(row, versionOf(headers))) };
};

export const get_chunks_by_tracking_ids: H.GetChunksByTrackingIdsHandler = async ({ body, headers, dataset, services }) => ({
  status: 200,
  body: (await getChunks(services.store.db, dataset.id, 'tracking_id', body.tracking_ids)).map((row) => versionedChunkRecord(row, versionOf(headers))),
});

export const scroll_dataset_chunks: H.ScrollDatasetChunksHandler = async ({ body, dataset, services }) => ({
  status: 200,
  body: { chunks: (await scrollChunks(services.store.db, dataset.id, body)).map(chunkRecord) },
});

export const delete_chunk: H.DeleteChunkHandler = async ({ path, dataset, services }) => {
  await getChunk(services.store.db, dataset.id, { id: path.chunk_id });
  await deleteChunks(services, dataset.id, [path.chunk_id]);
  return { status: 204, body: undefined };
};

export const delete_chunk_by_tracking_id: H.DeleteChunkByTrackingIdHandler = async ({ path, dataset, services }) => {
  const row = await getChunk(services.store.db, dataset.id, { tracking_id: path.tracking_id });
  await deleteChunks(services, dataset.id, [row.id]);
  return { status: 204, body: undefined };
};

export const bulk_delete_chunk: H.BulkDeleteChunkHandler = async ({ body, dataset, services }) => {
  await deleteChunksMatching(services, dataset.id, body.filter);
  return { status: 204, body: undefined };
};

export const split_html_content: H.SplitHtmlContentHandler = async ({ body }) => ({
  status: 200,
  body: { chunks: splitHtml(body.chunk_html, body.heading_remove_strings ?? [], body.body_remove_strings ?? []) },
});

export const search_chunks: H.SearchChunksHandler = async ({ body, headers, caller, dataset, services }) => {
  const outcome = await runSearch(services, dataset, caller, body, { prefix: false, page: body.page ?? 1, getTotalPages: body.get_total_pages ?? false });
  return { status: 200, body: searchResponse(outcome, versionOf(headers)) };
};

export const autocomplete: H.AutocompleteHandler = async ({ body, headers, caller, dataset, services }) => {
  const outcome = await runSearch(services, dataset, caller, body, {
    prefix: true,
    page: 1,
    getTotalPages: false,
    extendResults: body.extend_results ?? false,
  });
  return { status: 200, body: searchResponse(outcome, versionOf(headers)) };
};

export const count_chunks: H.CountChunksHandler = async ({ body, dataset, services }) => {
  const count = await countQueries(services, dataset, body);
  return { status: 200, body: { count: body.limit != null ? Math.min(count, body.limit) : count } };
};

export const get_recommended_chunks: H.GetRecommendedChunksHandler = async ({ body, headers, dataset, services }) => ({
  status: 200,
  body: recommendChunksResponse(await recommendChunks(services, dataset, body), versionOf(headers)),
});

export const generate_off_chunks: H.GenerateOffChunksHandler = async ({ body, dataset, services, signal }) => {
  return answerReply(await generateOffChunks(services, dataset, body, signal));
};

export const get_suggested_queries: H.GetSuggestedQueriesHandler = async ({ body, dataset, services, signal }) => ({
  status: 200,
  body: await suggestedQueries(services, dataset, body, signal),
});
