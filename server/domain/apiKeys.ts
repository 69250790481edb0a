// API keys: long random secrets shown once, stored only as hashes, with a role, dataset
// restrictions, route scopes, an expiry and default request parameters.
import { createHash, randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import type * as T from '../../generated/client/types.gen.js';
import { operations } from '../../generated/handlers.js';
import { roleNames, type Caller, type Role } from '../auth/caller.js';
import { badRequest, forbidden, unauthorized } from '../errors.js';
import { timestamp } from '../format.js';
import { isUuid } from './ids.js';

const KEY_PREFIX = 'svc_';
const knownRoutes = new Set(Object.values(operations).map((op) => `${op.method.toUpperCase()} ${op.path}`));

interface ApiKeyRow {
  id: string;
  organization_id: string;
  name: string;
  role: Role;
  dataset_ids: string[] | null;
  scopes: string[] | null;
  default_params: Record<string, unknown> | null;
  expires_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

/** Keys carry 256 random bits, so a fast hash is enough to keep them unrecoverable from the store. */
export function hashKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

export async function createApiKey(
  db: Knex,
  organizationId: string,
  caller: Caller,
  request: T.CreateApiKeyReqPayload,
): Promise<T.CreateApiKeyResponse> {
  const role = request.role as Role;
  if (role > caller.role) {
    throw forbidden(`a key with role ${roleNames[caller.role]} cannot create a key with role ${roleNames[role]}`);
  }
  const datasetIds = [...new Set(request.dataset_ids ?? [])];
  if (datasetIds.length > 0) {
    const found = await db('datasets').where({ organization_id: organizationId, deleted: 0 }).whereIn('id', datasetIds).pluck('id');
    const missing = datasetIds.filter((id) => !found.includes(id));
    if (missing.length > 0) throw badRequest(`dataset_ids: ${missing.join(', ')} not found in this organization`);
  }
  const scopes = [...new Set(request.scopes ?? [])];
  const unknown = scopes.filter((scope) => !knownRoutes.has(scope));
  if (unknown.length > 0) throw badRequest(`scopes: ${unknown.join(', ')} is not a route of this API (write e.g. "GET /api/chunk_group/tracking_id/{tracking_id}")`);
  const expiresAt = parseExpiry(request.expires_at);

  const key = KEY_PREFIX + randomBytes(32).toString('base64url');
  await db('api_keys').insert({
    organization_id: organizationId,
    name: request.name,
    key_hash: hashKey(key),
    role,
    dataset_ids: datasetIds,
    scopes,
    default_params: request.default_params ? JSON.stringify(request.default_params) : null,
    expires_at: expiresAt,
  });
  return { api_key: key };
}

function parseExpiry(value: string | null | undefined): Date | null {
  if (value == null) return null;
  // A time without a zone is taken as UTC, as the interface says.
  const hasZone = /(Z|[+-]\d{2}:?\d{2})$/i.test(value.trim());
  const date = new Date(hasZone ? value : `${value.trim().replace(' ', 'T')}Z`);
  if (Number.isNaN(date.getTime())) throw badRequest(`expires_at: ${value} is not an ISO 8601 date and time`);
  if (date.getTime() <= Date.now()) throw badRequest(`expires_at: ${value} is in the past`);
  return date;
}

export async function listApiKeys(
  db: Knex,
  organizationId: string,
  page: { cursor?: string | null; limit?: number | null },
): Promise<T.ApiKeyRespBody[]> {
  if (page.cursor != null && !isUuid(page.cursor)) throw badRequest(`cursor: ${page.cursor} is not a key id`);
  const query = db<ApiKeyRow>('api_keys').where({ organization_id: organizationId }).orderBy('id').limit(page.limit ?? 100);
  if (page.cursor != null) query.where('id', '>', page.cursor);
  return (await query).map(apiKeyRecord);
}

/** The caller a key stands for; throws 401 for an unknown or expired key. */
export async function callerForKey(db: Knex, key: string): Promise<Caller> {
  const row = await db<ApiKeyRow>('api_keys')
    .join('organizations', 'organizations.id', 'api_keys.organization_id')
    .where({ key_hash: hashKey(key), 'organizations.deleted': 0 })
    .first('api_keys.*');
  if (!row) throw unauthorized('the API key is not valid');
  if (row.expires_at && row.expires_at.getTime() <= Date.now()) throw unauthorized('the API key has expired');
  return {
    kind: 'key',
    keyId: row.id,
    organizationId: row.organization_id,
    role: row.role,
    datasetIds: row.dataset_ids ?? [],
    scopes: row.scopes ?? [],
    defaultParams: row.default_params,
  };
}

function apiKeyRecord(row: ApiKeyRow): T.ApiKeyRespBody {
  return {
    id: row.id,
    name: row.name,
    organization_id: row.organization_id,
    dataset_ids: row.dataset_ids ?? [],
    role: row.role,
    created_at: timestamp(row.created_at),
    updated_at: timestamp(row.updated_at),
  };
}
