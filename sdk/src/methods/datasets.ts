// Datasets: create, read, update, clear and delete them, their usage, files, tags and events.
// Like the reference client, the methods that name a dataset take its id as an argument.
import type { ChunkSearch } from '../chunk-search.js';
import { unwrap } from '../errors.js';
import * as api from '../generated/sdk.gen.js';
import type * as T from '../generated/types.gen.js';
import { datasetHeaders, organizationHeaders, reading, sending } from '../scope.js';

/** Create a dataset in the organization: `POST /api/dataset`. */
export function createDataset(this: ChunkSearch, props: T.CreateDatasetReqPayload, signal?: AbortSignal) {
  return unwrap(api.createDataset({ ...sending(this, signal), headers: organizationHeaders(this), body: props }));
}

/** Update a dataset named by `dataset_id` or `tracking_id`: `PUT /api/dataset`. */
export function updateDataset(this: ChunkSearch, props: T.UpdateDatasetReqPayload, signal?: AbortSignal) {
  return unwrap(api.updateDataset({ ...sending(this, signal), headers: organizationHeaders(this), body: props }));
}

/** Create several datasets in the organization: `POST /api/dataset/batch_create_datasets`. */
export function batchCreateDatasets(this: ChunkSearch, props: T.CreateDatasetBatchReqPayload, signal?: AbortSignal) {
  return unwrap(api.batchCreateDatasets({ ...sending(this, signal), headers: organizationHeaders(this), body: props }));
}

/** A dataset by its id: `GET /api/dataset/{dataset_id}`. */
export function getDatasetById(this: ChunkSearch, datasetId: string, signal?: AbortSignal) {
  return unwrap(api.getDataset({ ...sending(this, signal), headers: datasetHeaders(this, datasetId), path: { dataset_id: datasetId } }));
}

/** A dataset of the organization by its tracking id: `GET /api/dataset/tracking_id/{tracking_id}`. */
export function getDatasetByTrackingId(this: ChunkSearch, trackingId: string, signal?: AbortSignal) {
  return unwrap(api.getDatasetByTrackingId({ ...sending(this, signal), headers: organizationHeaders(this), path: { tracking_id: trackingId } }));
}

/** The datasets of an organization with their usage: `GET /api/dataset/organization/{organization_id}`. */
export function getDatasetsFromOrganization(this: ChunkSearch, organizationId: string, limit?: number, offset?: number, signal?: AbortSignal) {
  return unwrap(
    api.getDatasetsFromOrganization({
      ...sending(this, signal),
      headers: organizationHeaders(this, organizationId),
      path: { organization_id: organizationId },
      query: { limit, offset },
    }),
  );
}

/** How many chunks a dataset holds: `GET /api/dataset/usage/{dataset_id}`. */
export function getDatasetUsageById(this: ChunkSearch, datasetId: string, signal?: AbortSignal) {
  return unwrap(api.getUsageByDatasetId({ ...sending(this, signal), headers: datasetHeaders(this, datasetId), path: { dataset_id: datasetId } }));
}

/** How much ingestion work a dataset has waiting: `GET /api/dataset/get_dataset_queue_lengths`. */
export function getDatasetQueueLengths(this: ChunkSearch, datasetId: string, signal?: AbortSignal) {
  return unwrap(api.getDatasetQueueLengths({ ...sending(this, signal), headers: datasetHeaders(this, datasetId) }));
}

/** Remove every chunk, group and file of a dataset, keeping the dataset: `PUT /api/dataset/clear/{dataset_id}`. */
export function clearDataset(this: ChunkSearch, datasetId: string, signal?: AbortSignal): Promise<void> {
  return unwrap(api.clearDataset({ ...sending(this, signal), headers: datasetHeaders(this, datasetId), path: { dataset_id: datasetId } }));
}

/** Delete a dataset: `DELETE /api/dataset/{dataset_id}`. */
export function deleteDataset(this: ChunkSearch, datasetId: string, signal?: AbortSignal): Promise<void> {
  return unwrap(api.deleteDataset({ ...sending(this, signal), headers: datasetHeaders(this, datasetId), path: { dataset_id: datasetId } }));
}

/** A dataset's files, a page at a time: `GET /api/dataset/files/{dataset_id}/{page}`. */
export function getDatasetFiles(this: ChunkSearch, datasetId: string, page: number, signal?: AbortSignal) {
  return unwrap(
    api.getDatasetFilesAndGroupIdsHandler({ ...sending(this, signal), headers: datasetHeaders(this, datasetId), path: { dataset_id: datasetId, page } }),
  );
}

/** The tags of a dataset's chunks with their counts: `POST /api/dataset/get_all_tags`. */
export function getAllDatasetTags(this: ChunkSearch, props: T.GetAllTagsReqPayload, datasetId: string, signal?: AbortSignal) {
  return unwrap(api.getAllTags({ ...reading(this, signal), headers: datasetHeaders(this, datasetId), body: props }));
}

/** The events (file uploads, failures…) of a dataset: `POST /api/dataset/events`. */
export function getDatasetEvents(this: ChunkSearch, props: T.GetEventsReqPayload, datasetId: string, signal?: AbortSignal) {
  return unwrap(api.getEvents({ ...reading(this, signal), headers: datasetHeaders(this, datasetId), body: props }));
}

/** The events of this client's dataset: `POST /api/dataset/events`. */
export function getEventsForDataset(this: ChunkSearch, data: T.GetEventsReqPayload, signal?: AbortSignal) {
  return unwrap(api.getEvents({ ...reading(this, signal), headers: datasetHeaders(this), body: data }));
}
