// Chunk groups: named collections of a dataset's chunks, and bookmarks placing chunks in them.
// Every read and write is scoped to one dataset: a group or chunk of another dataset is not found.
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type * as T from '../../sdk/src/generated/types.gen.js';
import { badRequest, notFound, payloadTooLarge } from '../errors.js';
import { timestamp } from '../format.js';
import type { Services } from '../services.js';
import { deleteChunks as deleteChunkRows } from './chunks/delete.js';
import { type ApiVersion, type ChunkRow, chunkColumnsOf, versionedChunkRecord } from './chunks/records.js';
import { emitEvent } from './events.js';

export interface GroupRow {
  id: string;
  dataset_id: string;
  tracking_id: string | null;
  name: string;
  description: string;
  metadata: unknown;
  tag_set: string[] | null;
  file_id: string | null;
  created_at: Date;
  updated_at: Date;
}

/** Groups per page of every paged listing (the reference's fixed page size). */
export const GROUP_PAGE_SIZE = 10;
/** The most groups one create request may carry. */
export const MAX_GROUPS_PER_REQUEST = 1000;
/** Ids per statement when deleting or looking up many rows (bound parameters are limited). */
const ID_BATCH = 5000;

/** A group named by its id or by its tracking id. */
export type GroupRef = { id: string } | { trackingId: string };

export async function getGroupByTrackingId(db: Knex, datasetId: string, trackingId: string): Promise<T.ChunkGroupAndFileId> {
  return groupAndFileRecord(await findGroup(db, datasetId, { trackingId }));
}

export async function getGroup(db: Knex, datasetId: string, groupId: string): Promise<T.ChunkGroupAndFileId> {
  return groupAndFileRecord(await findGroup(db, datasetId, { id: groupId }));
}

/** The group's row, or 404 naming how it was asked for. */
export async function findGroup(db: Knex, datasetId: string, ref: GroupRef): Promise<GroupRow> {
  const where = 'id' in ref ? { id: ref.id } : { tracking_id: ref.trackingId };
  const row = await db<GroupRow>('chunk_groups')
    .where({ dataset_id: datasetId, ...where })
    .first();
  if (!row) throw notFound(`${describeRef(ref)} not found in this dataset`);
  return row;
}

function describeRef(ref: GroupRef): string {
  return 'id' in ref ? `group ${ref.id}` : `group with tracking_id ${ref.trackingId}`;
}

// ---------------------------------------------------------------------------------------------
// Creating and changing groups

/**
 * Creates the groups, all or none, in one transaction. A tracking id given twice in the request, or
 * already used by a group of the dataset, refuses the request, except that an entry with
 * `upsert_by_tracking_id` replaces the existing group's fields instead.
 */
export async function createGroups(db: Knex, datasetId: string, entries: T.CreateSingleChunkGroupReqPayload[], batch: boolean): Promise<T.ChunkGroup[]> {
  if (entries.length > MAX_GROUPS_PER_REQUEST) {
    throw payloadTooLarge(`a request may create at most ${MAX_GROUPS_PER_REQUEST} groups; this one has ${entries.length}`);
  }
  const where = (i: number) => (batch ? `[${i}].` : '');
  const seen = new Map<string, number>();
  const parsed = entries.map((entry, i) => {
    const trackingId = entry.tracking_id ? entry.tracking_id : null;
    if (trackingId !== null) {
      const earlier = seen.get(trackingId);
      if (earlier !== undefined) throw badRequest(`${where(i)}tracking_id ${trackingId} is given twice in the request (also at [${earlier}])`);
      seen.set(trackingId, i);
    }
    return {
      trackingId,
      upsert: entry.upsert_by_tracking_id ?? false,
      fields: {
        name: entry.name ?? '',
        description: entry.description ?? '',
        metadata: jsonb(entry.metadata),
        tag_set: entry.tag_set ?? null,
      },
    };
  });
  if (parsed.length === 0) return [];

  const rows = await withUniqueTrackingIds(() =>
    db.transaction(async (trx) => {
      const trackingIds = [...seen.keys()];
      const existing: GroupRow[] = [];
      for (const part of batches(trackingIds)) {
        existing.push(...(await trx<GroupRow>('chunk_groups').where({ dataset_id: datasetId }).whereIn('tracking_id', part).forUpdate()));
      }
      const byTrackingId = new Map(existing.map((row) => [row.tracking_id!, row]));
      const taken = parsed.findIndex((p) => p.trackingId !== null && !p.upsert && byTrackingId.has(p.trackingId));
      if (taken >= 0) {
        throw badRequest(
          `${where(taken)}tracking_id ${parsed[taken].trackingId} is already used by group ${byTrackingId.get(parsed[taken].trackingId!)!.id} of this dataset; ` +
            'set upsert_by_tracking_id to replace it',
        );
      }

      // The group each entry replaces, if any; new groups get their ids here, so the answer follows the request's order.
      const replaced = parsed.map((p) => (p.trackingId === null ? undefined : byTrackingId.get(p.trackingId)));
      const ids = replaced.map((row) => row?.id ?? randomUUID());
      const stored = new Map<string, GroupRow>();
      for (const [i, p] of parsed.entries()) {
        if (!replaced[i]) continue;
        const [row] = await trx<GroupRow>('chunk_groups')
          .where({ id: ids[i] })
          .update({ ...p.fields, updated_at: trx.fn.now() } as never)
          .returning('*');
        stored.set(row.id, row);
      }
      const inserts = parsed.flatMap((p, i) => (replaced[i] ? [] : [{ id: ids[i], dataset_id: datasetId, tracking_id: p.trackingId, ...p.fields }]));
      for (let start = 0; start < inserts.length; start += 500) {
        const created = await trx<GroupRow>('chunk_groups')
          .insert(inserts.slice(start, start + 500) as never)
          .returning('*');
        for (const row of created) stored.set(row.id, row);
      }
      return ids.map((id) => stored.get(id)!);
    }),
  );
  return rows.map(groupRecord);
}

export async function updateGroup(db: Knex, datasetId: string, request: T.UpdateChunkGroupReqPayload): Promise<void> {
  let ref: GroupRef;
  if (request.group_id != null) ref = { id: request.group_id };
  else if (request.tracking_id != null) ref = { trackingId: request.tracking_id };
  else throw badRequest('name the group to update by group_id or tracking_id');

  await withUniqueTrackingIds(() =>
    db.transaction(async (trx) => {
      const where = 'id' in ref ? { id: ref.id } : { tracking_id: ref.trackingId };
      const current = await trx<GroupRow>('chunk_groups')
        .where({ dataset_id: datasetId, ...where })
        .forUpdate()
        .first();
      if (!current) throw notFound(`${describeRef(ref)} not found in this dataset`);

      let trackingId = current.tracking_id;
      if ('id' in ref && request.tracking_id != null) {
        trackingId = request.tracking_id === '' ? null : request.tracking_id;
        if (trackingId !== null && trackingId !== current.tracking_id) {
          const other = await trx('chunk_groups').where({ dataset_id: datasetId, tracking_id: trackingId }).first('id');
          if (other) throw badRequest(`tracking_id ${trackingId} is already used by group ${other.id} of this dataset`);
        }
      }
      const tagSet = request.tag_set ?? current.tag_set;
      await trx('chunk_groups')
        .where({ id: current.id })
        .update({
          name: request.name ?? current.name,
          description: request.description ?? current.description,
          tracking_id: trackingId,
          metadata: request.metadata != null ? jsonb(request.metadata) : jsonb(current.metadata),
          tag_set: tagSet,
          updated_at: trx.fn.now(),
        });
      if (request.update_chunks && tagSet && tagSet.length > 0) {
        const changed = await addTagsToGroupChunks(trx, datasetId, current.id, [...new Set(tagSet)]);
        await emitEvent(trx, { datasetId, type: 'group_chunks_updated', data: { group_id: current.id, chunks_updated: changed } });
      }
    }),
  );
}

/** Appends to every chunk of the group the tags it does not have yet, keeping the order of both lists. */
async function addTagsToGroupChunks(trx: Knex.Transaction, datasetId: string, groupId: string, tags: string[]): Promise<number> {
  const result = await trx.raw(
    `update chunks c
        set tag_set = coalesce(c.tag_set, '{}'::text[])
                      || array(select t.tag from unnest(?::text[]) with ordinality as t(tag, n)
                               where not (t.tag = any(coalesce(c.tag_set, '{}'::text[]))) order by t.n),
            updated_at = now()
      where c.dataset_id = ?
        and c.id in (select b.chunk_id from chunk_group_bookmarks b where b.group_id = ?)
        and not (coalesce(c.tag_set, '{}'::text[]) @> ?::text[])`,
    [tags, datasetId, groupId, tags],
  );
  return (result as { rowCount?: number }).rowCount ?? 0;
}

/** A tracking id taken meanwhile by a concurrent request (which the checks above cannot see) is refused too. */
async function withUniqueTrackingIds<R>(work: () => Promise<R>): Promise<R> {
  try {
    return await work();
  } catch (error) {
    const e = error as { code?: string; constraint?: string };
    if (e?.code === '23505' && e.constraint?.includes('tracking_id')) {
      throw badRequest('tracking_id is already used by another group of this dataset');
    }
    throw error;
  }
}

// ---------------------------------------------------------------------------------------------
// Deleting groups

/**
 * Deletes the group and its bookmarks. With `withChunks`, the chunks in the group go first (rows,
 * vectors and lexical index entries, also when other groups hold them), so that a failure leaves
 * the group in place for a retry.
 */
export async function deleteGroup(services: Services, datasetId: string, ref: GroupRef, withChunks: boolean): Promise<void> {
  const db = services.store.db;
  const group = await findGroup(db, datasetId, ref);
  if (withChunks) {
    const chunkIds: string[] = await db('chunk_group_bookmarks as b')
      .join('chunks as c', 'c.id', 'b.chunk_id')
      .where({ 'b.group_id': group.id, 'c.dataset_id': datasetId })
      .pluck('c.id');
    for (const part of batches(chunkIds)) await deleteChunkRows(services, datasetId, part);
  }
  // Bookmarks go with the group (ON DELETE CASCADE).
  await db('chunk_groups').where({ id: group.id, dataset_id: datasetId }).del();
}

// ---------------------------------------------------------------------------------------------
// Bookmarks

/** Bookmarks a chunk in a group; adding a chunk that is already there changes nothing. */
export async function addChunkToGroup(
  db: Knex,
  datasetId: string,
  groupId: string,
  chunk: { chunk_id?: string | null; chunk_tracking_id?: string | null },
): Promise<void> {
  const byId = chunk.chunk_id != null;
  if (byId === (chunk.chunk_tracking_id != null)) throw badRequest('give exactly one of chunk_id and chunk_tracking_id');
  const group = await db('chunk_groups').where({ id: groupId, dataset_id: datasetId }).first('id');
  if (!group) throw notFound(`group ${groupId} not found in this dataset`);
  const found = await db('chunks')
    .where({ dataset_id: datasetId, ...(byId ? { id: chunk.chunk_id } : { tracking_id: chunk.chunk_tracking_id }) })
    .first('id');
  if (!found) throw notFound(`chunk ${byId ? chunk.chunk_id : `with tracking_id ${chunk.chunk_tracking_id}`} not found in this dataset`);
  await db('chunk_group_bookmarks').insert({ group_id: groupId, chunk_id: found.id }).onConflict(['group_id', 'chunk_id']).ignore();
}

export async function addChunkToGroupByTrackingId(
  db: Knex,
  datasetId: string,
  groupTrackingId: string,
  chunk: { chunk_id?: string | null; chunk_tracking_id?: string | null },
): Promise<void> {
  if ((chunk.chunk_id != null) === (chunk.chunk_tracking_id != null)) throw badRequest('give exactly one of chunk_id and chunk_tracking_id');
  const group = await findGroup(db, datasetId, { trackingId: groupTrackingId });
  await addChunkToGroup(db, datasetId, group.id, chunk);
}

/**
 * Takes a chunk out of a group, named in the query or the body (the same chunk when both are given).
 * A chunk of the dataset that is not in the group is left as it is.
 */
export async function removeChunkFromGroup(
  db: Knex,
  datasetId: string,
  groupId: string,
  fromQuery: string | null | undefined,
  fromBody: string | null | undefined,
): Promise<void> {
  if (fromQuery != null && fromBody != null && fromQuery !== fromBody) {
    throw badRequest(`chunk_id ${fromQuery} in the query and chunk_id ${fromBody} in the body differ; give one chunk`);
  }
  const chunkId = fromQuery ?? fromBody;
  if (chunkId == null) throw badRequest('give the chunk to remove as chunk_id, in the query or in the body');
  const group = await findGroup(db, datasetId, { id: groupId });
  const chunk = await db('chunks').where({ id: chunkId, dataset_id: datasetId }).first('id');
  if (!chunk) throw notFound(`chunk ${chunkId} not found in this dataset`);
  await db('chunk_group_bookmarks').where({ group_id: group.id, chunk_id: chunkId }).del();
}

// ---------------------------------------------------------------------------------------------
// Reading

/** The chunks of a group joined to their rows, in the order they were added. */
function chunksOfGroup(db: Knex, datasetId: string, groupId: string) {
  return db('chunk_group_bookmarks as b').join('chunks as c', 'c.id', 'b.chunk_id').where({ 'b.group_id': groupId, 'c.dataset_id': datasetId });
}

async function countChunksOfGroup(db: Knex, datasetId: string, groupId: string): Promise<number> {
  const [row] = await chunksOfGroup(db, datasetId, groupId).count<{ n: string }[]>('* as n');
  return Number(row.n);
}

/** One page (from 1) of the group's chunks, in the record shape of `version`. */
export async function chunksInGroup(db: Knex, datasetId: string, ref: GroupRef, page: number, version: ApiVersion): Promise<T.GetChunksInGroupResponse> {
  if (!Number.isInteger(page) || page < 1) throw badRequest(`page ${page} is not a page: pages count from 1`);
  const group = await findGroup(db, datasetId, ref);
  const total = await countChunksOfGroup(db, datasetId, group.id);
  const offset = (page - 1) * GROUP_PAGE_SIZE;
  const rows: ChunkRow[] =
    offset < total
      ? await chunksOfGroup(db, datasetId, group.id)
          .orderBy([{ column: 'b.created_at' }, { column: 'c.created_at' }, { column: 'c.id' }])
          .limit(GROUP_PAGE_SIZE)
          .offset(offset)
          .select(chunkColumnsOf('c'))
      : [];
  const groupAndFile = groupAndFileRecord(group);
  const total_pages = Math.ceil(total / GROUP_PAGE_SIZE);
  if (version === 'V2') return { chunks: rows.map((row) => versionedChunkRecord(row, 'V2') as T.ChunkMetadata), group: groupAndFile, total_pages };
  return { chunks: rows.map((row) => versionedChunkRecord(row, 'V1') as T.ChunkMetadataStringTagSet), group: groupAndFile, total_pages };
}

export async function countGroupChunks(db: Knex, datasetId: string, request: T.GetChunkGroupCountRequest): Promise<T.GetChunkGroupCountResponse> {
  const byId = request.group_id != null;
  if (byId === (request.group_tracking_id != null)) throw badRequest('give exactly one of group_id and group_tracking_id');
  const group = await findGroup(db, datasetId, byId ? { id: request.group_id! } : { trackingId: request.group_tracking_id! });
  return { group_id: group.id, count: await countChunksOfGroup(db, datasetId, group.id) };
}

/**
 * The groups of each chunk named by id or tracking id, chunks in the order asked (ids first), each
 * once. Every named chunk must be in the dataset.
 */
export async function groupsForChunks(db: Knex, datasetId: string, request: T.GetGroupsForChunksReqPayload): Promise<T.GroupsForChunk[]> {
  const ids = request.chunk_ids ?? [];
  const trackingIds = request.chunk_tracking_ids ?? [];
  if (ids.length === 0 && trackingIds.length === 0) throw badRequest('give at least one chunk in chunk_ids or chunk_tracking_ids');

  const foundIds = new Set<string>();
  for (const part of batches([...new Set(ids)])) {
    for (const id of await db('chunks').where({ dataset_id: datasetId }).whereIn('id', part).pluck('id')) foundIds.add(id);
  }
  const missingIds = ids.filter((id) => !foundIds.has(id));
  if (missingIds.length) throw notFound(`${missingIds.length === 1 ? 'chunk' : 'chunks'} ${listed(missingIds)} not found in this dataset`);

  const idOfTrackingId = new Map<string, string>();
  for (const part of batches([...new Set(trackingIds)])) {
    const rows = await db('chunks').where({ dataset_id: datasetId }).whereIn('tracking_id', part).select('id', 'tracking_id');
    for (const row of rows) idOfTrackingId.set(row.tracking_id, row.id);
  }
  const missingTracking = trackingIds.filter((t) => !idOfTrackingId.has(t));
  if (missingTracking.length) throw notFound(`no chunk with tracking_id ${listed(missingTracking)} in this dataset`);

  const ordered = [...new Set([...ids, ...trackingIds.map((t) => idOfTrackingId.get(t)!)])];
  const groupsOf = new Map<string, T.ChunkGroupAndFileId[]>(ordered.map((id) => [id, []]));
  for (const part of batches(ordered)) {
    const rows: (GroupRow & { bookmarked_chunk_id: string })[] = await db('chunk_group_bookmarks as b')
      .join('chunk_groups as g', 'g.id', 'b.group_id')
      .where('g.dataset_id', datasetId)
      .whereIn('b.chunk_id', part)
      .orderBy([{ column: 'b.created_at' }, { column: 'g.id' }])
      .select('g.*', 'b.chunk_id as bookmarked_chunk_id');
    for (const row of rows) groupsOf.get(row.bookmarked_chunk_id)!.push(groupAndFileRecord(row));
  }
  return ordered.map((id) => ({ chunk_uuid: id, slim_groups: groupsOf.get(id)! }));
}

/**
 * A page of the dataset's groups: by page number (from 1) newest first, or with `useCursor` in id
 * order from `cursor` on, with the cursor of the next page.
 */
export async function listDatasetGroups(
  db: Knex,
  datasetId: string,
  options: { page: number; useCursor: boolean; cursor: string | null },
): Promise<T.GroupData> {
  if (!Number.isInteger(options.page) || options.page < 1) throw badRequest(`page ${options.page} is not a page: pages count from 1`);
  const [{ n }] = await db('chunk_groups').where({ dataset_id: datasetId }).count<{ n: string }[]>('* as n');
  const total = Number(n);
  const total_pages = Math.ceil(total / GROUP_PAGE_SIZE);

  if (options.useCursor) {
    const query = db<GroupRow>('chunk_groups').where({ dataset_id: datasetId });
    if (options.cursor != null) query.where('id', '>=', options.cursor);
    const rows = await query.orderBy('id').limit(GROUP_PAGE_SIZE + 1);
    const next = rows.length > GROUP_PAGE_SIZE ? rows[GROUP_PAGE_SIZE].id : null;
    return { groups: rows.slice(0, GROUP_PAGE_SIZE).map(groupAndFileRecord), total_pages, next_cursor: next };
  }

  const offset = (options.page - 1) * GROUP_PAGE_SIZE;
  const rows =
    offset < total
      ? await db<GroupRow>('chunk_groups')
          .where({ dataset_id: datasetId })
          .orderBy([
            { column: 'created_at', order: 'desc' },
            { column: 'id', order: 'desc' },
          ])
          .limit(GROUP_PAGE_SIZE)
          .offset(offset)
      : [];
  return { groups: rows.map(groupAndFileRecord), total_pages, next_cursor: null };
}

// ---------------------------------------------------------------------------------------------
// Records

export function groupRecord(row: GroupRow): T.ChunkGroup {
  return {
    id: row.id,
    dataset_id: row.dataset_id,
    name: row.name,
    description: row.description,
    metadata: row.metadata ?? null,
    tag_set: row.tag_set ?? [],
    tracking_id: row.tracking_id,
    created_at: timestamp(row.created_at),
    updated_at: timestamp(row.updated_at),
  };
}

export function groupAndFileRecord(row: GroupRow): T.ChunkGroupAndFileId {
  return { ...groupRecord(row), file_id: row.file_id };
}

/** A JSON value for a jsonb column: the driver would write a JS array as a Postgres array. */
function jsonb(value: unknown): string | null {
  return value === undefined || value === null ? null : JSON.stringify(value);
}

function* batches<V>(values: V[]): Generator<V[]> {
  for (let start = 0; start < values.length; start += ID_BATCH) yield values.slice(start, start + ID_BATCH);
}

function listed(values: string[]): string {
  const shown = values.slice(0, 5).join(', ');
  return values.length > 5 ? `${shown} and ${values.length - 5} more` : shown;
}
