// Access rules, enforced in one place for every operation: who calls (401), whether the key's
// scopes, organization, dataset restrictions and role allow this operation (403). Another
// organization, or its dataset, answers 404 like an unknown one: a caller learns nothing of what
// it may not see. A key that
// belongs to a user never acts beyond that user's current membership: its role is lowered to the
// member's role, the member's scopes apply too, and it stops working when the user leaves.
import { timingSafeEqual } from 'node:crypto';
import type { OperationFacts } from '../../generated/handlers.js';
import { callerForKey, hashKey } from '../domain/apiKeys.js';
import { resolveDataset, type DatasetRow } from '../domain/datasets.js';
import { isUuid } from '../domain/ids.js';
import { organizationExists } from '../domain/organizations.js';
import { instanceAdminId, membershipOf } from '../domain/users.js';
import { badRequest, forbidden, notFound, unauthorized } from '../errors.js';
import type { Services } from '../services.js';
import { belongsTo, roleNames, scopeAllows, type Caller, type Role } from './caller.js';
import { remembered } from './lookups.js';

export interface Access {
  caller: Caller;
  organizationId: string | null;
  dataset: DatasetRow | null;
}

export interface AccessRequest {
  authorization: string | undefined;
  datasetHeader: string | undefined;
  organizationHeader: string | undefined;
}

export async function grantAccess(services: Services, operation: OperationFacts, request: AccessRequest): Promise<Access> {
  const caller = await authenticate(services, request.authorization);
  const route = `${operation.method.toUpperCase()} ${operation.path}`;
  if (caller.kind === 'key' && !scopeAllows(caller.scopes, route)) {
    throw forbidden(`the API key's scopes do not include ${route}`);
  }
  if (caller.kind === 'key' && !scopeAllows(caller.memberScopes, route)) {
    throw forbidden(`the scopes of the key's user in organization ${caller.organizationId} do not include ${route}`);
  }

  let organizationId: string | null = null;
  let dataset: DatasetRow | null = null;
  if (operation.scope === 'organization') {
    if (!request.organizationHeader) throw badRequest('the SVC-Organization header is required');
    if (!isUuid(request.organizationHeader)) throw badRequest(`SVC-Organization: ${request.organizationHeader} is not an organization id`);
    organizationId = request.organizationHeader;
    if (!belongsTo(caller, organizationId) || !(await liveOrganization(services, organizationId))) {
      throw organizationNotFound(organizationId);
    }
  } else if (operation.scope === 'dataset') {
    if (!request.datasetHeader) throw badRequest('the SVC-Dataset header is required');
    const header = request.datasetHeader;
    const db = services.store.db;
    dataset = await remembered(db, `dataset ${caller.kind === 'key' ? caller.organizationId : '*'} ${header}`, () => resolveDataset(db, header, caller));
    if (!belongsTo(caller, dataset.organization_id)) throw notFound(`dataset ${request.datasetHeader} not found`);
    if (caller.kind === 'key' && caller.datasetIds.length > 0 && !caller.datasetIds.includes(dataset.id)) {
      throw forbidden(`the API key is limited to other datasets than ${request.datasetHeader}`);
    }
    // A key of a deleted organization is refused already; the administrator must not reach its datasets either.
    if (caller.kind === 'admin' && !(await liveOrganization(services, dataset.organization_id))) {
      throw notFound(`dataset ${request.datasetHeader} not found`);
    }
    organizationId = dataset.organization_id;
  }

  if (operation.role !== null && caller.role < operation.role) {
    const whose = caller.kind === 'key' && caller.userId ? "the API key (with its user's membership)" : 'the API key';
    throw forbidden(`${route} needs role ${roleNames[operation.role]}; ${whose} has role ${roleNames[caller.role]}`);
  }
  return { caller, organizationId, dataset };
}

/** Whether the organization exists and is not deleted, remembered like the other lookups (lookups.ts). */
function liveOrganization(services: Services, organizationId: string): Promise<boolean> {
  const db = services.store.db;
  return remembered(db, `organization ${organizationId}`, () => organizationExists(db, organizationId));
}

async function authenticate(services: Services, header: string | undefined): Promise<Caller> {
  const key = header?.replace(/^Bearer\s+/i, '').trim();
  if (!key) throw unauthorized('send an API key in the Authorization header');
  const admin = services.config.adminApiKey;
  if (admin && sameSecret(key, admin)) return { kind: 'admin', role: 2, userId: await instanceAdminId(services.store.db) };
  // Remembered by the key's hash, never past the key's expiry.
  return remembered(
    services.store.db,
    `key ${hashKey(key)}`,
    () => keyCaller(services, key),
    (caller) => caller.expiresAt?.getTime() ?? Infinity,
  );
}

async function keyCaller(services: Services, key: string): Promise<Extract<Caller, { kind: 'key' }>> {
  const caller = await callerForKey(services.store.db, key);
  if (!caller.userId) return caller;
  const membership = await membershipOf(services.store.db, caller.userId, caller.organizationId);
  if (!membership) {
    throw forbidden(`the API key's user is no longer a member of organization ${caller.organizationId}, so the key cannot be used`);
  }
  return {
    ...caller,
    role: Math.min(caller.role, membership.role) as Role,
    memberScopes: membership.scopes ?? [],
  };
}

function sameSecret(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/** The answer for an organization the caller may not see, the same as for one that does not exist. */
export function organizationNotFound(organizationId: string) {
  return notFound(`organization ${organizationId} not found`);
}

/**
 * Operations that name an organization in the path as well as in `SVC-Organization` act on that
 * one organization: another organization's id is refused (404 when the caller does not belong to
 * it, else 400).
 */
export function checkPathOrganization(caller: Caller, organizationId: string, pathOrganizationId: string): void {
  if (pathOrganizationId === organizationId) return;
  if (!belongsTo(caller, pathOrganizationId)) throw organizationNotFound(pathOrganizationId);
  throw badRequest(`the path names organization ${pathOrganizationId} but SVC-Organization names ${organizationId}; they must be the same`);
}
