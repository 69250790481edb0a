// Handlers of the dataset operations.
import type {
  BatchCreateDatasetsHandler,
  ClearDatasetHandler,
  CloneDatasetHandler,
  CreatePagefindIndexForDatasetHandler,
  CreateDatasetHandler,
  DeleteDatasetByTrackingIdHandler,
  DeleteDatasetHandler,
  GetAllTagsHandler,
  GetDatasetByTrackingIdHandler,
  GetDatasetHandler,
  GetDatasetQueueLengthsHandler,
  GetDatasetsFromOrganizationHandler,
  GetEventsHandler,
  GetPagefindIndexForDatasetHandler,
  GetUsageByDatasetIdHandler,
  UpdateDatasetHandler,
} from '../../generated/handlers.js';
import {
  assertSameDataset,
  clearDataset,
  cloneDataset,
  createDataset,
  createDatasets,
  datasetRecord,
  datasetUsage,
  deleteDataset,
  deleteDatasetByTrackingId,
  getDatasetByTrackingId,
  listOrganizationDatasets,
  listTags,
  queueLengths,
  updateDataset,
} from '../domain/datasets.js';
import { datasetDefaults } from '../domain/datasetConfig.js';
import { listEvents } from '../domain/events.js';
import { pagefindIndexUrl, requestPagefindIndex } from '../domain/pagefind/index.js';
import { badRequest } from '../errors.js';

export const create_dataset: CreateDatasetHandler = async ({ body, organizationId, services }) => ({
  status: 200,
  body: await createDataset(services.store.db, organizationId, body, datasetDefaults(services.defaultEmbedder)),
});

export const update_dataset: UpdateDatasetHandler = async ({ body, caller, organizationId, services }) => ({
  status: 200,
  body: await updateDataset(services.store.db, organizationId, caller, body),
});

export const batch_create_datasets: BatchCreateDatasetsHandler = async ({ body, caller, organizationId, services }) => ({
  status: 200,
  body: await createDatasets(services.store.db, organizationId, caller, body.datasets, body.upsert ?? false, datasetDefaults(services.defaultEmbedder)),
});

export const clone_dataset: CloneDatasetHandler = async ({ body, caller, organizationId, services }) => ({
  status: 200,
  body: await cloneDataset(services, organizationId, caller, body),
});

export const get_dataset: GetDatasetHandler = async ({ path, dataset }) => {
  assertSameDataset(dataset, path.dataset_id);
  return { status: 200, body: datasetRecord(dataset) };
};

export const get_dataset_by_tracking_id: GetDatasetByTrackingIdHandler = async ({ path, caller, organizationId, services }) => ({
  status: 200,
  body: await getDatasetByTrackingId(services.store.db, organizationId, caller, path.tracking_id),
});

export const get_datasets_from_organization: GetDatasetsFromOrganizationHandler = async ({ path, query, caller, organizationId, services }) => {
  if (path.organization_id !== organizationId) {
    throw badRequest(`organization_id ${path.organization_id} in the path is not the organization ${organizationId} that SVC-Organization names`);
  }
  return {
    status: 200,
    body: await listOrganizationDatasets(services.store.db, organizationId, caller, { limit: query?.limit ?? 10, offset: query?.offset ?? 0 }),
  };
};

export const get_usage_by_dataset_id: GetUsageByDatasetIdHandler = async ({ path, dataset, services }) => {
  assertSameDataset(dataset, path.dataset_id);
  return { status: 200, body: await datasetUsage(services.store.db, dataset.id) };
};

export const get_dataset_queue_lengths: GetDatasetQueueLengthsHandler = async ({ dataset, services }) => ({
  status: 200,
  body: await queueLengths(services.store.db, dataset.id),
});

export const get_events: GetEventsHandler = async ({ body, dataset, services }) => ({
  status: 200,
  body: await listEvents(services.store.db, dataset.id, { page: body.page ?? 1, pageSize: body.page_size ?? 10, types: body.event_types }),
});

export const get_all_tags: GetAllTagsHandler = async ({ body, dataset, services }) => ({
  status: 200,
  body: await listTags(services.store.db, dataset.id, { page: body.page ?? 1, pageSize: body.page_size ?? 10 }),
});

export const delete_dataset: DeleteDatasetHandler = async ({ path, dataset, services }) => {
  assertSameDataset(dataset, path.dataset_id);
  await deleteDataset(services, dataset);
  return { status: 204, body: undefined };
};

export const delete_dataset_by_tracking_id: DeleteDatasetByTrackingIdHandler = async ({ path, dataset, services }) => {
  await deleteDatasetByTrackingId(services, dataset, path.tracking_id);
  return { status: 204, body: undefined };
};

export const clear_dataset: ClearDatasetHandler = async ({ path, dataset, services }) => {
  assertSameDataset(dataset, path.dataset_id);
  await clearDataset(services, dataset);
  return { status: 204, body: undefined };
};

export const create_pagefind_index_for_dataset: CreatePagefindIndexForDatasetHandler = async ({ dataset, services }) => {
  await requestPagefindIndex(services, dataset);
  return { status: 204, body: undefined };
};

export const get_pagefind_index_for_dataset: GetPagefindIndexForDatasetHandler = async ({ dataset, services }) => ({
  status: 200,
  body: await pagefindIndexUrl(services, dataset),
});
