// Organizations, each subscribed to a plan (the instance's default plan when created): their
// changes, their deletion (at once unusable, then purged by a workflow) and organization-wide
// dataset configuration changes.
import { isDeepStrictEqual } from 'node:util';
import type { Knex } from 'knex';
import type * as T from '../../sdk/src/generated/types.gen.js';
import { badRequest, notFound } from '../errors.js';
import { nullableTimestamp, timestamp } from '../format.js';
import { WorkflowAlreadyRunningError, type WorkflowEngine } from '../engines/workflows/types.js';
import { workflowIds } from '../../workflows/registry.js';
import { datasetConfig, mergeConfiguration, parseConfigurationInput, vectorShapeFields } from './datasetConfig.js';
import type { DatasetRow } from './datasets.js';

export interface OrganizationRow {
  id: string;
  name: string;
  registerable: boolean;
  deleted: number;
  partner_configuration: Record<string, string>;
  created_at: Date;
  updated_at: Date;
}

export async function createOrganization(db: Knex, name: string): Promise<T.Organization> {
  return organizationRecord(await db.transaction((trx) => insertOrganization(trx, name)));
}

/** A new organization subscribed to the default plan; call it inside a transaction. */
export async function insertOrganization(trx: Knex.Transaction, name: string): Promise<OrganizationRow> {
  const plan = await trx('plans').where({ is_default: true }).first('id');
  const [organization] = await trx<OrganizationRow>('organizations').insert({ name }).returning('*');
  await trx('subscriptions').insert({ organization_id: organization.id, plan_id: plan.id });
  return organization;
}

export async function updateOrganization(db: Knex, id: string, request: T.UpdateOrganizationReqPayload): Promise<T.Organization> {
  const changes: Record<string, unknown> = {};
  if (request.name != null) {
    const name = request.name.trim();
    if (!name) throw badRequest('name: must not be blank');
    changes.name = name;
  }
  if (request.partner_configuration != null) changes.partner_configuration = JSON.stringify(request.partner_configuration);
  const [row] = await db<OrganizationRow>('organizations')
    .where({ id, deleted: 0 })
    .update({ ...changes, updated_at: db.fn.now() })
    .returning('*');
  if (!row) throw notFound(`organization ${id} not found`);
  return organizationRecord(row);
}

/**
 * Deletes an organization: marked deleted at once (so nothing of it can be read or used any more),
 * then purged by the purgeOrganization workflow. When the workflow cannot be started the mark is
 * undone and the error goes to the caller, so a later attempt can succeed.
 */
export async function deleteOrganization(db: Knex, workflows: WorkflowEngine, id: string): Promise<void> {
  const marked = await db('organizations').where({ id, deleted: 0 }).update({ deleted: 1, updated_at: db.fn.now() });
  if (marked === 0) throw notFound(`organization ${id} not found`);
  try {
    await workflows.run('purgeOrganization', { workflowId: workflowIds.purgeOrganization(id), input: { organizationId: id } });
  } catch (error) {
    if (error instanceof WorkflowAlreadyRunningError) return;
    await db('organizations').where({ id, deleted: 1 }).update({ deleted: 0, updated_at: db.fn.now() });
    throw error;
  }
}

/**
 * Writes the fields of `to` over the server configuration of every live dataset of the organization
 * whose configuration contains `match` (see `containsConfiguration`). The fields are checked as any
 * dataset configuration is, and the vector shape of a dataset that holds chunks cannot change; a
 * refusal (400) changes nothing. Returns how many datasets changed.
 */
export async function updateAllDatasetConfigs(
  db: Knex,
  organizationId: string,
  match: Record<string, unknown> | null | undefined,
  to: Record<string, unknown>,
): Promise<number> {
  const changes = parseConfigurationInput(to, 'to_configuration');
  return db.transaction(async (trx) => {
    const datasets = await trx<DatasetRow>('datasets').where({ organization_id: organizationId, deleted: 0 }).orderBy('id').forUpdate();
    const selected = datasets.filter((d) => containsConfiguration(datasetConfig(d), match ?? {}));
    for (const dataset of selected) {
      const current = datasetConfig(dataset);
      const reshaped = vectorShapeFields.filter((field) => field in changes && !isDeepStrictEqual(changes[field], current[field]));
      if (reshaped.length > 0 && (await trx('chunks').where({ dataset_id: dataset.id }).first('id'))) {
        throw badRequest(`to_configuration.${reshaped[0]}: dataset ${dataset.id} holds chunks, so its ${reshaped.join(' and ')} cannot change`);
      }
    }
    for (const dataset of selected) {
      await trx('datasets')
        .where({ id: dataset.id })
        .update({ server_configuration: JSON.stringify(mergeConfiguration(datasetConfig(dataset), changes)), updated_at: trx.fn.now() });
    }
    return selected.length;
  });
}

/**
 * Whether a configuration contains every key of `match` with an equal value; nested objects are
 * compared the same way, anything else must be equal.
 */
export function containsConfiguration(configuration: unknown, match: unknown): boolean {
  if (isPlainObject(match)) {
    if (!isPlainObject(configuration)) return false;
    return Object.entries(match).every(([key, value]) => key in configuration && containsConfiguration(configuration[key], value));
  }
  return isDeepStrictEqual(configuration, match);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
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

export function organizationRecord(row: OrganizationRow): T.Organization {
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
