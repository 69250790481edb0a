// Organizations, each subscribed to a plan (the instance's default plan when created).
import type { Knex } from 'knex';
import type * as T from '../../generated/client/types.gen.js';
import { notFound } from '../errors.js';
import { nullableTimestamp, timestamp } from '../format.js';

interface OrganizationRow {
  id: string;
  name: string;
  registerable: boolean;
  deleted: number;
  partner_configuration: Record<string, string>;
  created_at: Date;
  updated_at: Date;
}

export async function createOrganization(db: Knex, name: string): Promise<T.Organization> {
  const row = await db.transaction(async (trx) => {
    const plan = await trx('plans').where({ is_default: true }).first('id');
    const [organization] = await trx<OrganizationRow>('organizations').insert({ name }).returning('*');
    await trx('subscriptions').insert({ organization_id: organization.id, plan_id: plan.id });
    return organization;
  });
  return organizationRecord(row);
}

export async function organizationExists(db: Knex, id: string): Promise<boolean> {
  return Boolean(await db('organizations').where({ id, deleted: 0 }).first('id'));
}

export async function getOrganizationWithPlan(db: Knex, id: string): Promise<T.OrganizationWithSubAndPlan> {
  const organization = await db<OrganizationRow>('organizations').where({ id, deleted: 0 }).first();
  if (!organization) throw notFound(`organization ${id} not found`);
  const subscription = await db('subscriptions').where({ organization_id: id }).first();
  const plan = subscription ? await db('plans').where({ id: subscription.plan_id }).first() : null;
  return {
    organization: organizationRecord(organization),
    plan: plan && {
      type: 'flat',
      id: plan.id,
      name: plan.name,
      amount: Number(plan.amount),
      chunk_count: plan.chunk_count,
      dataset_count: plan.dataset_count,
      file_storage: Number(plan.file_storage),
      message_count: plan.message_count,
      messages_per_month: plan.messages_per_month,
      user_count: plan.user_count,
      billing_provider_id: plan.billing_provider_id,
      visible: plan.visible,
      created_at: timestamp(plan.created_at),
      updated_at: timestamp(plan.updated_at),
    },
    subscription: subscription && {
      type: 'flat',
      id: subscription.id,
      organization_id: subscription.organization_id,
      plan_id: subscription.plan_id,
      billing_provider_id: subscription.billing_provider_id,
      current_period_end: nullableTimestamp(subscription.current_period_end),
      created_at: timestamp(subscription.created_at),
      updated_at: timestamp(subscription.updated_at),
    },
  };
}

function organizationRecord(row: OrganizationRow): T.Organization {
  return {
    id: row.id,
    name: row.name,
    registerable: row.registerable,
    deleted: row.deleted,
    partner_configuration: row.partner_configuration,
    created_at: timestamp(row.created_at),
    updated_at: timestamp(row.updated_at),
  };
}
