// Handlers of the organization operations.
import type {
  CreateOrganizationApiKeyHandler,
  CreateOrganizationHandler,
  DeleteOrganizationApiKeyHandler,
  DeleteOrganizationHandler,
  GetOrganizationApiKeysHandler,
  GetOrganizationHandler,
  GetOrganizationUsageHandler,
  GetOrganizationUsersHandler,
  UpdateAllOrgDatasetConfigsHandler,
  UpdateOrganizationHandler,
} from '../../generated/handlers.js';
import { checkPathOrganization, organizationNotFound } from '../auth/access.js';
import { belongsTo } from '../auth/caller.js';
import { createApiKey, deleteOrganizationApiKey, listApiKeys } from '../domain/apiKeys.js';
import { createOrganization, deleteOrganization, getOrganizationWithPlan, updateAllDatasetConfigs, updateOrganization } from '../domain/organizations.js';
import { organizationUsage } from '../domain/usage.js';
import { listOrganizationUsers } from '../domain/users.js';
import { forbidden } from '../errors.js';

export const create_organization: CreateOrganizationHandler = async ({ body, caller, services }) => {
  if (caller.kind !== 'admin') throw forbidden('only the instance administrator may create organizations');
  return { status: 200, body: await createOrganization(services.store.db, body.name) };
};

export const get_organization: GetOrganizationHandler = async ({ path, caller, services }) => {
  if (!belongsTo(caller, path.organization_id)) throw organizationNotFound(path.organization_id);
  return { status: 200, body: await getOrganizationWithPlan(services.store.db, path.organization_id) };
};

export const update_organization: UpdateOrganizationHandler = async ({ body, organizationId, services }) => ({
  status: 200,
  body: await updateOrganization(services.store.db, organizationId, body),
});

export const delete_organization: DeleteOrganizationHandler = async ({ path, caller, organizationId, services }) => {
  checkPathOrganization(caller, organizationId, path.organization_id);
  await deleteOrganization(services.store.db, services.workflows, organizationId);
  return { status: 204, body: undefined };
};

export const get_organization_users: GetOrganizationUsersHandler = async ({ path, caller, organizationId, services }) => {
  checkPathOrganization(caller, organizationId, path.organization_id);
  return { status: 200, body: await listOrganizationUsers(services.store.db, organizationId) };
};

export const get_organization_usage: GetOrganizationUsageHandler = async ({ path, body, caller, organizationId, services }) => {
  checkPathOrganization(caller, organizationId, path.organization_id);
  return { status: 200, body: await organizationUsage(services.store.db, organizationId, body) };
};

export const get_organization_api_keys: GetOrganizationApiKeysHandler = async ({ query, organizationId, services }) => ({
  status: 200,
  body: await listApiKeys(services.store.db, organizationId, { cursor: query?.cursor, limit: query?.limit }),
});

export const create_organization_api_key: CreateOrganizationApiKeyHandler = async ({ body, caller, organizationId, services }) => ({
  status: 200,
  body: await createApiKey(services.store.db, organizationId, caller, body),
});

export const delete_organization_api_key: DeleteOrganizationApiKeyHandler = async ({ path, caller, organizationId, services }) => {
  await deleteOrganizationApiKey(services.store.db, organizationId, caller, path.api_key_id);
  return { status: 204, body: undefined };
};

export const update_all_org_dataset_configs: UpdateAllOrgDatasetConfigsHandler = async ({ body, organizationId, services }) => {
  await updateAllDatasetConfigs(services.store.db, organizationId, body.match_configuration, body.to_configuration);
  return { status: 204, body: undefined };
};
