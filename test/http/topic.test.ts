// The Topic operations over HTTP: starting a topic (named, or named after its first message),
// renaming, copying with its messages, listing an owner's topics and deleting a topic with its
// messages; reading a topic's messages; topics and messages of another dataset out of reach; bad
// input and roles.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  cloneTopic,
  createDataset,
  createOrganization,
  createOrganizationApiKey,
  createTopic,
  deleteTopic,
  getAllTopicMessages,
  getAllTopicsForOwnerId,
  getMessageById,
  updateTopic,
} from '../../sdk/src/generated/sdk.gen.js';
import type { Topic } from '../../sdk/src/generated/types.gen.js';
import { nameFromMessage } from '../../server/domain/topics.js';
import { ADMIN_KEY, startTestService, type TestService } from '../support/service.js';

let service: TestService;
let orgId: string;
let datasetId: string;
let otherDatasetId: string;
const db = () => service.services.store.db;
const client = (key = ADMIN_KEY) => service.client(key);
const ds = (id: string) => ({ 'SVC-Dataset': id });
const UNKNOWN = '00000000-0000-4000-8000-00000000abcd';
const TIMESTAMP = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}$/;

async function newDataset(name: string): Promise<string> {
  const { data } = await createDataset({ client: client(), headers: { 'SVC-Organization': orgId }, body: { dataset_name: name }, throwOnError: true });
  return data.id;
}

async function newTopic(
  body: { owner_id: string; name?: string | null; first_user_message?: string | null; metadata?: unknown },
  dataset = datasetId,
): Promise<Topic> {
  const { data, response, error } = await createTopic({ client: client(), headers: ds(dataset), body });
  expect(response.status, JSON.stringify(error)).toBe(200);
  return data!;
}

async function ownerTopics(ownerId: string, dataset = datasetId): Promise<Topic[]> {
  const { data, response } = await getAllTopicsForOwnerId({ client: client(), headers: ds(dataset), path: { owner_id: ownerId } });
  expect(response.status).toBe(200);
  return data!;
}

async function addMessages(topicId: string, contents: string[]): Promise<void> {
  await db()('messages').insert(
    contents.map((content, i) => ({ topic_id: topicId, dataset_id: datasetId, sort_order: i, role: i % 2 === 0 ? 'user' : 'assistant', content })),
  );
}

const messagesOf = async (topicId: string) =>
  (await db()('messages').where({ topic_id: topicId }).orderBy('sort_order').select('sort_order', 'role', 'content')) as {
    sort_order: number;
    role: string;
    content: string;
  }[];

beforeAll(async () => {
  service = await startTestService();
  orgId = (await createOrganization({ client: client(), body: { name: 'Topics' }, throwOnError: true })).data.id;
  datasetId = await newDataset('help centre');
  otherDatasetId = await newDataset('catalogue');
}, 60_000);

afterAll(async () => {
  await service?.stop();
});

describe('starting a topic', () => {
  it('stores it under the dataset and owner, with the name given', async () => {
    const topic = await newTopic({ owner_id: 'user-1', name: '  Billing questions ', metadata: { channel: 'widget' } });
    expect(topic).toMatchObject({ name: 'Billing questions', owner_id: 'user-1', dataset_id: datasetId, deleted: false });
    expect(topic.created_at).toMatch(TIMESTAMP);
    expect(topic.updated_at).toMatch(TIMESTAMP);
    const row = await db()('topics').where({ id: topic.id }).first();
    expect(row.metadata).toEqual({ channel: 'widget' });
  });

  it('is named after its first message when no name is given, or "New topic" without either', async () => {
    expect((await newTopic({ owner_id: 'user-2', first_user_message: '\n  How do I   reset my password?\nThanks' })).name).toBe('How do I reset my password?');
    expect((await newTopic({ owner_id: 'user-2', name: '   ', first_user_message: 'Refunds' })).name).toBe('Refunds');
    expect((await newTopic({ owner_id: 'user-2' })).name).toBe('New topic');
    expect((await newTopic({ owner_id: 'user-2', name: null, first_user_message: ' \n ' })).name).toBe('New topic');
  });

  it('cuts a long first message at a word boundary', () => {
    const long = `${'word '.repeat(40)}end`;
    const name = nameFromMessage(long);
    expect(name.length).toBeLessThanOrEqual(100);
    expect(name.endsWith('word…')).toBe(true);
    expect(nameFromMessage('x'.repeat(300))).toBe(`${'x'.repeat(99)}…`);
  });

  it('refuses a missing or empty owner, and a dataset that does not exist', async () => {
    for (const body of [{}, { owner_id: '' }, { owner_id: 7 }]) {
      const reply = await service.request('POST', '/api/topic', { headers: { authorization: ADMIN_KEY, ...ds(datasetId) }, body });
      expect(reply.status, JSON.stringify(body)).toBe(400);
      expect(reply.body.message).toMatch(/owner_id/);
    }
    const reply = await service.request('POST', '/api/topic', { headers: { authorization: ADMIN_KEY, ...ds(UNKNOWN) }, body: { owner_id: 'x' } });
    expect(reply.status).toBe(404);
  });

  it('needs the admin role', async () => {
    const { data } = await createOrganizationApiKey({
      client: client(),
      headers: { 'SVC-Organization': orgId },
      body: { name: 'reader', role: 0 },
      throwOnError: true,
    });
    const { response } = await createTopic({ client: client(data.api_key), headers: ds(datasetId), body: { owner_id: 'user-9' } });
    expect(response.status).toBe(403);
    expect(await ownerTopics('user-9')).toEqual([]);
  });
});

describe("an owner's topics", () => {
  it('lists those of the dataset, the most recently changed first', async () => {
    const first = await newTopic({ owner_id: 'lister', name: 'first' });
    const second = await newTopic({ owner_id: 'lister', name: 'second' });
    await newTopic({ owner_id: 'lister', name: 'elsewhere' }, otherDatasetId);
    await newTopic({ owner_id: 'someone else', name: 'theirs' });
    expect((await ownerTopics('lister')).map((t) => t.id)).toEqual([second.id, first.id]);

    const { response } = await updateTopic({ client: client(), headers: ds(datasetId), body: { topic_id: first.id, name: 'first, renamed' } });
    expect(response.status).toBe(204);
    const listed = await ownerTopics('lister');
    expect(listed.map((t) => t.name)).toEqual(['first, renamed', 'second']);
    expect(listed[0].updated_at >= first.updated_at).toBe(true);
    expect((await ownerTopics('lister', otherDatasetId)).map((t) => t.name)).toEqual(['elsewhere']);
    expect(await ownerTopics('nobody')).toEqual([]);
  });
});

describe('renaming a topic', () => {
  it("refuses a blank name, an unknown topic and another dataset's topic", async () => {
    const topic = await newTopic({ owner_id: 'renamer', name: 'kept' });
    const rename = (dataset: string, body: Record<string, unknown>) =>
      service.request('PUT', '/api/topic', { headers: { authorization: ADMIN_KEY, ...ds(dataset) }, body });
    const blank = await rename(datasetId, { topic_id: topic.id, name: '  ' });
    expect(blank.status).toBe(400);
    expect(blank.body.message).toMatch(/name/);
    expect((await rename(datasetId, { topic_id: topic.id })).status).toBe(400);
    expect((await rename(datasetId, { topic_id: 'not-a-uuid', name: 'x' })).status).toBe(400);
    const unknown = await rename(datasetId, { topic_id: UNKNOWN, name: 'x' });
    expect(unknown.status).toBe(404);
    expect(unknown.body.message).toContain(UNKNOWN);
    expect((await rename(otherDatasetId, { topic_id: topic.id, name: 'x' })).status).toBe(404);
    expect((await ownerTopics('renamer')).map((t) => t.name)).toEqual(['kept']);
  });
});

describe('copying a topic', () => {
  it('makes a new topic for the owner with copies of the messages, in order', async () => {
    const source = await newTopic({ owner_id: 'author', name: 'Shipping', metadata: ['a', 1] });
    await addMessages(source.id, ['Where is my parcel?', 'It left the warehouse today.', 'Thanks!']);
    const { data: copy, response } = await cloneTopic({ client: client(), headers: ds(datasetId), body: { topic_id: source.id, owner_id: 'reader' } });
    expect(response.status).toBe(200);
    expect(copy).toMatchObject({ name: 'Shipping', owner_id: 'reader', dataset_id: datasetId });
    expect(copy!.id).not.toBe(source.id);
    expect(await messagesOf(copy!.id)).toEqual(await messagesOf(source.id));
    expect((await db()('topics').where({ id: copy!.id }).first()).metadata).toEqual(['a', 1]);

    const named = await cloneTopic({ client: client(), headers: ds(datasetId), body: { topic_id: source.id, owner_id: 'reader', name: 'Shipping (copy)' } });
    expect(named.data!.name).toBe('Shipping (copy)');
    expect((await ownerTopics('reader')).map((t) => t.id).sort()).toEqual([copy!.id, named.data!.id].sort());
    // The source is as it was.
    expect((await messagesOf(source.id)).map((m) => m.content)).toEqual(['Where is my parcel?', 'It left the warehouse today.', 'Thanks!']);

    // Read through the API: the copy's messages in order, each by id.
    const { data: listed } = await getAllTopicMessages({ client: client(), headers: ds(datasetId), path: { messages_topic_id: copy!.id }, throwOnError: true });
    expect(listed.map((m) => [m.sort_order, m.role, m.content, m.topic_id])).toEqual([
      [0, 'user', 'Where is my parcel?', copy!.id],
      [1, 'assistant', 'It left the warehouse today.', copy!.id],
      [2, 'user', 'Thanks!', copy!.id],
    ]);
    const { data: one } = await getMessageById({ client: client(), headers: ds(datasetId), path: { message_id: listed[1].id }, throwOnError: true });
    expect(one).toEqual(listed[1]);
    expect(one.created_at).toMatch(TIMESTAMP);
  });

  it("keeps a topic's messages and each message out of another dataset's reach", async () => {
    const topic = await newTopic({ owner_id: 'private-reader', name: 'Private' });
    await addMessages(topic.id, ['secret question']);
    const [message] = await messagesOf(topic.id);
    const id = (await db()('messages').where({ topic_id: topic.id, sort_order: message.sort_order }).first()).id;
    expect((await getAllTopicMessages({ client: client(), headers: ds(otherDatasetId), path: { messages_topic_id: topic.id } })).response.status).toBe(404);
    expect((await getMessageById({ client: client(), headers: ds(otherDatasetId), path: { message_id: id } })).response.status).toBe(404);
    const unknown = await getMessageById({ client: client(), headers: ds(datasetId), path: { message_id: UNKNOWN } });
    expect(unknown.response.status).toBe(404);
    expect((await getAllTopicMessages({ client: client(), headers: ds(datasetId), path: { messages_topic_id: UNKNOWN } })).response.status).toBe(404);
    expect(
      (await getAllTopicMessages({ client: client(), headers: ds(datasetId), path: { messages_topic_id: (await newTopic({ owner_id: 'x' })).id } })).data,
    ).toEqual([]);
  });

  it("refuses an unknown topic and another dataset's topic, copying nothing", async () => {
    const source = await newTopic({ owner_id: 'author-2', name: 'Private' });
    for (const [dataset, topicId] of [
      [datasetId, UNKNOWN],
      [otherDatasetId, source.id],
    ]) {
      const { response } = await cloneTopic({ client: client(), headers: ds(dataset), body: { topic_id: topicId, owner_id: 'thief' } });
      expect(response.status).toBe(404);
    }
    expect(await ownerTopics('thief')).toEqual([]);
    expect(await ownerTopics('thief', otherDatasetId)).toEqual([]);
  });
});

describe('deleting a topic', () => {
  it('deletes it with its messages, and only it', async () => {
    const doomed = await newTopic({ owner_id: 'deleter', name: 'doomed' });
    const kept = await newTopic({ owner_id: 'deleter', name: 'kept' });
    await addMessages(doomed.id, ['one', 'two']);
    await addMessages(kept.id, ['three']);
    const { response: foreign } = await deleteTopic({ client: client(), headers: ds(otherDatasetId), path: { topic_id: doomed.id } });
    expect(foreign.status).toBe(404);
    const { response } = await deleteTopic({ client: client(), headers: ds(datasetId), path: { topic_id: doomed.id } });
    expect(response.status).toBe(204);
    expect((await ownerTopics('deleter')).map((t) => t.name)).toEqual(['kept']);
    expect(await messagesOf(doomed.id)).toEqual([]);
    expect(await messagesOf(kept.id)).toHaveLength(1);
    const again = await deleteTopic({ client: client(), headers: ds(datasetId), path: { topic_id: doomed.id } });
    expect(again.response.status).toBe(404);
  });

  it("goes with its dataset's deletion", async () => {
    const dataset = await newDataset('short-lived');
    const topic = await newTopic({ owner_id: 'x', name: 'with the dataset' }, dataset);
    await db()('messages').insert({ topic_id: topic.id, dataset_id: dataset, sort_order: 0, role: 'user', content: 'hi' });
    await db()('datasets').where({ id: dataset }).delete();
    expect(await db()('topics').where({ id: topic.id })).toEqual([]);
    expect(await db()('messages').where({ topic_id: topic.id })).toEqual([]);
  });
});
