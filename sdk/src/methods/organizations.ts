// Organizations: their API keys, records and usage, and the roles of their users.
import type { ChunkSearch } from '../chunk-search.js';
import { unwrap } from '../errors.js';
import * as api from '../generated/sdk.gen.js';
import type * as T from '../generated/types.gen.js';
import { organizationHeaders, sending } from '../scope.js';

/** Create an API key of the organization, shown this once: `POST /api/organization/api_key`. */
export function createOrganizationApiKey(this: ChunkSearch, props: T.CreateApiKeyReqPayload, signal?: AbortSignal) {
  return unwrap(api.createOrganizationApiKey({ ...sending(this, signal), headers: organizationHeaders(this), body: props }));
}

/** Delete an API key of the organization: `DELETE /api/organization/api_key/{api_key_id}`. */
export function deleteOrganizationApiKey(this: ChunkSearch, apiKeyId: string, signal?: AbortSignal): Promise<void> {
  return unwrap(api.deleteOrganizationApiKey({ ...sending(this, signal), headers: organizationHeaders(this), path: { api_key_id: apiKeyId } }));
}

/** An organization with its plan and subscription: `GET /api/organization/{organization_id}`. */
export function getOrganizationById(this: ChunkSearch, organizationId: string, signal?: AbortSignal) {
  return unwrap(
    api.getOrganization({ ...sending(this, signal), headers: organizationHeaders(this, organizationId), path: { organization_id: organizationId } }),
  );
}

/** What an organization uses of its plan: `POST /api/organization/usage/{organization_id}`. */
export function getOrganizationUsage(this: ChunkSearch, organizationId: string, signal?: AbortSignal) {
  return unwrap(
    api.getOrganizationUsage({ ...sending(this, signal), headers: organizationHeaders(this, organizationId), path: { organization_id: organizationId } }),
  );
}

/** Change the role of a user of the organization: `PUT /api/user`. */
export function updateUserRole(this: ChunkSearch, props: T.UpdateUserReqPayload, signal?: AbortSignal): Promise<void> {
  return unwrap(api.updateUser({ ...sending(this, signal), headers: organizationHeaders(this), body: props }));
}
