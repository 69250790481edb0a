// API keys: long random secrets shown once, stored only as hashes, with a role, dataset
// restrictions, route scopes, an expiry and default request parameters. A key belongs to an
// organization, and to a user when a user made it (or it was made for an API-only user).
import { createHash, randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import type * as T from '../../sdk/src/generated/types.gen.js';
import { operations } from '../../generated/handlers.js';
import { roleNames, type Caller, type Role } from '../auth/caller.js';
import { badRequest, forbidden, notFound, unauthorized } from '../errors.js';
import { timestamp } from '../format.js';
import { isUuid } from './ids.js';

const KEY_PREFIX = 'svc_';
const knownRoutes = new Set(Object.values(operations).map((op) => `${op.method.toUpperCase()} ${op.path}`));

interface ApiKeyRow {
  id: string;
  organization_id: string;
  user_id: string | null;
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

/** Deduplicated route scopes; 400 naming the ones that are no route of this API. */
export function validateScopes(field: string, scopes: readonly string[] | null | undefined): string[] {
  const unique = [...new Set(scopes ?? [])];
  const unknown = unique.filter((scope) => !knownRoutes.has(scope));
  if (unknown.length > 0) {
    throw badRequest(`${field}: ${unknown.join(', ')} is not a route of this API (write e.g. "GET /api/chunk_group/tracking_id/{tracking_id}")`);
  }
  return unique;
}

/**
 * A caller may not hand out routes it may not call itself: when its key or its membership is
 * limited to some routes, what it grants must be limited to a part of them (an empty list would allow all).
 */
export function checkScopeGrant(caller: Caller, field: string, granted: readonly string[]): void {
  if (caller.kind !== 'key') return;
  for (const [own, whose] of [
    [caller.scopes, "the API key's"],
    [caller.memberScopes, "the key's user's"],
  ] as const) {
    if (own.length === 0) continue;
    if (granted.length === 0)
      throw forbidden(`${field}: ${whose} scopes are limited, so the granted scopes must be limited too (an empty list allows every route)`);
    const beyond = granted.filter((scope) => !own.includes(scope));
    if (beyond.length > 0) throw forbidden(`${field}: ${beyond.join(', ')} is beyond ${whose} own scopes`);
  }
}

/** Membership reaches every dataset of an organization, so a key limited to some may not hand it out. */
export function checkAllDatasets(caller: Caller, action: string): void {
  if (caller.kind === 'key' && caller.datasetIds.length > 0) {
    throw forbidden(`the API key is limited to some datasets, so it cannot ${action}, which gives access to every dataset`);
  }
}

export function checkRoleGrant(caller: Caller, field: string, role: Role): void {
  if (role > caller.role) {
    throw forbidden(`${field}: a caller with role ${roleNames[caller.role]} cannot grant role ${roleNames[role]}`);
  }
}

export interface NewApiKey {
  organizationId: string;
  userId: string | null;
  name: string;
  role: Role;
  datasetIds?: string[];
  scopes?: string[];
  defaultParams?: Record<string, unknown> | null;
  expiresAt?: Date | null;
}

/** Stores a new key and returns its value, the only time it exists outside the caller's hands. */
export async function insertApiKey(db: Knex, key: NewApiKey): Promise<string> {
  const value = KEY_PREFIX + randomBytes(32).toString('base64url');
  await db('api_keys').insert({
    organization_id: key.organizationId,
    user_id: key.userId,
    name: key.name,
    key_hash: hashKey(value),
    role: key.role,
    dataset_ids: key.datasetIds ?? [],
    scopes: key.scopes ?? [],
    default_params: key.defaultParams ? JSON.stringify(key.defaultParams) : null,
    expires_at: key.expiresAt ?? null,
  });
  return value;
}

export async function createApiKey(db: Knex, organizationId: string, caller: Caller, request: T.CreateApiKeyReqPayload): Promise<T.CreateApiKeyResponse> {
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
  if (caller.kind === 'key' && caller.datasetIds.length > 0) {
    const beyond = datasetIds.length === 0 ? ['every dataset'] : datasetIds.filter((id) => !caller.datasetIds.includes(id));
    if (beyond.length > 0) throw forbidden(`dataset_ids: the API key is limited to some datasets, so it cannot grant ${beyond.join(', ')}`);
  }
  const scopes = validateScopes('scopes', request.scopes);
  checkScopeGrant(caller, 'scopes', scopes);
  const expiresAt = parseExpiry(request.expires_at);

  const apiKey = await insertApiKey(db, {
    organizationId,
    // A user's key makes keys of that user; the administrator and organization keys make organization keys.
    userId: caller.kind === 'key' ? caller.userId : null,
    name: request.name,
    role,
    datasetIds,
    scopes,
    defaultParams: request.default_params ?? null,
    expiresAt,
  });
  return { api_key: apiKey };
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

export async function listApiKeys(db: Knex, organizationId: string, page: { cursor?: string | null; limit?: number | null }): Promise<T.ApiKeyRespBody[]> {
  if (page.cursor != null && !isUuid(page.cursor)) throw badRequest(`cursor: ${page.cursor} is not a key id`);
  const query = db<ApiKeyRow>('api_keys')
    .where({ organization_id: organizationId })
    .orderBy('id')
    .limit(page.limit ?? 100);
  if (page.cursor != null) query.where('id', '>', page.cursor);
  return (await query).map(apiKeyRecord);
}

/**
 * Deletes a key of the organization. A caller may delete only keys whose role is at most its own
 * (403), and only keys of this organization (404 otherwise, as for unknown keys).
 */
export async function deleteOrganizationApiKey(db: Knex, organizationId: string, caller: Caller, keyId: string): Promise<void> {
  const row = await db<ApiKeyRow>('api_keys').where({ id: keyId, organization_id: organizationId }).first();
  if (!row) throw notFound(`API key ${keyId} not found in organization ${organizationId}`);
  if (row.role > caller.role) {
    throw forbidden(`API key ${keyId} has role ${roleNames[row.role]}, above the caller's ${roleNames[caller.role]}`);
  }
  await db('api_keys').where({ id: keyId }).del();
}

/** The keys of the caller's user, in organizations that are not deleted; 400 for a key of no user. */
export async function listUserApiKeys(db: Knex, caller: Caller): Promise<T.ApiKeyRespBody[]> {
  if (!caller.userId) throw badRequest('this API key is an organization key that belongs to no user, so it has no user keys');
  const rows = await db<ApiKeyRow>('api_keys')
    .join('organizations', 'organizations.id', 'api_keys.organization_id')
    .where({ 'api_keys.user_id': caller.userId, 'organizations.deleted': 0 })
    .orderBy('api_keys.id')
    .select('api_keys.*');
  return rows.map(apiKeyRecord);
}

/** Deletes one of the caller's user's own keys; any other id is 404 (every id, for a key of no user). */
export async function deleteUserApiKey(db: Knex, caller: Caller, keyId: string): Promise<void> {
  if (!caller.userId) throw notFound(`API key ${keyId} is not one of your keys: this organization key belongs to no user`);
  const deleted = await db('api_keys').where({ id: keyId, user_id: caller.userId }).del();
  if (deleted === 0) throw notFound(`API key ${keyId} is not one of your keys`);
}

/** The caller a key stands for; throws 401 for an unknown or expired key, or one of a deleted organization. */
export async function callerForKey(db: Knex, key: string): Promise<Extract<Caller, { kind: 'key' }>> {
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
    memberScopes: [],
    defaultParams: row.default_params,
    userId: row.user_id,
    expiresAt: row.expires_at ?? null,
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
