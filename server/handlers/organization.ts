import type {
  CreateOrganizationApiKeyHandler,
  CreateOrganizationHandler,
  GetOrganizationApiKeysHandler,
  GetOrganizationHandler,
} from '../../generated/handlers.js';
import { belongsTo } from '../auth/caller.js';
import { createApiKey, listApiKeys } from '../domain/apiKeys.js';
import { createOrganization, getOrganizationWithPlan } from '../domain/organizations.js';
import { forbidden } from '../errors.js';

export const create_organization: CreateOrganizationHandler = async ({ body, caller, services }) => {
  if (caller.kind !== 'admin') throw forbidden('only the instance administrator may create organizations');
  return { status: 200, body: await createOrganization(services.store.db, body.name) };
};

export const get_organization: GetOrganizationHandler = async ({ path, caller, services }) => {
  if (!belongsTo(caller, path.organization_id)) throw forbidden(`the API key may not read organization ${path.organization_id}`);
  return { status: 200, body: await getOrganizationWithPlan(services.store.db, path.organization_id) };
};

export const get_organization_api_keys: GetOrganizationApiKeysHandler = async ({ query, organizationId, services }) => ({
  status: 200,
  body: await listApiKeys(services.store.db, organizationId, { cursor: query?.cursor, limit: query?.limit }),
});

export const create_organization_api_key: CreateOrganizationApiKeyHandler = async ({ body, caller, organizationId, services }) => ({
  status: 200,
  body: await createApiKey(services.store.db, organizationId, caller, body),
});
