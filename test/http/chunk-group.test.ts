// The Chunk Group operations over HTTP (all but the search-shaped ones): creating and upserting,
// changing, reading, paging, bookmarking, counting and deleting groups, with their bad input and roles.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  addChunkToGroup,
  addChunkToGroupByTrackingId,
  countGroupChunks,
  createChunk,
  createChunkGroup,
  createDataset,
  createOrganization,
  createOrganizationApiKey,
  deleteChunkGroup,
  deleteGroupByTrackingId,
  getChunkGroup,
  getEvents,
  getChunksInGroup,
  getChunksInGroupByTrackingId,
  getGroupsForChunks,
  getGroupsForDataset,
  removeChunkFromGroup,
  updateChunkGroup,
} from '../../sdk/src/generated/sdk.gen.js';
import type { ChunkGroup, ChunkGroupAndFileId, GetChunksInGroupsResponseBody, GroupsBookmarkQueryResult } from '../../sdk/src/generated/types.gen.js';
import { seedChunk, seedFile } from '../support/seed.js';
import { ADMIN_KEY, startTestService, type TestService } from '../support/service.js';
import { termColumns } from '../../server/domain/chunks/write.js';
import { lexicalIds } from '../support/lexical.js';

let service: TestService;
let orgId: string;
const keys: Record<'read' | 'admin', string> = { read: '', admin: '' };
const db = () => service.services.store.db;
const client = (key = ADMIN_KEY) => service.client(key);
const ds = (id: string) => ({ 'SVC-Dataset': id });
const UNKNOWN = '00000000-0000-4000-8000-00000000abcd';
const TIMESTAMP = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}$/;

async function newKey(organizationId: string, role: 0 | 1 | 2): Promise<string> {
  const { data, response } = await createOrganizationApiKey({
    client: client(),
    headers: { 'SVC-Organization': organizationId },
    body: { name: `role ${role}`, role },
  });
  expect(response.status).toBe(200);
  return data!.api_key;
}

async function newDataset(name = 'docs'): Promise<string> {
  const { data, response, error } = await createDataset({ client: client(), headers: { 'SVC-Organization': orgId }, body: { dataset_name: name } });
  expect(response.status, JSON.stringify(error)).toBe(200);
  return data!.id;
}

async function newGroup(datasetId: string, body: Record<string, unknown> = {}): Promise<ChunkGroup> {
  const { data, response, error } = await createChunkGroup({ client: client(), headers: ds(datasetId), body: { name: 'group', ...body } });
  expect(response.status, JSON.stringify(error)).toBe(200);
  return data as ChunkGroup;
}

async function bookmark(datasetId: string, groupId: string, chunkId: string): Promise<void> {
  const { response } = await addChunkToGroup({ client: client(), headers: ds(datasetId), path: { group_id: groupId }, body: { chunk_id: chunkId } });
  expect(response.status).toBe(204);
}

async function count(table: string, where: Record<string, unknown>): Promise<number> {
  const [row] = await db()(table).where(where).count<{ n: string }[]>('* as n');
  return Number(row.n);
}

async function bookmarkCount(groupId: string): Promise<number> {
  return count('chunk_group_bookmarks', { group_id: groupId });
}

/** A raw request with the administrator key and the dataset header, for bodies the SDK's types would not allow. */
function raw(method: string, path: string, datasetId: string, body?: unknown, key = ADMIN_KEY) {
  return service.request(method, path, { headers: { authorization: key, 'SVC-Dataset': datasetId }, body });
}

beforeAll(async () => {
  service = await startTestService();
  const { data } = await createOrganization({ client: client(), body: { name: 'Acme' } });
  orgId = data!.id;
  keys.read = await newKey(orgId, 0);
  keys.admin = await newKey(orgId, 1);
});
afterAll(async () => {
  await service?.stop();
});

describe('POST /api/chunk_group (create_chunk_group)', () => {
  it('creates one group and answers its record; name, description and tags default to empty', async () => {
    const datasetId = await newDataset();
    const { data, response } = await createChunkGroup({
      client: client(keys.admin),
      headers: ds(datasetId),
      body: { name: 'Shirts', description: 'All shirts', tracking_id: 'shirts', tag_set: ['clothing', 'tops'], metadata: { season: 'summer' } },
    });
    expect(response.status).toBe(200);
    const group = data as ChunkGroup;
    expect(group).toMatchObject({
      dataset_id: datasetId,
      name: 'Shirts',
      description: 'All shirts',
      tracking_id: 'shirts',
      tag_set: ['clothing', 'tops'],
      metadata: { season: 'summer' },
    });
    expect(group.created_at).toMatch(TIMESTAMP);
    expect(group.updated_at).toMatch(TIMESTAMP);
    const stored = await db()('chunk_groups').where({ id: group.id }).first();
    expect(stored).toMatchObject({ dataset_id: datasetId, name: 'Shirts', tracking_id: 'shirts', metadata: { season: 'summer' } });

    const bare = await createChunkGroup({ client: client(), headers: ds(datasetId), body: { tracking_id: '' } });
    expect(bare.data).toMatchObject({ name: '', description: '', tag_set: [], metadata: null, tracking_id: null });
  });

  it('keeps a JSON array in metadata as JSON', async () => {
    const datasetId = await newDataset();
    const group = await newGroup(datasetId, { metadata: [1, 'two', { three: 3 }] });
    expect(group.metadata).toEqual([1, 'two', { three: 3 }]);
    const fetched = await getChunkGroup({ client: client(), headers: ds(datasetId), path: { group_id: group.id } });
    expect(fetched.data!.metadata).toEqual([1, 'two', { three: 3 }]);
  });

  it('creates a batch and answers the list in the order sent, also for a batch of one', async () => {
    const datasetId = await newDataset();
    const { data, response } = await createChunkGroup({
      client: client(),
      headers: ds(datasetId),
      body: [{ name: 'a', tracking_id: 'a' }, { name: 'b' }, { name: 'c', tracking_id: 'c' }],
    });
    expect(response.status).toBe(200);
    const groups = data as ChunkGroup[];
    expect(groups.map((g) => [g.name, g.tracking_id])).toEqual([
      ['a', 'a'],
      ['b', null],
      ['c', 'c'],
    ]);
    expect(new Set(groups.map((g) => g.id)).size).toBe(3);
    expect(await count('chunk_groups', { dataset_id: datasetId })).toBe(3);

    const one = await createChunkGroup({ client: client(), headers: ds(datasetId), body: [{ name: 'solo' }] });
    expect(Array.isArray(one.data)).toBe(true);
    expect((one.data as ChunkGroup[])[0].name).toBe('solo');
    const none = await createChunkGroup({ client: client(), headers: ds(datasetId), body: [] });
    expect(none.data).toEqual([]);
  });

  it('refuses a tracking id already used in the dataset, naming it, and allows it in another dataset', async () => {
    const datasetId = await newDataset();
    const first = await newGroup(datasetId, { tracking_id: 'faq' });
    const again = await raw('POST', '/api/chunk_group', datasetId, { name: 'again', tracking_id: 'faq' });
    expect(again.status).toBe(400);
    expect(again.body.message).toMatch(/tracking_id faq/);
    expect(again.body.message).toContain(first.id);
    expect(await count('chunk_groups', { dataset_id: datasetId })).toBe(1);

    const elsewhere = await newDataset('other');
    expect((await newGroup(elsewhere, { tracking_id: 'faq' })).tracking_id).toBe('faq');
  });

  it('a batch is all or nothing: a taken or repeated tracking id anywhere refuses every group', async () => {
    const datasetId = await newDataset();
    await newGroup(datasetId, { tracking_id: 'taken' });
    const taken = await raw('POST', '/api/chunk_group', datasetId, [{ tracking_id: 'new-1' }, { tracking_id: 'new-2' }, { tracking_id: 'taken' }]);
    expect(taken.status).toBe(400);
    expect(taken.body.message).toMatch(/\[2\]\.tracking_id taken/);
    const repeated = await raw('POST', '/api/chunk_group', datasetId, [
      { tracking_id: 'twice' },
      { tracking_id: 'x' },
      { tracking_id: 'twice', upsert_by_tracking_id: true },
    ]);
    expect(repeated.status).toBe(400);
    expect(repeated.body.message).toMatch(/twice/);
    expect(await count('chunk_groups', { dataset_id: datasetId })).toBe(1);
  });

  it('upsert_by_tracking_id replaces the existing group in place, also inside a batch with new groups', async () => {
    const datasetId = await newDataset();
    const original = await newGroup(datasetId, { name: 'old', description: 'old text', tracking_id: 'up', tag_set: ['a'], metadata: { v: 1 } });
    const chunkId = await seedChunk(db(), datasetId);
    await bookmark(datasetId, original.id, chunkId);

    const { data } = await createChunkGroup({
      client: client(),
      headers: ds(datasetId),
      body: { name: 'new', tracking_id: 'up', tag_set: ['b'], upsert_by_tracking_id: true },
    });
    const upserted = data as ChunkGroup;
    expect(upserted).toMatchObject({ id: original.id, name: 'new', description: '', tag_set: ['b'], metadata: null, tracking_id: 'up' });
    expect(upserted.created_at).toBe(original.created_at);
    expect(await bookmarkCount(original.id)).toBe(1);

    const batch = await createChunkGroup({
      client: client(),
      headers: ds(datasetId),
      body: [
        { name: 'fresh', tracking_id: 'fresh' },
        { name: 'newer', tracking_id: 'up', upsert_by_tracking_id: true },
      ],
    });
    const groups = batch.data as ChunkGroup[];
    expect(groups[1]).toMatchObject({ id: original.id, name: 'newer' });
    expect(groups[0].id).not.toBe(original.id);
    expect(await count('chunk_groups', { dataset_id: datasetId })).toBe(2);
  });

  it('refuses more than 1000 groups with 413, writing nothing', async () => {
    const datasetId = await newDataset();
    const reply = await raw(
      'POST',
      '/api/chunk_group',
      datasetId,
      Array.from({ length: 1001 }, (_, i) => ({ name: `g${i}` })),
    );
    expect(reply.status).toBe(413);
    expect(reply.body.message).toMatch(/1000/);
    expect(await count('chunk_groups', { dataset_id: datasetId })).toBe(0);
  });

  it('refuses mistyped fields, naming them, and the read role', async () => {
    const datasetId = await newDataset();
    const cases: [unknown, RegExp][] = [
      [{ name: 5 }, /name/],
      [{ tag_set: 'a,b' }, /tag_set/],
      [{ tracking_id: ['x'] }, /tracking_id/],
      [{ upsert_by_tracking_id: 'yes' }, /upsert_by_tracking_id/],
      ['a group', /body/],
      [[{ name: 'ok' }, { description: 7 }], /description/],
    ];
    for (const [body, message] of cases) {
      const reply = await raw('POST', '/api/chunk_group', datasetId, body);
      expect(reply.status, JSON.stringify(body)).toBe(400);
      expect(reply.body.message, JSON.stringify(body)).toMatch(message);
    }
    const reader = await raw('POST', '/api/chunk_group', datasetId, { name: 'x' }, keys.read);
    expect(reader.status).toBe(403);
    expect(await count('chunk_groups', { dataset_id: datasetId })).toBe(0);
  });
});

describe('GET /api/chunk_group/{group_id} (get_chunk_group)', () => {
  it('answers the group with its file id, to a read key too', async () => {
    const datasetId = await newDataset();
    const group = await newGroup(datasetId, { tracking_id: 'g' });
    const { data, response } = await getChunkGroup({ client: client(keys.read), headers: ds(datasetId), path: { group_id: group.id } });
    expect(response.status).toBe(200);
    expect(data).toEqual({ ...group, file_id: null });

    const fileId = await seedFile(db(), datasetId);
    await db()('chunk_groups').where({ id: group.id }).update({ file_id: fileId });
    expect((await getChunkGroup({ client: client(), headers: ds(datasetId), path: { group_id: group.id } })).data!.file_id).toBe(fileId);
  });

  it('404 for an unknown group and for a group of another dataset; 400 for a malformed id', async () => {
    const datasetId = await newDataset();
    const other = await newDataset('other');
    const foreign = await newGroup(other);
    const unknown = await getChunkGroup({ client: client(), headers: ds(datasetId), path: { group_id: UNKNOWN } });
    expect(unknown.response.status).toBe(404);
    expect(unknown.error!.message).toContain(UNKNOWN);
    expect((await getChunkGroup({ client: client(), headers: ds(datasetId), path: { group_id: foreign.id } })).response.status).toBe(404);
    expect((await raw('GET', '/api/chunk_group/not-a-uuid', datasetId)).status).toBe(400);
  });
});

describe('PUT /api/chunk_group (update_chunk_group)', () => {
  it('changes the given fields by group id and keeps the others', async () => {
    const datasetId = await newDataset();
    const group = await newGroup(datasetId, { name: 'before', description: 'd', tracking_id: 't', tag_set: ['x'], metadata: { k: 1 } });
    const { response } = await updateChunkGroup({ client: client(keys.admin), headers: ds(datasetId), body: { group_id: group.id, name: 'after' } });
    expect(response.status).toBe(204);
    const after = (await getChunkGroup({ client: client(), headers: ds(datasetId), path: { group_id: group.id } })).data!;
    expect(after).toMatchObject({ name: 'after', description: 'd', tracking_id: 't', tag_set: ['x'], metadata: { k: 1 } });
    expect(after.updated_at >= group.updated_at).toBe(true);
  });

  it('finds the group by tracking id without a group id', async () => {
    const datasetId = await newDataset();
    const group = await newGroup(datasetId, { tracking_id: 'by-tracking' });
    await updateChunkGroup({
      client: client(),
      headers: ds(datasetId),
      body: { tracking_id: 'by-tracking', description: 'new text', tag_set: ['n'], metadata: [1] },
    });
    expect((await getChunkGroup({ client: client(), headers: ds(datasetId), path: { group_id: group.id } })).data).toMatchObject({
      description: 'new text',
      tag_set: ['n'],
      metadata: [1],
      tracking_id: 'by-tracking',
    });
  });

  it('with a group id, gives the group a new tracking id, or removes it with an empty one', async () => {
    const datasetId = await newDataset();
    const group = await newGroup(datasetId, { tracking_id: 'old-id' });
    await updateChunkGroup({ client: client(), headers: ds(datasetId), body: { group_id: group.id, tracking_id: 'new-id' } });
    expect((await getChunkGroup({ client: client(), headers: ds(datasetId), path: { group_id: group.id } })).data!.tracking_id).toBe('new-id');
    await updateChunkGroup({ client: client(), headers: ds(datasetId), body: { group_id: group.id, tracking_id: '' } });
    expect((await getChunkGroup({ client: client(), headers: ds(datasetId), path: { group_id: group.id } })).data!.tracking_id).toBeNull();
  });

  it('with update_chunks, adds the group tags the chunks of the group do not have yet', async () => {
    const datasetId = await newDataset();
    const group = await newGroup(datasetId, { tag_set: ['red'] });
    const tagged = await seedChunk(db(), datasetId);
    await db()('chunks')
      .where({ id: tagged })
      .update({ tag_set: ['blue', 'red'] });
    const untagged = await seedChunk(db(), datasetId);
    const outside = await seedChunk(db(), datasetId);
    await bookmark(datasetId, group.id, tagged);
    await bookmark(datasetId, group.id, untagged);

    await updateChunkGroup({ client: client(), headers: ds(datasetId), body: { group_id: group.id, tag_set: ['red', 'green'], update_chunks: true } });
    const tags = async (id: string) => (await db()('chunks').where({ id }).first('tag_set')).tag_set;
    expect(await tags(tagged)).toEqual(['blue', 'red', 'green']);
    expect(await tags(untagged)).toEqual(['red', 'green']);
    expect(await tags(outside)).toBeNull();
    const events = await getEvents({ client: client(), headers: ds(datasetId), body: { event_types: ['group_chunks_updated'] } });
    expect(events.data!.events.map((e) => JSON.parse(e.event_data))).toEqual([{ group_id: group.id, chunks_updated: 2 }]);

    await updateChunkGroup({ client: client(), headers: ds(datasetId), body: { group_id: group.id, tag_set: ['yellow'] } });
    expect(await tags(untagged)).toEqual(['red', 'green']);
  });

  it('refuses a taken tracking id, a missing group, unknown and foreign groups, and the read role, changing nothing', async () => {
    const datasetId = await newDataset();
    const group = await newGroup(datasetId, { name: 'same', tracking_id: 'mine' });
    const otherGroup = await newGroup(datasetId, { tracking_id: 'theirs' });
    const foreign = await newGroup(await newDataset('other'), { name: 'foreign' });

    const taken = await raw('PUT', '/api/chunk_group', datasetId, { group_id: group.id, tracking_id: 'theirs', name: 'changed' });
    expect(taken.status).toBe(400);
    expect(taken.body.message).toMatch(/tracking_id theirs/);
    expect(taken.body.message).toContain(otherGroup.id);
    const neither = await raw('PUT', '/api/chunk_group', datasetId, { name: 'changed' });
    expect(neither.status).toBe(400);
    expect(neither.body.message).toMatch(/group_id or tracking_id/);
    expect((await raw('PUT', '/api/chunk_group', datasetId, { group_id: UNKNOWN, name: 'changed' })).status).toBe(404);
    expect((await raw('PUT', '/api/chunk_group', datasetId, { tracking_id: 'nope', name: 'changed' })).status).toBe(404);
    expect((await raw('PUT', '/api/chunk_group', datasetId, { group_id: foreign.id, name: 'changed' })).status).toBe(404);
    expect((await raw('PUT', '/api/chunk_group', datasetId, { group_id: group.id, name: 12 })).status).toBe(400);
    expect((await raw('PUT', '/api/chunk_group', datasetId, { group_id: group.id, name: 'changed' }, keys.read)).status).toBe(403);

    expect(await db()('chunk_groups').where({ id: group.id }).first()).toMatchObject({ name: 'same', tracking_id: 'mine' });
    expect(await db()('chunk_groups').where({ id: foreign.id }).first()).toMatchObject({ name: 'foreign' });
  });
});

describe('bookmarks: add by group tracking id, remove', () => {
  it('POST /api/chunk_group/tracking_id/{tracking_id} bookmarks a chunk by id or tracking id, once', async () => {
    const datasetId = await newDataset();
    const group = await newGroup(datasetId, { tracking_id: 'box' });
    const a = await seedChunk(db(), datasetId);
    await seedChunk(db(), datasetId, { tracking_id: 'chunk-b' });
    const add = (body: { chunk_id?: string; chunk_tracking_id?: string }) =>
      addChunkToGroupByTrackingId({ client: client(keys.admin), headers: ds(datasetId), path: { tracking_id: 'box' }, body });
    expect((await add({ chunk_id: a })).response.status).toBe(204);
    expect((await add({ chunk_tracking_id: 'chunk-b' })).response.status).toBe(204);
    expect((await add({ chunk_id: a })).response.status).toBe(204);
    expect(await bookmarkCount(group.id)).toBe(2);
  });

  it('adding by group tracking id refuses both or neither chunk field, unknown groups and chunks, foreign chunks, the read role', async () => {
    const datasetId = await newDataset();
    const group = await newGroup(datasetId, { tracking_id: 'box' });
    const chunkId = await seedChunk(db(), datasetId, { tracking_id: 'c' });
    const foreignChunk = await seedChunk(db(), await newDataset('other'));
    const call = (body: unknown, trackingId = 'box', key = ADMIN_KEY) => raw('POST', `/api/chunk_group/tracking_id/${trackingId}`, datasetId, body, key);
    const both = await call({ chunk_id: chunkId, chunk_tracking_id: 'c' });
    expect(both.status).toBe(400);
    expect(both.body.message).toMatch(/exactly one/);
    expect((await call({})).status).toBe(400);
    const noGroup = await call({ chunk_id: chunkId }, 'no-such-group');
    expect(noGroup.status).toBe(404);
    expect(noGroup.body.message).toMatch(/no-such-group/);
    expect((await call({ chunk_tracking_id: 'missing' })).status).toBe(404);
    expect((await call({ chunk_id: foreignChunk })).status).toBe(404);
    expect((await call({ chunk_id: chunkId }, 'box', keys.read)).status).toBe(403);
    expect(await bookmarkCount(group.id)).toBe(0);
  });

  it('DELETE /api/chunk_group/chunk/{group_id} takes a chunk out, named in the body or the query; the chunk stays', async () => {
    const datasetId = await newDataset();
    const group = await newGroup(datasetId);
    const a = await seedChunk(db(), datasetId);
    const b = await seedChunk(db(), datasetId);
    await bookmark(datasetId, group.id, a);
    await bookmark(datasetId, group.id, b);

    const byBody = await removeChunkFromGroup({ client: client(keys.admin), headers: ds(datasetId), path: { group_id: group.id }, body: { chunk_id: a } });
    expect(byBody.response.status).toBe(204);
    expect(await bookmarkCount(group.id)).toBe(1);
    const byQuery = await removeChunkFromGroup({ client: client(), headers: ds(datasetId), path: { group_id: group.id }, query: { chunk_id: b } });
    expect(byQuery.response.status).toBe(204);
    expect(await bookmarkCount(group.id)).toBe(0);
    const notIn = await removeChunkFromGroup({ client: client(), headers: ds(datasetId), path: { group_id: group.id }, body: { chunk_id: a } });
    expect(notIn.response.status).toBe(204);
    expect(await count('chunks', { dataset_id: datasetId })).toBe(2);
  });

  it('removing refuses differing or missing chunk ids, unknown and foreign groups and chunks, the read role', async () => {
    const datasetId = await newDataset();
    const group = await newGroup(datasetId);
    const a = await seedChunk(db(), datasetId);
    const b = await seedChunk(db(), datasetId);
    await bookmark(datasetId, group.id, a);
    const otherDataset = await newDataset('other');
    const foreignGroup = await newGroup(otherDataset);
    const foreignChunk = await seedChunk(db(), otherDataset);
    await bookmark(otherDataset, foreignGroup.id, foreignChunk);

    const differ = await raw('DELETE', `/api/chunk_group/chunk/${group.id}?chunk_id=${b}`, datasetId, { chunk_id: a });
    expect(differ.status).toBe(400);
    expect(differ.body.message).toMatch(/differ/);
    const missing = await raw('DELETE', `/api/chunk_group/chunk/${group.id}`, datasetId);
    expect(missing.status).toBe(400);
    expect(missing.body.message).toMatch(/chunk_id/);
    expect((await raw('DELETE', `/api/chunk_group/chunk/${group.id}`, datasetId, { chunk_id: 'nope' })).status).toBe(400);
    expect((await raw('DELETE', `/api/chunk_group/chunk/${UNKNOWN}`, datasetId, { chunk_id: a })).status).toBe(404);
    expect((await raw('DELETE', `/api/chunk_group/chunk/${group.id}`, datasetId, { chunk_id: UNKNOWN })).status).toBe(404);
    expect((await raw('DELETE', `/api/chunk_group/chunk/${foreignGroup.id}`, datasetId, { chunk_id: foreignChunk })).status).toBe(404);
    expect((await raw('DELETE', `/api/chunk_group/chunk/${group.id}`, datasetId, { chunk_id: a }, keys.read)).status).toBe(403);
    expect(await bookmarkCount(group.id)).toBe(1);
    expect(await bookmarkCount(foreignGroup.id)).toBe(1);
  });
});

describe('chunks in a group: get_chunks_in_group and get_chunks_in_group_by_tracking_id', () => {
  let datasetId: string;
  let group: ChunkGroup;
  const chunkIds: string[] = [];

  beforeAll(async () => {
    datasetId = await newDataset();
    group = await newGroup(datasetId, { tracking_id: 'paged', name: 'Paged' });
    for (let i = 0; i < 23; i++) {
      const id = await seedChunk(db(), datasetId, { tracking_id: `c${i}`, chunk_html: `<p>chunk ${i}</p>` });
      await db()('chunks')
        .where({ id })
        .update({ tag_set: ['t1', `n${i}`] });
      await bookmark(datasetId, group.id, id);
      chunkIds.push(id);
    }
    // A chunk of the dataset outside the group.
    await seedChunk(db(), datasetId);
  });

  it('pages ten chunks at a time from page 1, in the order they were added, with the group and the page count', async () => {
    const pages = [];
    for (const page of [1, 2, 3, 4]) {
      const { data, response } = await getChunksInGroup({ client: client(keys.read), headers: ds(datasetId), path: { group_id: group.id, page } });
      expect(response.status).toBe(200);
      pages.push(data!);
    }
    expect(pages.map((p) => p.chunks.length)).toEqual([10, 10, 3, 0]);
    expect(pages.every((p) => p.total_pages === 3)).toBe(true);
    expect(pages.flatMap((p) => p.chunks.map((c) => c.id))).toEqual(chunkIds);
    expect(pages[0].group).toMatchObject({ id: group.id, name: 'Paged', tracking_id: 'paged', file_id: null });
  });

  it('gives V1 records (tags as text) by default and V2 records (tags as a list) when asked', async () => {
    const v1 = (await getChunksInGroup({ client: client(), headers: ds(datasetId), path: { group_id: group.id, page: 1 } })).data as GroupsBookmarkQueryResult;
    expect(v1.chunks[0]).toMatchObject({ id: chunkIds[0], tracking_id: 'c0', chunk_html: '<p>chunk 0</p>', tag_set: 't1,n0', dataset_id: datasetId });
    expect(v1.chunks[0].created_at).toMatch(TIMESTAMP);
    const explicitV1 = (
      await getChunksInGroup({ client: client(), headers: { ...ds(datasetId), 'X-API-Version': 'V1' }, path: { group_id: group.id, page: 1 } })
    ).data as GroupsBookmarkQueryResult;
    expect(explicitV1.chunks[0].tag_set).toBe('t1,n0');
    const v2 = (await getChunksInGroup({ client: client(), headers: { ...ds(datasetId), 'X-API-Version': 'V2' }, path: { group_id: group.id, page: 1 } }))
      .data as GetChunksInGroupsResponseBody;
    expect(v2.chunks[0]).toMatchObject({ id: chunkIds[0], tag_set: ['t1', 'n0'] });
  });

  it('the same by the group tracking id', async () => {
    const { data, response } = await getChunksInGroupByTrackingId({
      client: client(keys.read),
      headers: { ...ds(datasetId), 'X-API-Version': 'V2' },
      path: { group_tracking_id: 'paged', page: 3 },
    });
    expect(response.status).toBe(200);
    const body = data as GetChunksInGroupsResponseBody;
    expect(body.chunks.map((c) => c.id)).toEqual(chunkIds.slice(20));
    expect(body.chunks[0].tag_set).toEqual(['t1', 'n20']);
    expect(body).toMatchObject({ total_pages: 3, group: { id: group.id } });
  });

  it('an empty group has no pages', async () => {
    const empty = await newGroup(datasetId, { tracking_id: 'empty' });
    const { data } = await getChunksInGroup({ client: client(), headers: ds(datasetId), path: { group_id: empty.id, page: 1 } });
    expect(data).toMatchObject({ chunks: [], total_pages: 0, group: { id: empty.id } });
  });

  it('refuses page 0, a page that is not a number, an unknown version; 404 for unknown and foreign groups', async () => {
    const zero = await raw('GET', `/api/chunk_group/${group.id}/0`, datasetId);
    expect(zero.status).toBe(400);
    expect(zero.body.message).toMatch(/page/);
    expect((await raw('GET', `/api/chunk_group/tracking_id/paged/0`, datasetId)).status).toBe(400);
    expect((await raw('GET', `/api/chunk_group/${group.id}/two`, datasetId)).status).toBe(400);
    const version = await service.request('GET', `/api/chunk_group/${group.id}/1`, {
      headers: { authorization: ADMIN_KEY, 'SVC-Dataset': datasetId, 'X-API-Version': 'V3' },
    });
    expect(version.status).toBe(400);
    expect(version.body.message).toMatch(/x-api-version/i);
    const unknown = await raw('GET', `/api/chunk_group/${UNKNOWN}/1`, datasetId);
    expect(unknown.status).toBe(404);
    expect(unknown.body.message).toContain(UNKNOWN);
    expect((await raw('GET', `/api/chunk_group/tracking_id/nope/1`, datasetId)).status).toBe(404);
    const other = await newDataset('other');
    expect((await raw('GET', `/api/chunk_group/${group.id}/1`, other)).status).toBe(404);
    expect((await raw('GET', `/api/chunk_group/tracking_id/paged/1`, other)).status).toBe(404);
  });
});

describe('POST /api/chunk_group/chunks (get_groups_for_chunks)', () => {
  it('answers each chunk asked, ids first then tracking ids, once each, with the groups holding it', async () => {
    const datasetId = await newDataset();
    const g1 = await newGroup(datasetId, { name: 'one' });
    const g2 = await newGroup(datasetId, { name: 'two' });
    const a = await seedChunk(db(), datasetId, { tracking_id: 'a' });
    const b = await seedChunk(db(), datasetId, { tracking_id: 'b' });
    const lonely = await seedChunk(db(), datasetId, { tracking_id: 'lonely' });
    await bookmark(datasetId, g1.id, a);
    await bookmark(datasetId, g2.id, a);
    await bookmark(datasetId, g2.id, b);

    const { data, response } = await getGroupsForChunks({
      client: client(keys.read),
      headers: ds(datasetId),
      body: { chunk_ids: [b], chunk_tracking_ids: ['lonely', 'a', 'b'] },
    });
    expect(response.status).toBe(200);
    expect(data!.map((entry) => entry.chunk_uuid)).toEqual([b, lonely, a]);
    expect(data![0].slim_groups.map((g) => g.id)).toEqual([g2.id]);
    expect(data![1].slim_groups).toEqual([]);
    expect(data![2].slim_groups.map((g) => g.id).sort()).toEqual([g1.id, g2.id].sort());
    expect(data![2].slim_groups[0]).toHaveProperty('file_id', null);
  });

  it('refuses no chunks (400) and unknown or foreign chunks (404, naming them)', async () => {
    const datasetId = await newDataset();
    const mine = await seedChunk(db(), datasetId);
    const foreign = await seedChunk(db(), await newDataset('other'), { tracking_id: 'foreign' });
    const call = (body: unknown) => raw('POST', '/api/chunk_group/chunks', datasetId, body);
    expect((await call({})).status).toBe(400);
    expect((await call({ chunk_ids: [], chunk_tracking_ids: null })).status).toBe(400);
    const unknown = await call({ chunk_ids: [mine, UNKNOWN] });
    expect(unknown.status).toBe(404);
    expect(unknown.body.message).toContain(UNKNOWN);
    expect((await call({ chunk_ids: [foreign] })).status).toBe(404);
    const tracking = await call({ chunk_tracking_ids: ['foreign'] });
    expect(tracking.status).toBe(404);
    expect(tracking.body.message).toMatch(/foreign/);
    expect((await call({ chunk_ids: ['not-a-uuid'] })).status).toBe(400);
  });
});

describe('POST /api/chunk_group/count (count_group_chunks)', () => {
  it('counts the chunks of a group named by id or by tracking id', async () => {
    const datasetId = await newDataset();
    const group = await newGroup(datasetId, { tracking_id: 'counted' });
    for (let i = 0; i < 3; i++) await bookmark(datasetId, group.id, await seedChunk(db(), datasetId));
    const byId = await countGroupChunks({ client: client(keys.read), headers: ds(datasetId), body: { group_id: group.id } });
    expect(byId.response.status).toBe(200);
    expect(byId.data).toEqual({ group_id: group.id, count: 3 });
    const byTracking = await countGroupChunks({ client: client(), headers: ds(datasetId), body: { group_tracking_id: 'counted' } });
    expect(byTracking.data).toEqual({ group_id: group.id, count: 3 });
    const empty = await newGroup(datasetId);
    expect((await countGroupChunks({ client: client(), headers: ds(datasetId), body: { group_id: empty.id } })).data!.count).toBe(0);
  });

  it('refuses both or neither group field (400) and unknown or foreign groups (404)', async () => {
    const datasetId = await newDataset();
    const group = await newGroup(datasetId, { tracking_id: 'x' });
    const foreign = await newGroup(await newDataset('other'), { tracking_id: 'y' });
    const call = (body: unknown) => raw('POST', '/api/chunk_group/count', datasetId, body);
    const both = await call({ group_id: group.id, group_tracking_id: 'x' });
    expect(both.status).toBe(400);
    expect(both.body.message).toMatch(/exactly one/);
    expect((await call({})).status).toBe(400);
    expect((await call({ group_id: UNKNOWN })).status).toBe(404);
    expect((await call({ group_id: foreign.id })).status).toBe(404);
    expect((await call({ group_tracking_id: 'y' })).status).toBe(404);
  });
});

describe('GET /api/dataset/groups/{dataset_id}/{page} (get_groups_for_dataset)', () => {
  let datasetId: string;
  let created: ChunkGroup[];

  beforeAll(async () => {
    datasetId = await newDataset();
    created = [];
    // Separate requests, so every group has its own creation time.
    for (let i = 0; i < 12; i++) created.push(await newGroup(datasetId, { name: `g${i}` }));
    const other = await newDataset('other');
    await newGroup(other, { name: 'not listed' });
  });

  it('pages ten groups at a time, newest first, with the page count', async () => {
    const page1 = await getGroupsForDataset({ client: client(keys.read), headers: ds(datasetId), path: { dataset_id: datasetId, page: 1 } });
    expect(page1.response.status).toBe(200);
    const page2 = await getGroupsForDataset({ client: client(), headers: ds(datasetId), path: { dataset_id: datasetId, page: 2 } });
    const page3 = await getGroupsForDataset({ client: client(), headers: ds(datasetId), path: { dataset_id: datasetId, page: 3 } });
    const newestFirst = [...created].reverse().map((g) => g.id);
    expect(page1.data!.groups.map((g) => g.id)).toEqual(newestFirst.slice(0, 10));
    expect(page2.data!.groups.map((g) => g.id)).toEqual(newestFirst.slice(10));
    expect(page3.data!.groups).toEqual([]);
    expect([page1, page2, page3].map((p) => p.data!.total_pages)).toEqual([2, 2, 2]);
    expect(page1.data!.next_cursor).toBeNull();
    expect(page1.data!.groups[0]).toMatchObject({ name: 'g11', file_id: null, dataset_id: datasetId });
  });

  it('with use_cursor, pages in id order from the cursor and gives the next cursor', async () => {
    const byId = created.map((g) => g.id).sort();
    const first = await getGroupsForDataset({
      client: client(),
      headers: ds(datasetId),
      path: { dataset_id: datasetId, page: 1 },
      query: { use_cursor: true },
    });
    expect(first.data!.groups.map((g) => g.id)).toEqual(byId.slice(0, 10));
    expect(first.data!.next_cursor).toBe(byId[10]);
    expect(first.data!.total_pages).toBe(2);
    const second = await getGroupsForDataset({
      client: client(),
      headers: ds(datasetId),
      path: { dataset_id: datasetId, page: 1 },
      query: { use_cursor: true, cursor: first.data!.next_cursor },
    });
    expect(second.data!.groups.map((g) => g.id)).toEqual(byId.slice(10));
    expect(second.data!.next_cursor).toBeNull();
  });

  it('a dataset without groups has no pages', async () => {
    const empty = await newDataset('empty');
    const { data } = await getGroupsForDataset({ client: client(), headers: ds(empty), path: { dataset_id: empty, page: 1 } });
    expect(data).toEqual({ groups: [], total_pages: 0, next_cursor: null });
  });

  it('refuses a dataset_id other than the SVC-Dataset one (naming both), page 0 and a malformed cursor', async () => {
    const other = await newDataset('other');
    const mismatch = await raw('GET', `/api/dataset/groups/${other}/1`, datasetId);
    expect(mismatch.status).toBe(400);
    expect(mismatch.body.message).toContain(other);
    expect(mismatch.body.message).toContain(datasetId);
    const zero = await raw('GET', `/api/dataset/groups/${datasetId}/0`, datasetId);
    expect(zero.status).toBe(400);
    expect(zero.body.message).toMatch(/page/);
    expect((await raw('GET', `/api/dataset/groups/${datasetId}/1?use_cursor=true&cursor=abc`, datasetId)).status).toBe(400);
    expect((await raw('GET', `/api/dataset/groups/${datasetId}/1?unknown=1`, datasetId)).status).toBe(400);
  });
});

describe('deleting groups: delete_chunk_group and delete_group_by_tracking_id', () => {
  /** A group holding two chunks, one of which a second group holds too; and a chunk outside both. */
  async function fixture() {
    const datasetId = await newDataset();
    const group = await newGroup(datasetId, { tracking_id: 'doomed' });
    const sibling = await newGroup(datasetId, { tracking_id: 'sibling' });
    const only = await seedChunk(db(), datasetId);
    const shared = await seedChunk(db(), datasetId);
    const outside = await seedChunk(db(), datasetId);
    await bookmark(datasetId, group.id, only);
    await bookmark(datasetId, group.id, shared);
    await bookmark(datasetId, sibling.id, shared);
    await bookmark(datasetId, sibling.id, outside);
    return { datasetId, group, sibling, only, shared, outside };
  }

  it('without delete_chunks, deletes the group and its bookmarks and keeps the chunks', async () => {
    const f = await fixture();
    const { response } = await deleteChunkGroup({ client: client(keys.admin), headers: ds(f.datasetId), path: { group_id: f.group.id } });
    expect(response.status).toBe(204);
    expect(await count('chunk_groups', { id: f.group.id })).toBe(0);
    expect(await bookmarkCount(f.group.id)).toBe(0);
    expect(await count('chunks', { dataset_id: f.datasetId })).toBe(3);
    expect(await bookmarkCount(f.sibling.id)).toBe(2);

    const again = await deleteChunkGroup({ client: client(), headers: ds(f.datasetId), path: { group_id: f.group.id } });
    expect(again.response.status).toBe(404);
  });

  it('delete_chunks=false is the same as leaving it out', async () => {
    const f = await fixture();
    const { response } = await deleteGroupByTrackingId({
      client: client(),
      headers: ds(f.datasetId),
      path: { tracking_id: 'doomed' },
      query: { delete_chunks: false },
    });
    expect(response.status).toBe(204);
    expect(await count('chunk_groups', { id: f.group.id })).toBe(0);
    expect(await count('chunks', { dataset_id: f.datasetId })).toBe(3);
  });

  it('with delete_chunks=true, deletes the chunks of the group too, also those another group holds', async () => {
    const f = await fixture();
    const { response } = await deleteChunkGroup({ client: client(), headers: ds(f.datasetId), path: { group_id: f.group.id }, query: { delete_chunks: true } });
    expect(response.status).toBe(204);
    expect(await count('chunk_groups', { id: f.group.id })).toBe(0);
    expect(await db()('chunks').where({ dataset_id: f.datasetId }).pluck('id')).toEqual([f.outside]);
    expect(await db()('chunk_group_bookmarks').where({ group_id: f.sibling.id }).pluck('chunk_id')).toEqual([f.outside]);
    expect(await count('chunk_groups', { id: f.sibling.id })).toBe(1);
  });

  it('by tracking id with delete_chunks=true', async () => {
    const f = await fixture();
    const { response } = await deleteGroupByTrackingId({
      client: client(),
      headers: ds(f.datasetId),
      path: { tracking_id: 'doomed' },
      query: { delete_chunks: true },
    });
    expect(response.status).toBe(204);
    expect(await db()('chunks').where({ dataset_id: f.datasetId }).pluck('id')).toEqual([f.outside]);
    const missing = await deleteGroupByTrackingId({ client: client(), headers: ds(f.datasetId), path: { tracking_id: 'doomed' } });
    expect(missing.response.status).toBe(404);
    expect(missing.error!.message).toMatch(/doomed/);
  });

  it('the lexical index entries of the deleted chunks go too; a group deleted without its chunks leaves them findable', async () => {
    const datasetId = await newDataset();
    const kept = await newGroup(datasetId);
    const purged = await newGroup(datasetId);
    const ids: Record<string, string> = {};
    for (const [name, text] of [
      ['keep', 'walrus habitat notes'],
      ['drop', 'walrus feeding notes'],
    ] as const) {
      const [row] = await db()('chunks')
        .insert({ dataset_id: datasetId, chunk_html: `<p>${text}</p>`, ...termColumns(db(), text) })
        .returning('id');
      ids[name] = row.id;
      await service.services.lexical.upsert([{ id: ids[name], datasetId, text }]);
    }
    await bookmark(datasetId, kept.id, ids.keep);
    await bookmark(datasetId, purged.id, ids.drop);
    const search = async () => (await lexicalIds(service.services.config.lexical, service.services.store.db, datasetId, 'walrus')).sort();
    expect(await search()).toEqual([ids.keep, ids.drop].sort());

    await deleteChunkGroup({ client: client(), headers: ds(datasetId), path: { group_id: kept.id } });
    await deleteChunkGroup({ client: client(), headers: ds(datasetId), path: { group_id: purged.id }, query: { delete_chunks: true } });
    expect(await search()).toEqual([ids.keep]);
  });

  it('chunks created through the API are gone from the lexical index once their group is deleted with them', async () => {
    const datasetId = await newDataset();
    const group = await newGroup(datasetId, { tracking_id: 'indexed' });
    const created = await createChunk({
      client: client(),
      headers: ds(datasetId),
      body: [
        { chunk_html: '<p>zebra crossing manual</p>', tracking_id: 'zebra', group_ids: [group.id] },
        { chunk_html: '<p>zebra stripes survey</p>', tracking_id: 'stripes' },
      ],
    });
    expect(created.response.status, JSON.stringify(created.error)).toBe(200);
    const search = async () => (await lexicalIds(service.services.config.lexical, service.services.store.db, datasetId, 'zebra')).sort();
    const ids = await db()('chunks').where({ dataset_id: datasetId }).orderBy('tracking_id').select('id', 'tracking_id');
    const [stripes, zebra] = ids.map((r: { id: string }) => r.id);
    expect(await search()).toEqual([stripes, zebra].sort());

    expect(
      (await deleteChunkGroup({ client: client(), headers: ds(datasetId), path: { group_id: group.id }, query: { delete_chunks: true } })).response.status,
    ).toBe(204);
    expect(await search()).toEqual([stripes]);
    expect(await db()('chunks').where({ dataset_id: datasetId }).pluck('id')).toEqual([stripes]);
  });

  it('refuses unknown and foreign groups (404), a mistyped delete_chunks and the read role, deleting nothing', async () => {
    const f = await fixture();
    const other = await newDataset('other');
    const call = (path: string, datasetId = f.datasetId, key = ADMIN_KEY) => raw('DELETE', path, datasetId, undefined, key);
    expect((await call(`/api/chunk_group/${UNKNOWN}?delete_chunks=true`)).status).toBe(404);
    expect((await call(`/api/chunk_group/${f.group.id}?delete_chunks=true`, other)).status).toBe(404);
    expect((await call(`/api/chunk_group/tracking_id/doomed?delete_chunks=true`, other)).status).toBe(404);
    const mistyped = await call(`/api/chunk_group/${f.group.id}?delete_chunks=maybe`);
    expect(mistyped.status).toBe(400);
    expect(mistyped.body.message).toMatch(/delete_chunks/);
    expect((await call(`/api/chunk_group/${f.group.id}?delete_chunks=true`, f.datasetId, keys.read)).status).toBe(403);
    expect((await call(`/api/chunk_group/tracking_id/doomed`, f.datasetId, keys.read)).status).toBe(403);
    expect(await count('chunk_groups', { dataset_id: f.datasetId })).toBe(2);
    expect(await count('chunks', { dataset_id: f.datasetId })).toBe(3);
    expect(await bookmarkCount(f.group.id)).toBe(2);
  });
});

describe('records', () => {
  it('every group record carries the file id field in group listings', async () => {
    const datasetId = await newDataset();
    const group = await newGroup(datasetId);
    const listed: ChunkGroupAndFileId[] = (await getGroupsForDataset({ client: client(), headers: ds(datasetId), path: { dataset_id: datasetId, page: 1 } }))
      .data!.groups;
    expect(listed).toEqual([{ ...group, file_id: null }]);
  });
});
