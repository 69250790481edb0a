// Access rules, enforced in one place for every operation: who calls (401), whether the key's
// scopes, organization, dataset restrictions and role allow this operation (403).
import { timingSafeEqual } from 'node:crypto';
import type { OperationFacts } from '../../generated/handlers.js';
import { callerForKey } from '../domain/apiKeys.js';
import { resolveDataset, type DatasetRow } from '../domain/datasets.js';
import { isUuid } from '../domain/ids.js';
import { organizationExists } from '../domain/organizations.js';
import { badRequest, forbidden, notFound, unauthorized } from '../errors.js';
import type { Services } from '../services.js';
import { belongsTo, roleNames, type Caller } from './caller.js';

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
  if (caller.kind === 'key' && caller.scopes.length > 0 && !caller.scopes.includes(route)) {
    throw forbidden(`the API key's scopes do not include ${route}`);
  }

  let organizationId: string | null = null;
  let dataset: DatasetRow | null = null;
  if (operation.scope === 'organization') {
    if (!request.organizationHeader) throw badRequest('the SVC-Organization header is required');
    if (!isUuid(request.organizationHeader)) throw badRequest(`SVC-Organization: ${request.organizationHeader} is not an organization id`);
    organizationId = request.organizationHeader;
    if (!belongsTo(caller, organizationId)) throw forbidden(`the API key may not act on organization ${organizationId}`);
    if (!(await organizationExists(services.store.db, organizationId))) throw notFound(`organization ${organizationId} not found`);
  } else if (operation.scope === 'dataset') {
    if (!request.datasetHeader) throw badRequest('the SVC-Dataset header is required');
    dataset = await resolveDataset(services.store.db, request.datasetHeader, caller);
    if (!belongsTo(caller, dataset.organization_id)) throw forbidden(`the API key may not use dataset ${request.datasetHeader}`);
    if (caller.kind === 'key' && caller.datasetIds.length > 0 && !caller.datasetIds.includes(dataset.id)) {
      throw forbidden(`the API key is limited to other datasets than ${request.datasetHeader}`);
    }
    organizationId = dataset.organization_id;
  }

  if (operation.role !== null && caller.role < operation.role) {
    throw forbidden(`${route} needs role ${roleNames[operation.role]}; the API key has role ${roleNames[caller.role]}`);
  }
  return { caller, organizationId, dataset };
}

async function authenticate(services: Services, header: string | undefined): Promise<Caller> {
  const key = header?.replace(/^Bearer\s+/i, '').trim();
  if (!key) throw unauthorized('send an API key in the Authorization header');
  const admin = services.config.adminApiKey;
  if (admin && sameSecret(key, admin)) return { kind: 'admin', role: 2 };
  return callerForKey(services.store.db, key);
}

function sameSecret(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}
