// Datasets as the rest of the service sees them, how a `SVC-Dataset` value names one, and the
// dataset operations.
import type { Knex } from 'knex';
import type * as T from '../../sdk/src/generated/types.gen.js';
import { workflowIds } from '../../workflows/registry.js';
import type { Caller } from '../auth/caller.js';
import { WorkflowAlreadyRunningError } from '../engines/workflows/types.js';
import { badRequest, forbidden, notFound } from '../errors.js';
import { timestamp } from '../format.js';
import type { Services } from '../services.js';
import { datasetConfig, mergeConfiguration, parseConfigurationInput, vectorShapeFields, type DatasetConfiguration } from './datasetConfig.js';
import { isUuid } from './ids.js';
import { revokePublicPageKey } from './publicPage/keys.js';
import { reservePlanCapacity } from './quotas.js';

export interface DatasetRow {
  id: string;
  organization_id: string;
  name: string;
  tracking_id: string | null;
  server_configuration: Record<string, unknown>;
  client_configuration: Record<string, unknown>;
  deleted: number;
  created_at: Date;
  updated_at: Date;
}

/**
 * Finds the dataset a `SVC-Dataset` header names: a valid uuid is taken as an id, anything else as a
 * tracking id within the caller's organization (the administrator's must be unambiguous). A key
 * sees only its organization's datasets: another organization's answers 404 like an unknown one,
 * so the answer does not tell whether it exists.
 */
export async function resolveDataset(db: Knex, value: string, caller: Caller): Promise<DatasetRow> {
  const live = db<DatasetRow>('datasets').where({ deleted: 0 });
  if (caller.kind === 'key') live.where({ organization_id: caller.organizationId });
  if (isUuid(value)) {
    const row = await live.clone().where({ id: value }).first();
    if (row) return row;
  }
  const byTrackingId = live.clone().where({ tracking_id: value });
  const rows = await byTrackingId.limit(2);
  if (rows.length > 1) throw badRequest(`SVC-Dataset ${value} names datasets of several organizations; use the dataset id`);
  if (rows.length === 0) throw notFound(`dataset ${value} not found`);
  return rows[0];
}

// ---------------------------------------------------------------------------------------------
// The dataset operations: creating, changing, listing, counting, deleting, clearing and cloning.

/** A live dataset of the organization by id; 404 otherwise. */
export async function datasetOfOrganization(db: Knex, organizationId: string, id: string): Promise<DatasetRow> {
  const row = await db<DatasetRow>('datasets').where({ id, organization_id: organizationId, deleted: 0 }).first();
  if (!row) throw notFound(`dataset ${id} not found in organization ${organizationId}`);
  return row;
}

/** A path's `dataset_id` must name the dataset `SVC-Dataset` names. */
export function assertSameDataset(dataset: DatasetRow, pathDatasetId: string): void {
  if (pathDatasetId !== dataset.id) {
    throw badRequest(`dataset_id ${pathDatasetId} in the path is not the dataset ${dataset.id} that SVC-Dataset names`);
  }
}

/** An organization-scoped request that acts on one dataset still honours a key's dataset restrictions. */
export function assertKeyMayUse(caller: Caller, datasetId: string): void {
  if (caller.kind === 'key' && caller.datasetIds.length > 0 && !caller.datasetIds.includes(datasetId)) {
    throw forbidden(`the API key is limited to other datasets than ${datasetId}`);
  }
}

export function datasetRecord(row: DatasetRow): T.Dataset {
  return {
    id: row.id,
    name: row.name,
    organization_id: row.organization_id,
    tracking_id: row.tracking_id,
    server_configuration: datasetConfig(row),
    deleted: row.deleted,
    created_at: timestamp(row.created_at),
    updated_at: timestamp(row.updated_at),
  };
}

function datasetSummary(row: DatasetRow): T.DatasetDto {
  return {
    id: row.id,
    name: row.name,
    organization_id: row.organization_id,
    tracking_id: row.tracking_id,
    created_at: timestamp(row.created_at),
    updated_at: timestamp(row.updated_at),
  };
}

export interface NewDataset {
  dataset_name: string;
  tracking_id?: string | null;
  server_configuration?: unknown;
}

/** `defaults`: the configuration a new dataset starts from (datasetDefaults). */
export async function createDataset(db: Knex, organizationId: string, request: NewDataset, defaults: DatasetConfiguration): Promise<T.Dataset> {
  const [created] = await createDatasets(db, organizationId, null, [request], false, defaults);
  return created;
}

/**
 * Creates the datasets, all or none, in one transaction. With `upsert`, an entry whose tracking id
 * names a dataset of the organization updates it (name, given configuration fields) instead.
 */
export async function createDatasets(
  db: Knex,
  organizationId: string,
  caller: Caller | null,
  entries: NewDataset[],
  upsert: boolean,
  defaults: DatasetConfiguration,
): Promise<T.Dataset[]> {
  const where = (i: number) => (entries.length > 1 ? `datasets[${i}].` : '');
  const seen = new Map<string, number>();
  const parsed = entries.map((entry, i) => {
    if (entry.tracking_id != null) {
      const earlier = seen.get(entry.tracking_id);
      if (earlier !== undefined) {
        throw badRequest(`${where(i)}tracking_id ${entry.tracking_id} is given twice (also at datasets[${earlier}])`);
      }
      seen.set(entry.tracking_id, i);
    }
    return { entry, changes: parseConfigurationInput(entry.server_configuration, `${where(i)}server_configuration`) };
  });

  const rows = await withUniqueTrackingIds(() =>
    db.transaction(async (trx) => {
      const trackingIds = [...seen.keys()];
      const existing = trackingIds.length
        ? await trx<DatasetRow>('datasets').where({ organization_id: organizationId, deleted: 0 }).whereIn('tracking_id', trackingIds).forUpdate()
        : [];
      const byTrackingId = new Map(existing.map((row) => [row.tracking_id!, row]));
      if (!upsert && existing.length > 0) {
        const taken = parsed.findIndex(({ entry }) => entry.tracking_id != null && byTrackingId.has(entry.tracking_id));
        throw badRequest(`${where(taken)}tracking_id ${entries[taken].tracking_id} is already used by a dataset of the organization`);
      }
      const creating = parsed.filter(({ entry }) => entry.tracking_id == null || !byTrackingId.has(entry.tracking_id)).length;
      await reservePlanCapacity(trx, organizationId, { datasets: creating });

      const out: DatasetRow[] = [];
      for (const [i, { entry, changes }] of parsed.entries()) {
        const current = entry.tracking_id == null ? undefined : byTrackingId.get(entry.tracking_id);
        if (current) {
          if (caller) assertKeyMayUse(caller, current.id);
          out.push(await applyUpdate(trx, current, { name: entry.dataset_name, changes }, `${where(i)}server_configuration`));
          continue;
        }
        const [row] = await trx<DatasetRow>('datasets')
          .insert({
            organization_id: organizationId,
            name: entry.dataset_name,
            tracking_id: entry.tracking_id ?? null,
            server_configuration: JSON.stringify(mergeConfiguration(defaults, changes)) as never,
          })
          .returning('*');
        out.push(row);
      }
      return out;
    }),
  );
  return rows.map(datasetRecord);
}

export interface DatasetUpdate {
  dataset_id?: string | null;
  tracking_id?: string | null;
  dataset_name?: string | null;
  new_tracking_id?: string | null;
  server_configuration?: unknown;
}

export async function updateDataset(db: Knex, organizationId: string, caller: Caller, request: DatasetUpdate): Promise<T.Dataset> {
  const changes = parseConfigurationInput(request.server_configuration);
  const row = await withUniqueTrackingIds(() =>
    db.transaction(async (trx) => {
      let current: DatasetRow | undefined;
      if (request.dataset_id != null) {
        current = await trx<DatasetRow>('datasets').where({ id: request.dataset_id, organization_id: organizationId, deleted: 0 }).forUpdate().first();
        if (!current) throw notFound(`dataset ${request.dataset_id} not found in organization ${organizationId}`);
        if (request.tracking_id != null && current.tracking_id !== request.tracking_id) {
          throw badRequest(`dataset_id ${request.dataset_id} and tracking_id ${request.tracking_id} name different datasets`);
        }
      } else if (request.tracking_id != null) {
        current = await trx<DatasetRow>('datasets')
          .where({ tracking_id: request.tracking_id, organization_id: organizationId, deleted: 0 })
          .forUpdate()
          .first();
        if (!current) throw notFound(`no dataset with tracking_id ${request.tracking_id} in organization ${organizationId}`);
      } else {
        throw badRequest('name the dataset to update by dataset_id or tracking_id');
      }
      assertKeyMayUse(caller, current.id);
      if (request.new_tracking_id != null && request.new_tracking_id !== current.tracking_id) {
        const taken = await trx('datasets').where({ organization_id: organizationId, tracking_id: request.new_tracking_id }).first('id');
        if (taken) throw badRequest(`new_tracking_id ${request.new_tracking_id} is already used by a dataset of the organization`);
      }
      return applyUpdate(trx, current, { name: request.dataset_name, trackingId: request.new_tracking_id, changes }, 'server_configuration');
    }),
  );
  return datasetRecord(row);
}

async function applyUpdate(
  trx: Knex.Transaction,
  current: DatasetRow,
  update: { name?: string | null; trackingId?: string | null; changes: Partial<DatasetConfiguration> },
  where: string,
): Promise<DatasetRow> {
  const before = datasetConfig(current);
  const after = mergeConfiguration(before, update.changes);
  const reshaped = vectorShapeFields.find((field) => after[field] !== before[field]);
  if (reshaped && (await trx('chunks').where({ dataset_id: current.id }).first('id'))) {
    throw badRequest(
      `${where}.${reshaped}: cannot change from ${JSON.stringify(before[reshaped])} to ${JSON.stringify(after[reshaped])} ` +
        `while dataset ${current.id} holds chunks: vectors already exist`,
    );
  }
  // A dataset no longer public takes its page's key away at once.
  if (!after.PUBLIC_DATASET.enabled) await revokePublicPageKey(trx, current.id);
  const [row] = await trx<DatasetRow>('datasets')
    .where({ id: current.id })
    .update({
      name: update.name ?? current.name,
      tracking_id: update.trackingId ?? current.tracking_id,
      server_configuration: JSON.stringify(after) as never,
      updated_at: trx.fn.now() as never,
    })
    .returning('*');
  return row;
}

/** A second dataset with a tracking id taken meanwhile (a race the checks above cannot see) is refused too. */
async function withUniqueTrackingIds<R>(work: () => Promise<R>): Promise<R> {
  try {
    return await work();
  } catch (error) {
    const e = error as { code?: string; constraint?: string };
    if (e?.code === '23505' && e.constraint?.includes('tracking_id')) {
      throw badRequest('tracking_id is already used by a dataset of the organization');
    }
    throw error;
  }
}

export async function getDatasetByTrackingId(db: Knex, organizationId: string, caller: Caller, trackingId: string): Promise<T.Dataset> {
  const row = await db<DatasetRow>('datasets').where({ organization_id: organizationId, tracking_id: trackingId, deleted: 0 }).first();
  if (!row) throw notFound(`no dataset with tracking_id ${trackingId} in organization ${organizationId}`);
  assertKeyMayUse(caller, row.id);
  return datasetRecord(row);
}

/** The organization's datasets in creation order with their chunk counts; a restricted key sees only its datasets. */
export async function listOrganizationDatasets(
  db: Knex,
  organizationId: string,
  caller: Caller,
  page: { limit: number; offset: number },
): Promise<T.DatasetAndUsage[]> {
  const query = db<DatasetRow>('datasets')
    .where({ organization_id: organizationId, deleted: 0 })
    .orderBy([{ column: 'created_at' }, { column: 'id' }])
    .limit(page.limit)
    .offset(page.offset);
  if (caller.kind === 'key' && caller.datasetIds.length > 0) query.whereIn('id', caller.datasetIds);
  const rows = await query;
  const counts = await chunkCounts(
    db,
    rows.map((r) => r.id),
  );
  return rows.map((row) => ({
    dataset: datasetSummary(row),
    dataset_usage: { id: row.id, dataset_id: row.id, chunk_count: counts.get(row.id) ?? 0 },
  }));
}

/** The datasets' chunk counts, from the changes the chunk writes count (migration 018): no chunk is read. */
async function chunkCounts(db: Knex, datasetIds: string[]): Promise<Map<string, number>> {
  if (datasetIds.length === 0) return new Map();
  const rows = await db('dataset_chunk_counts').whereIn('dataset_id', datasetIds).groupBy('dataset_id').select('dataset_id', db.raw('sum(chunks) as count'));
  return new Map(rows.map((r: { dataset_id: string; count: string }) => [r.dataset_id, Number(r.count)]));
}

/** How many chunks the dataset holds. */
export async function datasetChunkCount(db: Knex, datasetId: string): Promise<number> {
  return (await chunkCounts(db, [datasetId])).get(datasetId) ?? 0;
}

export async function datasetUsage(db: Knex, datasetId: string): Promise<T.DatasetUsageCount> {
  return { id: datasetId, dataset_id: datasetId, chunk_count: await datasetChunkCount(db, datasetId) };
}

/** Files waiting or being processed; chunks are written synchronously, so none ever wait. */
export async function queueLengths(db: Knex, datasetId: string): Promise<T.DatasetQueueLengthsResponse> {
  const [{ count }] = await db('files').where({ dataset_id: datasetId }).whereIn('status', ['pending', 'processing']).count<{ count: string }[]>('* as count');
  return { file_queue_length: Number(count), chunk_queue_length: 0 };
}

/** The distinct tags of the dataset's chunks with how many chunks carry each, most frequent first. */
export async function listTags(db: Knex, datasetId: string, page: { page: number; pageSize: number }): Promise<T.GetAllTagsResponse> {
  const { rows } = await db.raw<{ rows: { tag: string; count: string }[] }>(
    `select tag, count(*) as count
     from chunks, unnest(tag_set) as tag
     where dataset_id = ? and tag is not null
     group by tag
     order by count desc, tag
     limit ? offset ?`,
    [datasetId, page.pageSize, (page.page - 1) * page.pageSize],
  );
  const { rows: totals } = await db.raw<{ rows: { total: string }[] }>(
    `select count(distinct tag) as total from chunks, unnest(tag_set) as tag where dataset_id = ? and tag is not null`,
    [datasetId],
  );
  return { tags: rows.map((r) => ({ tag: r.tag, count: Number(r.count) })), total: Number(totals[0].total) };
}

function assertUnlocked(dataset: DatasetRow, action: string): void {
  if (datasetConfig(dataset).LOCKED) {
    throw badRequest(`dataset ${dataset.id} is locked (server_configuration.LOCKED); unlock it before you ${action} it`);
  }
}

/**
 * Hides the dataset at once (deleted = 1, its tracking id freed) and starts its purge in the
 * background. Should the purge not start, the dataset is restored so the request can be repeated.
 */
export async function deleteDataset(services: Services, dataset: DatasetRow): Promise<void> {
  assertUnlocked(dataset, 'delete');
  const { db } = services.store;
  const hidden = await db('datasets').where({ id: dataset.id, deleted: 0 }).update({ deleted: 1, tracking_id: null, updated_at: db.fn.now() });
  if (hidden === 0) throw notFound(`dataset ${dataset.id} not found`);
  // Hidden datasets are never searched: their postings need not stay in memory.
  services.bm25.drop(dataset.id);
  services.vectors.drop(dataset.id);
  try {
    await services.workflows.run('purgeDataset', { workflowId: workflowIds.purgeDataset(dataset.id), input: { datasetId: dataset.id } });
  } catch (error) {
    await db('datasets')
      .where({ id: dataset.id })
      .update({ deleted: 0, tracking_id: dataset.tracking_id })
      .catch(() => db('datasets').where({ id: dataset.id }).update({ deleted: 0 }));
    throw error;
  }
}

/** Deletes the dataset that `trackingId` names, which must be the dataset `SVC-Dataset` names. */
export async function deleteDatasetByTrackingId(services: Services, dataset: DatasetRow, trackingId: string): Promise<void> {
  const named = await services.store
    .db<DatasetRow>('datasets')
    .where({ organization_id: dataset.organization_id, tracking_id: trackingId, deleted: 0 })
    .first('id');
  if (!named) throw notFound(`no dataset with tracking_id ${trackingId} in organization ${dataset.organization_id}`);
  if (named.id !== dataset.id) {
    throw badRequest(`tracking_id ${trackingId} names dataset ${named.id}, not the dataset ${dataset.id} that SVC-Dataset names`);
  }
  await deleteDataset(services, dataset);
}

/** Starts emptying the dataset in the background. */
export async function clearDataset(services: Services, dataset: DatasetRow): Promise<void> {
  assertUnlocked(dataset, 'clear');
  try {
    await services.workflows.run('clearDataset', { workflowId: workflowIds.clearDataset(dataset.id), input: { datasetId: dataset.id } });
  } catch (error) {
    if (error instanceof WorkflowAlreadyRunningError) throw badRequest(`dataset ${dataset.id} is already being cleared`);
    throw error;
  }
}

export interface CloneRequest {
  dataset_to_clone: string;
  dataset_name: string;
  tracking_id?: string | null;
  clone_chunks?: boolean | null;
}

/**
 * Creates a dataset with the source's configuration and returns it; with `clone_chunks`, a
 * background workflow copies the chunks, groups and bookmarks and indexes the copies. The plan must
 * have room for the dataset and, when copying, for the source's chunks.
 */
export async function cloneDataset(services: Services, organizationId: string, caller: Caller, request: CloneRequest): Promise<T.Dataset> {
  const { db } = services.store;
  const source = await datasetOfOrganization(db, organizationId, request.dataset_to_clone);
  assertKeyMayUse(caller, source.id);
  const row = await withUniqueTrackingIds(() =>
    db.transaction(async (trx) => {
      if (request.tracking_id != null) {
        const taken = await trx('datasets').where({ organization_id: organizationId, tracking_id: request.tracking_id }).first('id');
        if (taken) throw badRequest(`tracking_id ${request.tracking_id} is already used by a dataset of the organization`);
      }
      const chunks = request.clone_chunks ? await datasetChunkCount(trx, source.id) : 0;
      await reservePlanCapacity(trx, organizationId, { datasets: 1, chunks });
      const [created] = await trx<DatasetRow>('datasets')
        .insert({
          organization_id: organizationId,
          name: request.dataset_name,
          tracking_id: request.tracking_id ?? null,
          server_configuration: JSON.stringify(datasetConfig(source)) as never,
          client_configuration: JSON.stringify(source.client_configuration ?? {}) as never,
        })
        .returning('*');
      return created;
    }),
  );
  if (request.clone_chunks) {
    try {
      await services.workflows.run('cloneDataset', { workflowId: workflowIds.cloneDataset(row.id), input: { sourceId: source.id, targetId: row.id } });
    } catch (error) {
      await db('datasets').where({ id: row.id }).del();
      throw error;
    }
  }
  return datasetRecord(row);
}
