// Plan quantities, enforced: a request that would take an organization past its plan is refused
// (426) before anything is written.
import type { Knex } from 'knex';
import { planLimitReached } from '../errors.js';

export interface PlanRow {
  id: string;
  name: string;
  chunk_count: number;
  dataset_count: number;
  file_storage: string | number;
  message_count: number;
  messages_per_month: number | null;
  user_count: number;
  high_priority: boolean;
}

/** What a request is about to add to an organization. */
export interface Additions {
  datasets?: number;
  users?: number;
  chunks?: number;
  fileBytes?: number;
  messages?: number;
}

/** The organization's plan; with `lock`, its subscription row is locked to the end of the transaction `db` is. */
export async function planOf(db: Knex, organizationId: string, options: { lock?: boolean } = {}): Promise<PlanRow> {
  const query = db<PlanRow>('plans')
    .join('subscriptions', 'subscriptions.plan_id', 'plans.id')
    .where('subscriptions.organization_id', organizationId)
    .first('plans.*');
  const plan = await (options.lock ? query.forUpdate('subscriptions') : query);
  if (plan) return plan;
  // An organization without a subscription is on the instance's default plan.
  return (await db('plans').where('is_default', true).first()) as PlanRow;
}

/**
 * Checks that the organization's usage plus `additions` stays within its plan. Call it inside the
 * transaction that writes the additions: it locks the organization's subscription row, so two
 * concurrent requests cannot both take the last unit. With `written`, the additions are already in
 * the transaction's own rows: call it last, just before commit, so the lock is held only briefly.
 */
export async function reservePlanCapacity(
  trx: Knex.Transaction,
  organizationId: string,
  additions: Additions,
  options: { written?: boolean } = {},
): Promise<void> {
  if (!Object.values(additions).some((n) => n > 0)) return;
  const plan = await planOf(trx, organizationId, { lock: true });
  const checks: [keyof Additions, string, number, () => Promise<number>][] = [
    ['datasets', 'datasets', plan.dataset_count, () => countDatasets(trx, organizationId)],
    ['users', 'users', plan.user_count, () => countUsers(trx, organizationId)],
    ['chunks', 'chunks', plan.chunk_count, () => countChunksFolding(trx, organizationId)],
    ['fileBytes', 'bytes of file storage', Number(plan.file_storage), () => sumFileBytes(trx, organizationId)],
    ['messages', 'messages', plan.message_count, () => countMessages(trx, organizationId)],
  ];
  if (plan.messages_per_month != null)
    checks.push(['messages', 'messages this month', plan.messages_per_month, () => countMessagesSince(trx, organizationId, startOfMonth(new Date()))]);
  for (const [key, noun, limit, used] of checks) {
    const adding = additions[key] ?? 0;
    if (adding <= 0) continue;
    const current = (await used()) - (options.written ? adding : 0);
    if (current + adding > limit) {
      throw planLimitReached(`the ${plan.name} plan allows ${limit} ${noun}; the organization has ${current} and this request adds ${adding}`);
    }
  }
}

export async function countDatasets(db: Knex, organizationId: string): Promise<number> {
  return count(db('datasets').where({ organization_id: organizationId, deleted: 0 }));
}

export async function countUsers(db: Knex, organizationId: string): Promise<number> {
  return count(db('user_organizations').where({ organization_id: organizationId }));
}

/** Rows of counted changes an organization may gather before the plan check folds them. */
const FOLD_AT = 64;

/** The chunks of the organization's datasets, from the changes the chunk writes count (migration 018). */
export async function countChunks(db: Knex, organizationId: string): Promise<number> {
  return (await chunkCounts(db, organizationId)).chunks;
}

async function chunkCounts(db: Knex, organizationId: string): Promise<{ chunks: number; rows: number }> {
  const [row] = await db('dataset_chunk_counts')
    .join('datasets', 'datasets.id', 'dataset_chunk_counts.dataset_id')
    .where({ 'datasets.organization_id': organizationId, 'datasets.deleted': 0 })
    .select(db.raw('coalesce(sum(dataset_chunk_counts.chunks), 0) as chunks'), db.raw('count(*) as rows'));
  return { chunks: Number(row.chunks), rows: Number(row.rows) };
}

/**
 * The organization's chunks, its datasets' counted changes folded into one row each when they are
 * many. Under the subscription lock, so no two fold at once; changes of writes not yet committed
 * are not seen, and stay.
 */
async function countChunksFolding(trx: Knex.Transaction, organizationId: string): Promise<number> {
  const counts = await chunkCounts(trx, organizationId);
  if (counts.rows > FOLD_AT) {
    await trx.raw(
      `with folded as (
         delete from dataset_chunk_counts c using datasets d
          where d.id = c.dataset_id and d.organization_id = ?
         returning c.dataset_id, c.chunks)
       insert into dataset_chunk_counts (dataset_id, chunks) select dataset_id, sum(chunks) from folded group by 1`,
      [organizationId],
    );
  }
  return counts.chunks;
}

export async function sumFileBytes(db: Knex, organizationId: string): Promise<number> {
  const [row] = await db('files')
    .join('datasets', 'datasets.id', 'files.dataset_id')
    .where({ 'datasets.organization_id': organizationId })
    .sum<{ total: string | null }[]>('files.size as total');
  return Number(row?.total ?? 0);
}

export async function countMessages(db: Knex, organizationId: string): Promise<number> {
  return count(db('messages').join('datasets', 'datasets.id', 'messages.dataset_id').where({ 'datasets.organization_id': organizationId }));
}

export async function countMessagesSince(db: Knex, organizationId: string, since: Date): Promise<number> {
  return count(
    db('messages')
      .join('datasets', 'datasets.id', 'messages.dataset_id')
      .where({ 'datasets.organization_id': organizationId })
      .where('messages.created_at', '>=', since),
  );
}

/** The month's first instant, in UTC: when `messages_per_month` starts counting again. */
export function startOfMonth(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
}

async function count(query: Knex.QueryBuilder): Promise<number> {
  const [row] = await query.count<{ count: string }[]>('* as count');
  return Number(row.count);
}
