// Topics: the memory of one conversation over a dataset, owned by an id of the caller's choosing,
// and their messages, read and written here. A topic's copy copies its messages, and deleting a
// topic deletes them (the table cascades). A question and its answer are written together.
import type { Knex } from 'knex';
import type * as T from '../../sdk/src/generated/types.gen.js';
import { badRequest, notFound } from '../errors.js';
import { timestamp } from '../format.js';

export interface TopicRow {
  id: string;
  dataset_id: string;
  owner_id: string;
  name: string;
  created_at: Date;
  updated_at: Date;
}

export interface MessageRow {
  id: string;
  topic_id: string;
  dataset_id: string;
  sort_order: number;
  role: 'system' | 'user' | 'assistant';
  content: string;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  created_at: Date;
  updated_at: Date;
}

/** The longest name made from a first message. */
const NAME_FROM_MESSAGE = 100;
const UNNAMED = 'New topic';

const topicRecord = (row: TopicRow): T.Topic => ({
  id: row.id,
  name: row.name,
  deleted: false,
  created_at: timestamp(row.created_at),
  updated_at: timestamp(row.updated_at),
  dataset_id: row.dataset_id,
  owner_id: row.owner_id,
});

const messageRecord = (row: MessageRow): T.Message => ({
  id: row.id,
  topic_id: row.topic_id,
  dataset_id: row.dataset_id,
  sort_order: row.sort_order,
  role: row.role,
  content: row.content,
  prompt_tokens: row.prompt_tokens,
  completion_tokens: row.completion_tokens,
  deleted: false,
  created_at: timestamp(row.created_at),
  updated_at: timestamp(row.updated_at),
});

/** The name a topic gets from its first message: the first line that has words, cut at a word boundary. */
export function nameFromMessage(message: string | null | undefined): string {
  const line = (message ?? '')
    .split('\n')
    .map((l) => l.replace(/\s+/g, ' ').trim())
    .find((l) => l.length > 0);
  if (!line) return UNNAMED;
  if (line.length <= NAME_FROM_MESSAGE) return line;
  const cut = line.slice(0, NAME_FROM_MESSAGE - 1);
  const space = cut.lastIndexOf(' ');
  return `${(space > NAME_FROM_MESSAGE / 2 ? cut.slice(0, space) : cut).trimEnd()}…`;
}

/** The name given, when it has more than white space. */
const given = (name: string | null | undefined): string | null => (name?.trim() ? name.trim() : null);

export async function findTopic(db: Knex, datasetId: string, topicId: string): Promise<TopicRow> {
  const row = await db<TopicRow>('topics').where({ id: topicId, dataset_id: datasetId }).first();
  if (!row) throw notFound(`topic ${topicId} not found in this dataset`);
  return row;
}

export async function createTopic(db: Knex, datasetId: string, body: T.CreateTopicReqPayload): Promise<T.Topic> {
  const [row] = await db<TopicRow>('topics')
    .insert({
      dataset_id: datasetId,
      owner_id: body.owner_id,
      name: given(body.name) ?? nameFromMessage(body.first_user_message),
      // jsonb: a JSON text, so that a string or an array is kept as the value it is.
      metadata: body.metadata === undefined || body.metadata === null ? null : db.raw('?::jsonb', [JSON.stringify(body.metadata)]),
    } as Partial<TopicRow>)
    .returning('*');
  return topicRecord(row);
}

export async function renameTopic(db: Knex, datasetId: string, body: T.UpdateTopicReqPayload): Promise<void> {
  const name = given(body.name);
  if (!name) throw badRequest('name must have more than white space');
  const changed = await db('topics').where({ id: body.topic_id, dataset_id: datasetId }).update({ name, updated_at: db.fn.now() });
  if (changed === 0) throw notFound(`topic ${body.topic_id} not found in this dataset`);
}

/** A new topic for the owner with copies of the topic's messages, in one transaction. */
export async function cloneTopic(db: Knex, datasetId: string, body: T.CloneTopicReqPayload): Promise<T.Topic> {
  return db.transaction(async (trx) => {
    const source = await findTopic(trx, datasetId, body.topic_id);
    const [row] = await trx<TopicRow>('topics')
      .insert({
        dataset_id: datasetId,
        owner_id: body.owner_id,
        name: given(body.name) ?? source.name,
        metadata: trx.raw('(select metadata from topics where id = ?)', [source.id]),
      } as Partial<TopicRow>)
      .returning('*');
    await trx.raw(
      `insert into messages (topic_id, dataset_id, sort_order, role, content, prompt_tokens, completion_tokens, created_at, updated_at)
       select ?, dataset_id, sort_order, role, content, prompt_tokens, completion_tokens, created_at, updated_at
       from messages where topic_id = ? order by sort_order`,
      [row.id, source.id],
    );
    return topicRecord(row);
  });
}

/** The dataset's topics of the owner, the most recently changed first. */
export async function ownerTopics(db: Knex, datasetId: string, ownerId: string): Promise<T.Topic[]> {
  const rows = await db<TopicRow>('topics')
    .where({ dataset_id: datasetId, owner_id: ownerId })
    .orderBy([
      { column: 'updated_at', order: 'desc' },
      { column: 'id', order: 'asc' },
    ]);
  return rows.map(topicRecord);
}

export async function deleteTopic(db: Knex, datasetId: string, topicId: string): Promise<void> {
  const deleted = await db('topics').where({ id: topicId, dataset_id: datasetId }).delete();
  if (deleted === 0) throw notFound(`topic ${topicId} not found in this dataset`);
}

export async function getMessage(db: Knex, datasetId: string, messageId: string): Promise<T.Message> {
  const row = await db<MessageRow>('messages').where({ id: messageId, dataset_id: datasetId }).first();
  if (!row) throw notFound(`message ${messageId} not found in this dataset`);
  return messageRecord(row);
}

/** A topic's messages in their order; 404 for a topic the dataset does not hold. */
export async function topicMessages(db: Knex, datasetId: string, topicId: string): Promise<T.Message[]> {
  await findTopic(db, datasetId, topicId);
  const rows = await db<MessageRow>('messages').where({ topic_id: topicId }).orderBy('sort_order');
  return rows.map(messageRecord);
}

/** A topic's messages in their order. */
export async function conversation(db: Knex, topicId: string): Promise<MessageRow[]> {
  return db<MessageRow>('messages').where({ topic_id: topicId }).orderBy('sort_order');
}

export interface NewTurn {
  topicId: string;
  datasetId: string;
  /** The topic's messages from this sort order on are replaced by the turn; null to add it at the end. */
  replaceFrom: number | null;
  /** Stored first (sort order 0) when the topic has no message yet. */
  systemPrompt: string;
  /** The question, or null when it is stored already (an answer given again). */
  question: string | null;
  answer: string;
  promptTokens: number | null;
  completionTokens: number | null;
}

/**
 * Writes a question and its answer at the end of the topic (after removing the messages they
 * replace), under the topic's row lock so that two turns never take the same place. Returns how many
 * messages it added; 404 when the topic was deleted meanwhile.
 */
export async function storeTurn(trx: Knex.Transaction, turn: NewTurn): Promise<number> {
  const topic = await trx('topics').where({ id: turn.topicId, dataset_id: turn.datasetId }).forUpdate().first('id');
  if (!topic) throw notFound(`topic ${turn.topicId} not found in this dataset`);
  if (turn.replaceFrom != null) await trx('messages').where({ topic_id: turn.topicId }).where('sort_order', '>=', turn.replaceFrom).delete();
  const [{ last }] = await trx('messages').where({ topic_id: turn.topicId }).max<{ last: number | null }[]>('sort_order as last');
  const rows: Partial<MessageRow>[] = [];
  if (last == null) rows.push({ role: 'system', content: turn.systemPrompt });
  if (turn.question != null) rows.push({ role: 'user', content: turn.question });
  rows.push({ role: 'assistant', content: turn.answer, prompt_tokens: turn.promptTokens, completion_tokens: turn.completionTokens });
  const first = last == null ? 0 : last + 1;
  await trx('messages').insert(rows.map((row, i) => ({ ...row, topic_id: turn.topicId, dataset_id: turn.datasetId, sort_order: first + i })));
  await trx('topics').where({ id: turn.topicId }).update({ updated_at: trx.fn.now() });
  return rows.length;
}
